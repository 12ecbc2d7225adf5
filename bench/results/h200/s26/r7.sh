#!/usr/bin/env bash
# round 7: the halo ring (kernels read their window's low planes from the store) against HEAD 7eef928 (saves only), same machine
set -u
o=$OUT/r7; mkdir -p $o
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $o/times.txt; }
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu:$PWD/.deps/root/lib/x86_64-linux-gnu
(bash bench/device-build.sh build-dev > $o/build_new.txt 2>&1; echo "rc $?" >> $o/build_new.txt) &
sleep 20
(cd lab/old && ln -sfn ../../.deps .deps && bash bench/device-build.sh build-old pyrgrid_cli bench_stages bench_heat > $o/build_old.txt 2>&1; echo "rc $?" >> $o/build_old.txt) &
wait
grep -h "^rc" $o/build_*.txt
st built
B=build-dev; OB=lab/old/build-old
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 30 $B/tests/test_cuda_small > $o/small.txt 2>&1; echo "rc $?" >> $o/small.txt; tail -2 $o/small.txt
timeout 60 $B/tests/test_cuda_pyramid 200 241 cuda > $o/pyr241.txt 2>&1; tail -2 $o/pyr241.txt
st quick
export PYRGRID_WISDOM=$o/wisdom
timeout 60 $B/pyrgrid calibrate --backend cuda --precision float --dims 3 --scheme heat > $o/cal.txt 2>&1
for r in 1 2; do
  for v in old new; do
    X=$B; [ $v = old ] && X=$OB
    PYR_TIMELINE=1 timeout 90 $X/bench/bench_stages 3 1025 float skewed 40,48,56,64 1024 3 > $o/s3_${v}_$r.txt 2>&1
    st "stages $v $r"
  done
done
for v in old new; do
  X=$B; [ $v = old ] && X=$OB
  timeout 100 $X/bench/bench_heat --cases 3f --steps 384 --decomp skewed --heights3 48 --fractions 4 --methods naive,pyramid > $o/heat3f_$v.txt 2>&1
done
st heat
for v in old new; do for r in 1 2; do echo "== $v $r"; grep -E '^ +[0-9]+ +3 +' $o/s3_${v}_$r.txt | cut -c1-96; done; grep -E "naive in-core|pyramid 1/4" $o/heat3f_$v.txt; done
grep -h "filling" $o/s3_new_1.txt | head -1
timeout 150 ctest --test-dir $B -L gpu > $o/ctest_gpu.txt 2>&1; grep -E "tests passed|Failed" $o/ctest_gpu.txt | head -3
grep -h "saving a skewed" $B/Testing/Temporary/LastTest.log | head -1
st ctest
timeout 90 $CS --tool memcheck --error-exitcode 9 $B/tests/test_cuda_small > $o/memcheck_small.txt 2>&1; echo "rc $?" >> $o/memcheck_small.txt; tail -2 $o/memcheck_small.txt
st memcheck
cd $OUT && tar czf r7.tgz r7 && rm -rf r7
