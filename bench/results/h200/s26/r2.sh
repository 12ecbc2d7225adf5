#!/usr/bin/env bash
# round 2: in-kernel halo saves, float only (double keeps the copy); tests, memcheck, old/new alternated
set -u
o=$OUT/r2; mkdir -p $o
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
timeout 150 ctest --test-dir $B -L gpu > $o/ctest_gpu.txt 2>&1; grep -E "tests passed|Failed" $o/ctest_gpu.txt | head
grep -h "saving a skewed" $B/Testing/Temporary/LastTest.log | head -2
st ctest
timeout 100 $B/tests/test_cuda_property 300 223 > $o/prop223.txt 2>&1; tail -3 $o/prop223.txt
timeout 60 $B/tests/test_cuda_pyramid 200 227 cuda > $o/pyr227.txt 2>&1; tail -2 $o/pyr227.txt
st tests
timeout 150 $CS --tool memcheck --error-exitcode 9 $B/tests/test_cuda_property 24 229 > $o/memcheck_prop229.txt 2>&1; echo "rc $?" >> $o/memcheck_prop229.txt; tail -4 $o/memcheck_prop229.txt
timeout 100 $CS --tool memcheck --error-exitcode 9 $B/tests/test_cuda_pyramid 20 231 cuda > $o/memcheck_pyr231.txt 2>&1; echo "rc $?" >> $o/memcheck_pyr231.txt; tail -3 $o/memcheck_pyr231.txt
st memcheck
export PYRGRID_WISDOM=$o/wisdom
timeout 60 $B/pyrgrid calibrate --backend cuda --precision float --dims 3 --scheme heat > $o/cal.txt 2>&1
st calibrated
for r in 1 2; do
  for v in old new; do
    X=$B; [ $v = old ] && X=$OB
    timeout 100 $X/bench/bench_heat --cases 3f --steps 384 --decomp skewed --heights3 48,64 --fractions 4 --methods naive,pyramid > $o/heat3f_${v}_$r.txt 2>&1
    PYR_TIMELINE=1 timeout 60 $X/bench/bench_stages 3 1025 float skewed 48 1024 3 > $o/s3f48_${v}_$r.txt 2>&1
    st "$v $r"
  done
done
for v in old new; do for r in 1 2; do echo "== $v $r"; grep -E "naive in-core|pyramid 1/4" $o/heat3f_${v}_$r.txt; echo "stages: $(grep -E '^ +[0-9]+ +[23] +' $o/s3f48_${v}_$r.txt | cut -c1-96)"; done; done
cd $OUT && tar czf r2.tgz r2 && rm -rf r2
