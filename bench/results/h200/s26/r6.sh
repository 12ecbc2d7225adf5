#!/usr/bin/env bash
# round 6: HEAD 6ce2ebe (the kernel-question builder shared): GPU tests, one more sweep round
set -u
o=$OUT/r6; mkdir -p $o
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $o/times.txt; }
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu:$PWD/.deps/root/lib/x86_64-linux-gnu
bash bench/device-build.sh build-dev > $o/build.txt 2>&1; echo "rc $?" >> $o/build.txt; tail -1 $o/build.txt
st built
timeout 150 ctest --test-dir build-dev -L gpu > $o/ctest_gpu.txt 2>&1; grep -E "tests passed|Failed" $o/ctest_gpu.txt | head -3
grep -h "saving a skewed" build-dev/Testing/Temporary/LastTest.log | head -1
st ctest
SWEEP_REPEAT=2 timeout 200 bash bench/sweep_gpu.sh build-dev $o/round1 > $o/round1.log 2>&1; echo "rc $?" >> $o/round1.log
grep -iE "heights: emax" $o/round1.log | sort -u
grep -h "pass of cubes" $o/round1/calibrate_cuda.txt | head -2
st sweep
cd $OUT && tar czf r6.tgz r6 && rm -rf r6
