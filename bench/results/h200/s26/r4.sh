#!/usr/bin/env bash
# round 4: one sweep round at HEAD (calibrates first)
set -u
o=$OUT/r4; mkdir -p $o
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu:$PWD/.deps/root/lib/x86_64-linux-gnu
bash bench/device-build.sh build-dev > $o/build.txt 2>&1
SWEEP_REPEAT=2 timeout 250 bash bench/sweep_gpu.sh build-dev $o/round1 > $o/round1.log 2>&1; echo "rc $?" >> $o/round1.log
grep -iE "emax|ebar|auto/best" $o/round1.log | tail -12
cd $OUT && tar czf r4.tgz r4 && rm -rf r4
