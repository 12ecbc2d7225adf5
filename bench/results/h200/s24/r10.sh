#!/usr/bin/env bash
# round 10: part-row calibration over fresh boxes (median) against HEAD's (the same box, best of N)
set -u
o=$OUT/r10; mkdir -p $o
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $o/times.txt; }
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu:$PWD/.deps/root/lib/x86_64-linux-gnu
(bash bench/device-build.sh build-dev pyrgrid_cli bench_stages > $o/build.txt 2>&1; echo "rc $?" >> $o/build.txt) &
(cd lab/old && ln -sfn ../../.deps .deps && bash bench/device-build.sh build-old pyrgrid_cli > $o/build_old.txt 2>&1; echo "rc $?" >> $o/build_old.txt) &
wait
grep -h "^rc" $o/build*.txt
st built
for v in old new; do
  P=build-dev/pyrgrid; [ $v = old ] && P=lab/old/build-old/pyrgrid
  PYRGRID_WISDOM=$o/wisdom_$v $P calibrate --backend cuda --precision float --dims 2,3 --scheme heat > $o/cal_$v.txt 2>&1
done
st calibrated
for v in old new; do
  PYRGRID_WISDOM=$o/wisdom_$v timeout 60 build-dev/bench/bench_stages 2 32769 float blocks 16,64 512 3 > $o/blocks2d_$v.txt 2>&1
  PYRGRID_WISDOM=$o/wisdom_$v timeout 60 build-dev/bench/bench_stages 3 1025 float blocks 8,32,48 1024 3 > $o/cubes_$v.txt 2>&1
  st "stages $v"
done
for v in new old; do
  B=build-dev; [ $v = old ] && B=lab/old/build-old
  SWEEP_REPEAT=2 timeout 330 bash bench/sweep_gpu.sh $B $o/sweep_$v > $o/sweep_$v.log 2>&1; rm -f $o/sweep_$v/*.png
  st "sweep $v"; grep emax $o/sweep_$v.log | sort -u
done
grep -h "part rows" -A0 $o/cal_old.txt $o/cal_new.txt
for v in old new; do echo $v; grep -E "^ +[0-9]+ +3 +" $o/blocks2d_$v.txt $o/cubes_$v.txt | cut -c1-200; done
cd $OUT && tar czf r10.tgz r10 && rm -rf r10
