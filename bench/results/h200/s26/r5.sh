#!/usr/bin/env bash
# round 5: where the in-kernel saves lose at h64 on three slots (r2: 399 -> 368): passes old/new at h40..h64, three slots, timelines
set -u
o=$OUT/r5; mkdir -p $o
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $o/times.txt; }
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu:$PWD/.deps/root/lib/x86_64-linux-gnu
(bash bench/device-build.sh build-dev pyrgrid_cli bench_stages > $o/build_new.txt 2>&1; echo "rc $?" >> $o/build_new.txt) &
sleep 20
(cd lab/old && ln -sfn ../../.deps .deps && bash bench/device-build.sh build-old pyrgrid_cli bench_stages > $o/build_old.txt 2>&1; echo "rc $?" >> $o/build_old.txt) &
wait
grep -h "^rc" $o/build_*.txt
st built
B=build-dev; OB=lab/old/build-old
export PYRGRID_WISDOM=$o/wisdom
timeout 60 $B/pyrgrid calibrate --backend cuda --precision float --dims 3 --scheme heat > $o/cal.txt 2>&1
st calibrated
for r in 1 2; do
  for v in old new; do
    X=$B; [ $v = old ] && X=$OB
    PYR_TIMELINE=1 timeout 90 $X/bench/bench_stages 3 1025 float skewed 40,48,56,64 1024 3 > $o/s3_${v}_$r.txt 2>&1
    st "$v $r"
  done
done
for v in old new; do for r in 1 2; do echo "== $v $r"; grep -E '^ +[0-9]+ +3 +' $o/s3_${v}_$r.txt | cut -c1-96; grep -o "comp busy [0-9.]* ms\|copy busy [0-9.]* ms" $o/s3_${v}_$r.txt | paste - - | tr '\n' ';'; echo; done; done
cd $OUT && tar czf r5.tgz r5 && rm -rf r5
