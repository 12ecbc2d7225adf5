#!/usr/bin/env bash
# round 2: (a) the 2D flow against HEAD in one run; (b) where the blocks/cubes model misses, by grid size
set -u
o=$OUT/r2; mkdir -p $o
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $o/times.txt; }
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu:$PWD/.deps/root/lib/x86_64-linux-gnu
st build
(bash bench/device-build.sh build-dev pyrgrid_cli bench_heat bench_stages > $o/build.txt 2>&1; echo "rc $?" >> $o/build.txt) &
(cd lab/flow && ln -sfn ../../.deps .deps && bash bench/device-build.sh build-flow bench_heat > $o/build_flow.txt 2>&1; echo "rc $?" >> $o/build_flow.txt) &
wait
tail -1 $o/build.txt $o/build_flow.txt
st built
export PYRGRID_WISDOM=$o/wisdom
build-dev/pyrgrid calibrate --backend cuda --precision float --dims 2,3 --scheme heat > $o/cal.txt 2>&1
st calibrated
G2=f:4096x16384,f:32768x16384,f:15708x16384,d:4096x16384,d:32768x16384,d:15312x16384
for r in 1 2; do
  for v in old flow; do
    B=build-dev; [ $v = flow ] && B=lab/flow/build-flow
    timeout 60 $B/bench/bench_heat --methods naive --steps 400 --grids $G2 > $o/incore2d_${v}_$r.txt 2>&1
    timeout 60 $B/bench/bench_heat --cases 2f --steps 1000 --heights 256 --fractions 4 --methods naive,pyramid > $o/ooc2d_${v}_$r.txt 2>&1
    st "$v $r"
  done
done
S=build-dev/bench/bench_stages
for a in "3 1025 float blocks 8,32 1024 3" "3 769 float blocks 8,32 432 3" "3 513 float blocks 8,32 128 3" \
         "2 32769 float blocks 16,64 512 3" "2 16385 float blocks 16,64 128 3" "2 8193 float blocks 16,64 32 3"; do
  n=$(echo $a | tr ' ,' '__')
  PYR_TIMELINE=1 timeout 90 $S $a > $o/stages_$n.txt 2>&1
  st "stages $a"
done
cd $OUT && tar czf r2.tgz r2 && rm -rf r2
