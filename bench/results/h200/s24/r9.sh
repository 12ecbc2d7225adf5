#!/usr/bin/env bash
# round 9 (lab): the host grid from the CUDA VMM API (cuMemCreate, location host, LAB_VMM=1) against malloc + cudaHostRegister
set -u
o=$OUT/r9; mkdir -p $o
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $o/times.txt; }
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu:$PWD/.deps/root/lib/x86_64-linux-gnu
(cd lab/vmm && ln -sfn ../../.deps .deps && bash bench/device-build.sh build-vmm pyrgrid_cli bench_stages bench_heat > $o/build.txt 2>&1; echo "rc $?" >> $o/build.txt)
grep -h "^rc" $o/build*.txt
st built
B=lab/vmm/build-vmm
export PYRGRID_WISDOM=$o/wisdom
$B/pyrgrid calibrate --backend cuda --precision float --dims 2,3 --scheme heat > $o/cal.txt 2>&1
st calibrated
# correctness: the same run from both kinds of host memory, outputs compared byte for byte
for v in reg vmm; do
  sed "s#OUTFILE#$o/check_$v.npy#" lab/vmm_check.ini > $o/check_$v.ini
  E=""; [ $v = vmm ] && E="LAB_VMM=1"
  env $E timeout 60 $B/pyrgrid run $o/check_$v.ini > $o/check_$v.txt 2>&1; echo "rc $?" >> $o/check_$v.txt
done
cmp $o/check_reg.npy $o/check_vmm.npy && echo "check: identical" | tee -a $o/times.txt
tail -3 $o/check_vmm.txt
st checked
for r in 1 2; do
  for v in reg vmm; do
    E=""; [ $v = vmm ] && E="LAB_VMM=1"
    env $E PYR_TIMELINE=1 timeout 60 $B/bench/bench_stages 3 1025 float blocks 8,32,48 1024 3 > $o/cubes_${v}_$r.txt 2>&1
    env $E PYR_TIMELINE=1 timeout 60 $B/bench/bench_stages 2 32769 float blocks 16,64 512 3 > $o/blocks2d_${v}_$r.txt 2>&1
    st "$v $r"
  done
done
LAB_VMM=1 PYR_TIMELINE=1 timeout 60 $B/bench/bench_stages 3 1025 float skewed 48 1024 3 > $o/skewed_vmm.txt 2>&1
PYR_TIMELINE=1 timeout 60 $B/bench/bench_stages 3 1025 float skewed 48 1024 3 > $o/skewed_reg.txt 2>&1
st skewed
head -5 $o/cubes_vmm_1.txt | grep -i "lab\|error" 
for f in cubes_reg_1 cubes_vmm_1 cubes_reg_2 cubes_vmm_2 blocks2d_reg_1 blocks2d_vmm_1 skewed_reg skewed_vmm; do echo "$f"; grep -E "^ +[0-9]+ +3 +" $o/$f.txt | cut -c1-100; grep -o "up busy [0-9.]* ms\|down busy [0-9.]* ms" $o/$f.txt | paste - - ; done
rm -f $o/check_*.npy
cd $OUT && tar czf r9.tgz r9 && rm -rf r9
