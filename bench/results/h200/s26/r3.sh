#!/usr/bin/env bash
# round 3: HEAD (in-kernel saves): the sanitizers on test_cuda_small, then issue 20's figures in one run each:
# heat in core (steady and end to end) at the widths and the peer-shaped grids, out of core at a quarter (2D, 3D)
set -u
o=$OUT/r3; mkdir -p $o
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $o/times.txt; }
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu:$PWD/.deps/root/lib/x86_64-linux-gnu
bash bench/device-build.sh build-dev > $o/build.txt 2>&1; echo "rc $?" >> $o/build.txt; tail -1 $o/build.txt
st built
B=build-dev
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 30 $B/tests/test_cuda_small > $o/small.txt 2>&1; echo "rc $?" >> $o/small.txt; tail -2 $o/small.txt
timeout 120 $CS --tool memcheck --error-exitcode 9 $B/tests/test_cuda_small > $o/memcheck_small.txt 2>&1; echo "rc $?" >> $o/memcheck_small.txt; tail -3 $o/memcheck_small.txt
timeout 150 $CS --tool racecheck --error-exitcode 9 $B/tests/test_cuda_small > $o/racecheck_small.txt 2>&1; echo "rc $?" >> $o/racecheck_small.txt; tail -3 $o/racecheck_small.txt
st sanitizers
export PYRGRID_WISDOM=$o/wisdom
timeout 60 $B/pyrgrid calibrate --backend cuda --precision all --dims 2,3 --scheme heat > $o/cal.txt 2>&1
st calibrated
G=f:4096x16384,f:8192x16384,f:16384x16384,f:32768x16384,f:15708x16384,f:31416x16384,d:4096x16384,d:8192x16384,d:16384x16384,d:32768x16384,d:15312x16384,d:30624x16384,f:768x352x2560,f:640x640x640,f:1024x1024x1024,d:768x352x2560,d:640x640x640,d:1024x1024x1024
timeout 200 $B/bench/bench_heat --methods naive --steps 400 --grids "$G" > $o/incore.txt 2>&1
st incore
grep -E "naive" $o/incore.txt | head -20
timeout 100 $B/bench/bench_heat --cases 3f --steps 384 --decomp skewed --heights3 48 --fractions 4 --methods naive,pyramid > $o/ooc3f.txt 2>&1
timeout 100 $B/bench/bench_heat --cases 2f --steps 1000 --heights 256 --fractions 4 --methods naive,pyramid > $o/ooc2f.txt 2>&1
st ooc
grep -E "naive in-core|pyramid 1/4" $o/ooc3f.txt $o/ooc2f.txt
cd $OUT && tar czf r3.tgz r3 && rm -rf r3
