#!/usr/bin/env bash
# round 7 (lab): cube passes whose 3D copies go as pieces of LAB_SPLIT planes (1: a 2D copy per plane)
set -u
o=$OUT/r7; mkdir -p $o
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $o/times.txt; }
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu:$PWD/.deps/root/lib/x86_64-linux-gnu
(cd lab/split && ln -sfn ../../.deps .deps && bash bench/device-build.sh build-split pyrgrid_cli bench_stages bench_heat > $o/build.txt 2>&1; echo "rc $?" >> $o/build.txt)
grep -h "^rc" $o/build*.txt
st built
B=lab/split/build-split
export PYRGRID_WISDOM=$o/wisdom
$B/pyrgrid calibrate --backend cuda --precision float --dims 3 --scheme heat > $o/cal.txt 2>&1
st calibrated
for r in 1 2; do
  PYR_TIMELINE=1 timeout 60 $B/bench/bench_stages 3 1025 float blocks 8,32,48 1024 3 > $o/stages_head_$r.txt 2>&1; st "head $r"
  for sp in 1 16; do
    LAB_SPLIT=$sp PYR_TIMELINE=1 timeout 60 $B/bench/bench_stages 3 1025 float blocks 8,32,48 1024 3 > $o/stages_split${sp}_$r.txt 2>&1; st "split $sp $r"
  done
done
for v in head_1 split1_1 split16_1 head_2 split1_2 split16_2; do echo $v; grep -E "^ +[0-9]+ +3 +" $o/stages_$v.txt | cut -c1-100; grep -o "up busy [0-9.]* ms\|down busy [0-9.]* ms" $o/stages_$v.txt | paste - - ; done
cd $OUT && tar czf r7.tgz r7 && rm -rf r7
