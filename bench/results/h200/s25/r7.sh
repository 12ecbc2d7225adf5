#!/usr/bin/env bash
# session 25: three consecutive sweep rounds (each calibrating first) with the cube-pass fit
o=$OUT/r7; mkdir -p $o
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu:$PWD/.deps/root/lib/x86_64-linux-gnu
(time bash bench/device-build.sh build-dev pyrgrid_cli) > $o/build.txt 2>&1; nvidia-smi -L >> $o/build.txt
for r in 1 2; do SWEEP_REPEAT=2 timeout 170 bash bench/sweep_gpu.sh build-dev $o/round$r > $o/round$r.log 2>&1; done
cd $OUT && tar czf r7.tgz r7 && rm -rf r7
