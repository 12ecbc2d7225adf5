#!/usr/bin/env bash
# session 25: final code: GPU tests, the double calibration's pass, two sweep rounds
o=$OUT/r6; mkdir -p $o
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu:$PWD/.deps/root/lib/x86_64-linux-gnu
(time bash bench/device-build.sh build-dev) > $o/build.txt 2>&1; nvidia-smi -L >> $o/build.txt; tail -3 $o/build.txt
timeout 240 ctest --test-dir build-dev -L gpu --output-on-failure -j2 > $o/ctest_gpu.txt 2>&1; tail -4 $o/ctest_gpu.txt
timeout 60 build-dev/tests/test_cuda_pyramid 40 701 cuda > $o/pyramid.txt 2>&1; echo "pyramid rc $?" >> $o/pyramid.txt; tail -2 $o/pyramid.txt
PYRGRID_WISDOM=$o/wd timeout 60 build-dev/pyrgrid calibrate --backend cuda --precision double --dims 3 --scheme heat > $o/cal_double.txt 2>&1; tail -3 $o/cal_double.txt
for r in 1 2; do SWEEP_REPEAT=2 timeout 150 bash bench/sweep_gpu.sh build-dev $o/round$r > $o/round$r.log 2>&1; grep -A6 "== summary" $o/round$r.log; done
cd $OUT && tar czf r6.tgz r6 && rm -rf r6
