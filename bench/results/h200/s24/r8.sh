#!/usr/bin/env bash
# round 8 (lab, timing only: wrong results): skewed passes without the halo fills / saves, the bound on what reading the store in the kernel would give
set -u
o=$OUT/r8; mkdir -p $o
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $o/times.txt; }
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu:$PWD/.deps/root/lib/x86_64-linux-gnu
(cd lab/nf && ln -sfn ../../.deps .deps && bash bench/device-build.sh build-nf pyrgrid_cli bench_stages > $o/build.txt 2>&1; echo "rc $?" >> $o/build.txt)
grep -h "^rc" $o/build*.txt
st built
B=lab/nf/build-nf
export PYRGRID_WISDOM=$o/wisdom
$B/pyrgrid calibrate --backend cuda --precision float --dims 2,3 --scheme heat > $o/cal.txt 2>&1
st calibrated
for r in 1 2; do
  for v in head nofill nosave none; do
    E=""; [ $v = nofill ] && E="LAB_NOFILL=1"; [ $v = nosave ] && E="LAB_NOSAVE=1"; [ $v = none ] && E="LAB_NOFILL=1 LAB_NOSAVE=1"
    env $E PYR_TIMELINE=1 timeout 60 $B/bench/bench_stages 3 1025 float skewed 48 1024 3 > $o/s3_${v}_$r.txt 2>&1
    env $E PYR_TIMELINE=1 timeout 60 $B/bench/bench_stages 2 32769 float skewed 256 1024 3 > $o/s2_${v}_$r.txt 2>&1
    st "$v $r"
  done
done
for d in 3 2; do for v in head nofill nosave none; do echo "$d $v: $(grep -E '^ +[0-9]+ +3 +' $o/s${d}_${v}_1.txt | cut -c1-100) | $(grep -E '^ +[0-9]+ +3 +' $o/s${d}_${v}_2.txt | cut -c60-100)"; grep -o "comp busy [0-9.]* ms\|copy busy [0-9.]* ms" $o/s${d}_${v}_1.txt | paste - -; done; done
cd $OUT && tar czf r8.tgz r8 && rm -rf r8
