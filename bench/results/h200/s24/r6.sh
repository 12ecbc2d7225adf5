#!/usr/bin/env bash
# round 6 (lab): cube passes whose part-row uploads the SMs read straight from the registered grid (LAB_ZC=blocks)
set -u
o=$OUT/r6; mkdir -p $o
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $o/times.txt; }
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu:$PWD/.deps/root/lib/x86_64-linux-gnu
(cd lab/zc && ln -sfn ../../.deps .deps && bash bench/device-build.sh build-zc pyrgrid_cli bench_stages bench_heat test_cuda_pyramid > $o/build.txt 2>&1; echo "rc $?" >> $o/build.txt)
grep -h "^rc" $o/build*.txt
st built
B=lab/zc/build-zc
export PYRGRID_WISDOM=$o/wisdom
$B/pyrgrid calibrate --backend cuda --precision float --dims 3 --scheme heat > $o/cal.txt 2>&1
st calibrated
for r in 1 2; do
  PYR_TIMELINE=1 timeout 60 $B/bench/bench_stages 3 1025 float blocks 8,32,48 1024 3 > $o/stages_head_$r.txt 2>&1; st "head $r"
  for zc in 132 528; do
    LAB_ZC=$zc PYR_TIMELINE=1 timeout 60 $B/bench/bench_stages 3 1025 float blocks 8,32,48 1024 3 > $o/stages_zc${zc}_$r.txt 2>&1; st "zc $zc $r"
  done
done
LAB_ZC=528 timeout 120 $B/tests/test_cuda_pyramid 40 503 cuda > $o/pyr_zc.txt 2>&1; echo "rc $?" >> $o/pyr_zc.txt; tail -2 $o/pyr_zc.txt
LAB_ZC=528 timeout 100 $B/bench/bench_heat --cases 3f --steps 192 --decomp blocks --heights3 32,48 --fractions 4 --methods pyramid > $o/heat_zc.txt 2>&1
timeout 100 $B/bench/bench_heat --cases 3f --steps 192 --decomp blocks --heights3 32,48 --fractions 4 --methods pyramid > $o/heat_head.txt 2>&1
st tested
for v in head_1 zc132_1 zc528_1; do echo $v; grep -E "^ +[0-9]+ +3 +" $o/stages_$v.txt | cut -c1-140; grep -o "up busy [0-9.]* ms" $o/stages_$v.txt; done
grep -h "height" $o/heat_*.txt
cd $OUT && tar czf r6.tgz r6 && rm -rf r6
