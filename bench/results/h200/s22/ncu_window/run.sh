#!/usr/bin/env bash
# device round 6: ncu of the 3D window kernels against the in-core one
set -u
cd "$(dirname "$0")/.."
o=$OUT/r6; mkdir -p $o
( bash bench/device-build.sh build-dev pyrgrid_cli bench_stages bench_heat ) > $o/build.txt 2>&1 || { tail -40 $o/build.txt; exit 1; }
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu:$PWD/.deps/root/lib/x86_64-linux-gnu
export PYRGRID_WISDOM=$PWD/build-dev/wisdom-s22
build-dev/pyrgrid calibrate --backend cuda --precision float --dims 3 --scheme heat > $o/calibrate.txt 2>&1
which ncu > $o/which.txt 2>&1 || ls /usr/local/cuda/bin >> $o/which.txt
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
S="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats"
timeout 200 $NCU --kernel-name regex:k_fused3d --launch-skip 300 --launch-count 4 $S build-dev/bench/bench_stages 3 1025 float skewed 48 1024 3 2 > $o/ncu_window.txt 2>&1
timeout 150 $NCU --kernel-name regex:k_fused3d --launch-skip 3 --launch-count 1 $S build-dev/bench/bench_heat --methods naive --steps 24 --grids f:1024x1024x1024 > $o/ncu_incore.txt 2>&1
grep -E "k_fused3d|Duration|Compute \(SM\) Throughput|Memory Throughput|Grid Size|Block Size|Waves Per SM|Achieved Occupancy|Theoretical Occupancy|Registers|Dynamic Shared|Eligible Warps|No Eligible|Warp Cycles Per Issued" $o/ncu_*.txt | head -80
