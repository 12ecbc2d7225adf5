#!/usr/bin/env bash
# session 25: HEAD's code: the GPU tests, a 3D calibration of every scheme and precision, one sweep round
o=$OUT/r8; mkdir -p $o
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu:$PWD/.deps/root/lib/x86_64-linux-gnu
(time bash bench/device-build.sh build-dev) > $o/build.txt 2>&1; nvidia-smi -L >> $o/build.txt; git log --oneline -1 >> $o/build.txt; tail -4 $o/build.txt
timeout 240 ctest --test-dir build-dev -L gpu --output-on-failure -j2 > $o/ctest_gpu.txt 2>&1; tail -4 $o/ctest_gpu.txt
PYRGRID_WISDOM=$o/wd timeout 90 build-dev/pyrgrid calibrate --backend cuda --dims 3 > $o/cal3d.txt 2>&1; echo "calibrate rc $?" >> $o/cal3d.txt; grep -E "pass of|beside|took|rc" $o/cal3d.txt
SWEEP_REPEAT=2 timeout 150 bash bench/sweep_gpu.sh build-dev $o/round1 > $o/round1.log 2>&1; grep -A6 "== summary" $o/round1.log
cd $OUT && tar czf r8.tgz r8 && rm -rf r8
