#!/usr/bin/env bash
# round 11: 2D float skewed windows and in core with the fused kernel's steps K = 7, 9, 11, 13 (calibrated per K)
set -u
o=$OUT/r11; mkdir -p $o
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $o/times.txt; }
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu:$PWD/.deps/root/lib/x86_64-linux-gnu
bash bench/device-build.sh build-dev pyrgrid_cli bench_stages bench_heat > $o/build.txt 2>&1; echo "rc $?" >> $o/build.txt; tail -1 $o/build.txt
st built
for k in 11 9 7 13; do
  PYRGRID_WISDOM=$o/w$k build-dev/pyrgrid calibrate --backend cuda --precision float --dims 2 --scheme heat --kernel fused:$k > $o/cal_$k.txt 2>&1
done
st calibrated
for r in 1 2; do
  for k in 11 9 7 13; do
    PYRGRID_WISDOM=$o/w$k timeout 60 build-dev/bench/bench_stages 2 32769 float skewed 256 1024 3 > $o/stages_k${k}_$r.txt 2>&1
    PYRGRID_WISDOM=$o/w$k timeout 90 build-dev/bench/bench_heat --cases 2f --steps 1000 --heights 256 --fractions 4 --methods naive,pyramid > $o/heat_k${k}_$r.txt 2>&1
    st "k$k $r"
  done
done
for k in 11 9 7 13; do echo "K=$k: $(grep -E '^ +256 +3 +' $o/stages_k${k}_1.txt | awk '{print $10}') $(grep -E '^ +256 +3 +' $o/stages_k${k}_2.txt | awk '{print $10}') ms | $(grep -hE 'naive|height 256' $o/heat_k${k}_1.txt $o/heat_k${k}_2.txt | awk '{print $(NF-2)}' | tr '\n' ' ')"; grep -h "kernel" $o/heat_k${k}_1.txt | head -2; done
cd $OUT && tar czf r11.tgz r11 && rm -rf r11
