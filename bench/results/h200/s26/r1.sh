#!/usr/bin/env bash
# round 1: in-kernel halo saves (kernels.h saves) against HEAD 31b4b39 (lab/old), same machine
set -u
o=$OUT/r1; mkdir -p $o
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $o/times.txt; }
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu:$PWD/.deps/root/lib/x86_64-linux-gnu
(bash bench/device-build.sh build-dev > $o/build_new.txt 2>&1; echo "rc $?" >> $o/build_new.txt) &
sleep 20
(cd lab/old && ln -sfn ../../.deps .deps && bash bench/device-build.sh build-old pyrgrid_cli bench_stages bench_heat > $o/build_old.txt 2>&1; echo "rc $?" >> $o/build_old.txt) &
wait
grep -h "^rc" $o/build_*.txt
st built
B=build-dev; OB=lab/old/build-old
timeout 150 ctest --test-dir $B -L gpu > $o/ctest_gpu.txt 2>&1; grep -E "tests passed|Failed|Skipped" $o/ctest_gpu.txt | head
grep -h "saving a skewed" $B/Testing/Temporary/LastTest.log | head -2
st ctest
export PYRGRID_WISDOM=$o/wisdom
timeout 60 $B/pyrgrid calibrate --backend cuda --precision all --dims 3 --scheme heat > $o/cal.txt 2>&1
st calibrated
for r in 1 2; do
  for v in old new; do
    X=$B; [ $v = old ] && X=$OB
    PYR_TIMELINE=1 timeout 60 $X/bench/bench_stages 3 1025 float skewed 48 1024 3 > $o/s3f48_${v}_$r.txt 2>&1
    PYR_TIMELINE=1 timeout 60 $X/bench/bench_stages 3 1025 float skewed 64 1024 2 > $o/s3f64_${v}_$r.txt 2>&1
    timeout 60 $X/bench/bench_stages 3 769 double skewed 32 1024 3 > $o/s3d32_${v}_$r.txt 2>&1
    st "stages $v $r"
  done
done
for v in old new; do
  X=$B; [ $v = old ] && X=$OB
  timeout 100 $X/bench/bench_heat --cases 3f --steps 384 --decomp skewed --heights3 48 --fractions 4 --methods naive,pyramid > $o/heat3f_$v.txt 2>&1
  st "heat $v"
done
for f in s3f48 s3f64 s3d32; do for v in old new; do for r in 1 2; do echo "$f $v $r: $(grep -E '^ +[0-9]+ +[23] +' $o/${f}_${v}_$r.txt | cut -c1-96) $(grep -E '^ +[0-9]+ +[23] +' $o/${f}_${v}_$r.txt | cut -c150-)"; done; done; done
grep -h "saving" $o/s3f48_new_1.txt
for v in old new; do echo "== heat $v"; grep -iE "steady|Gcell" $o/heat3f_$v.txt | tail -6; done
cd $OUT && tar czf r1.tgz r1 && rm -rf r1
