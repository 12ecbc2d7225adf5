#!/usr/bin/env bash
# round 12 (lab): the skewed passes' halo copies of LAB_CE bytes or more through the copy engine (cudaMemcpy3DAsync) instead of the copy kernel
set -u
o=$OUT/r12; mkdir -p $o
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $o/times.txt; }
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu:$PWD/.deps/root/lib/x86_64-linux-gnu
(cd lab/ce && ln -sfn ../../.deps .deps && bash bench/device-build.sh build-ce pyrgrid_cli bench_stages bench_heat test_cuda_pyramid > $o/build.txt 2>&1; echo "rc $?" >> $o/build.txt); tail -1 $o/build.txt
B=lab/ce/build-ce
st built
export PYRGRID_WISDOM=$o/wisdom
$B/pyrgrid calibrate --backend cuda --precision float --dims 3 --scheme heat > $o/cal.txt 2>&1
st calibrated
for r in 1 2; do
  for v in kern ce1m ce8m; do
    E=""; [ $v = ce1m ] && E="LAB_CE=1048576"; [ $v = ce8m ] && E="LAB_CE=8388608"
    env $E PYR_TIMELINE=1 timeout 60 $B/bench/bench_stages 3 1025 float skewed 48 1024 3 > $o/s3_${v}_$r.txt 2>&1
    env $E timeout 90 $B/bench/bench_heat --cases 3f --steps 384 --decomp skewed --heights3 48 --fractions 4 --methods pyramid --slots 3 > $o/heat_${v}_$r.txt 2>&1
    st "$v $r"
  done
done
LAB_CE=1048576 timeout 120 $B/tests/test_cuda_pyramid 40 505 cuda > $o/pyr_ce.txt 2>&1; echo "rc $?" >> $o/pyr_ce.txt; tail -2 $o/pyr_ce.txt
for v in kern ce1m ce8m; do echo "$v: $(grep -E '^ +48 +3 +' $o/s3_${v}_1.txt | awk '{print $10}') $(grep -E '^ +48 +3 +' $o/s3_${v}_2.txt | awk '{print $10}') ms | $(grep -h 'height 48' $o/heat_${v}_*.txt | awk '{print $(NF-2)}' | tr '\n' ' ')"; grep -o "comp busy [0-9.]* ms\|copy busy [0-9.]* ms\|up busy [0-9.]* ms" $o/s3_${v}_1.txt | paste - - -; done
cd $OUT && tar czf r12.tgz r12 && rm -rf r12
