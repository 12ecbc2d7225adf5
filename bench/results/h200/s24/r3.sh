#!/usr/bin/env bash
# round 3: why the one-wave 2D flow lost: ncu of one in-core launch (HEAD / flow), and a flow of four waves
set -u
o=$OUT/r3; mkdir -p $o
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $o/times.txt; }
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu:$PWD/.deps/root/lib/x86_64-linux-gnu
st build
(bash bench/device-build.sh build-dev bench_heat > $o/build.txt 2>&1; echo "rc $?" >> $o/build.txt) &
for v in flow flow4; do
(cd lab/$v && ln -sfn ../../.deps .deps && bash bench/device-build.sh build-$v bench_heat > $o/build_$v.txt 2>&1; echo "rc $?" >> $o/build_$v.txt) &
done
wait
grep -h "^rc" $o/build*.txt
st built
G2=f:4096x16384,f:32768x16384,f:15708x16384,d:4096x16384,d:32768x16384,d:15312x16384
for r in 1 2; do
  for v in old flow flow4; do
    B=build-dev; [ $v != old ] && B=lab/$v/build-$v
    timeout 60 $B/bench/bench_heat --methods naive --steps 400 --grids $G2 > $o/incore2d_${v}_$r.txt 2>&1
    timeout 60 $B/bench/bench_heat --cases 2f --steps 1000 --heights 256 --fractions 4 --methods naive,pyramid > $o/ooc2d_${v}_$r.txt 2>&1
    st "$v $r"
  done
done
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
S="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --metrics sm__cycles_active.min,sm__cycles_active.max,sm__cycles_active.avg,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum"
for v in old flow; do
  B=build-dev; [ $v != old ] && B=lab/$v/build-$v
  timeout 120 $NCU --kernel-name regex:k_fused2d --launch-skip 5 --launch-count 1 $S $B/bench/bench_heat --methods naive --steps 88 --grids f:32768x16384 > $o/ncu_incore_$v.txt 2>&1
  st "ncu $v"
done
cd $OUT && tar czf r3.tgz r3 && rm -rf r3
