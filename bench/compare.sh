#!/usr/bin/env bash
# This tree beside an earlier one on the same machine in one run, so that a change
# (a refactor, a new kernel) can be judged against run-to-run noise: the GPU tests of
# this tree, heat in core, Poisson's Chebyshev sweeps in core and skewed at a quarter, and
# Maxwell in core / at a quarter on GPU 0 (base, new, base, new), and, with two GPUs, one and two GPUs in core in three alternating rounds
# (steady rate from two run lengths, and end to end), with the H each build chose.
# The earlier tree comes as a tarball, made where git is:
#   git archive BASE | gzip > .deps/base.tar.gz
# (on a machine without a package registry, put the .deb files bench/build.sh names in .deps/ too).
#   bash bench/compare.sh OUT [TARBALL]        (default .deps/base.tar.gz)
set -uo pipefail
out=${1:?usage: bench/compare.sh OUT [TARBALL]}; tarball=${2:-.deps/base.tar.gz}
mkdir -p "$out"
start=$(date +%s); stamp() { echo "[$(($(date +%s) - start)) s] $*" | tee -a "$out/summary.txt"; }
nvidia-smi -L | tee -a "$out/summary.txt"
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
root=$PWD/.deps/root; export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
rm -rf /tmp/cmp-base && mkdir -p /tmp/cmp-base/.deps && tar -xzf "$tarball" -C /tmp/cmp-base && { cp .deps/*.deb /tmp/cmp-base/.deps/ 2>/dev/null || true; }
stamp build
( cd /tmp/cmp-base && s=bench/build.sh && { [ -f $s ] || s=bench/device-build.sh; } && bash $s /tmp/cmp-build-base pyrgrid_cli bench_heat bench_maxwell > "$out/build-base.txt" 2>&1; echo "base build rc=$?" >> "$out/build-base.txt" ) &
bash bench/build.sh /tmp/cmp-build-new > "$out/build-new.txt" 2>&1; echo "new build rc=$?" | tee -a "$out/summary.txt"
wait; tail -1 "$out/build-base.txt" | tee -a "$out/summary.txt"
stamp "gpu tests (new)"
( cd /tmp/cmp-build-new && timeout 300 ctest -L gpu --output-on-failure -j2 > "$out/ctest-gpu.txt" 2>&1 ); grep -E "tests passed|Failed|\*\*\*|Timeout" "$out/ctest-gpu.txt" | tee -a "$out/summary.txt"
stamp "heat in core, base new base new"
for b in base new base new; do
  echo "== $b" >> "$out/bench-heat.txt"
  CUDA_VISIBLE_DEVICES=0 PYRGRID_WISDOM=/tmp/cmp-w-$b timeout 120 /tmp/cmp-build-$b/bench/bench_heat --methods naive --steps 400 \
    --grids f:16384x16384,d:30624x16384,f:1024x1024x1024 >> "$out/bench-heat.txt" 2>&1
done
grep -E "^==|naive" "$out/bench-heat.txt" | tee -a "$out/summary.txt"
stamp "Poisson (Chebyshev) 1024^3 float in core and skewed at a quarter (height 40), base new base new"
for b in base new base new; do
  echo "== $b" >> "$out/bench-poisson.txt"
  CUDA_VISIBLE_DEVICES=0 PYRGRID_WISDOM=/tmp/cmp-w-$b timeout 120 /tmp/cmp-build-$b/bench/bench_heat --equation poisson --iteration chebyshev \
    --cases 3f --steps 240 --fractions 4 --methods naive,pyramid --decomp skewed --heights3 40 >> "$out/bench-poisson.txt" 2>&1
done
grep -E "^==|naive in-core|height 40" "$out/bench-poisson.txt" | tee -a "$out/summary.txt"
stamp "Maxwell 640^3 in core and at a quarter (height 24)"
for b in base new; do
  echo "== $b" >> "$out/bench-mx.txt"
  CUDA_VISIBLE_DEVICES=0 PYRGRID_WISDOM=/tmp/cmp-w-$b timeout 120 /tmp/cmp-build-$b/bench/bench_maxwell --grid 640 --steps 120 --fractions 4 --heights 24 >> "$out/bench-mx.txt" 2>&1
done
grep -E "^==|naive|pyr|pyramid" "$out/bench-mx.txt" | tee -a "$out/summary.txt"
[ "$ngpu" -ge 2 ] || { stamp "one GPU: no multi-GPU rounds"; exit 0; }
stamp "one and two GPUs in core, three alternating rounds"
w=$(mktemp -d)
printf '[grid]\ndims = 2\nnx = 32769\nny = 32769\n[scheme]\ndt = 5e-11\nsteps = 100\nprecision = float\n[initial]\nkind = gauss\n[run]\nbackend = cuda\n' > $w/s2.ini
printf '[grid]\ndims = 3\nnx = 1025\nny = 1025\nnz = 1025\n[scheme]\ndt = 5e-8\nsteps = 100\nprecision = float\n[initial]\nkind = gauss\n[run]\nbackend = cuda\n' > $w/s3.ini
for b in base new; do for f in s2 s3; do
  /tmp/cmp-build-$b/pyrgrid plan $w/$f.ini --set run.devices=0,1 2>&1 | grep -E "^parts" | sed "s/^/$b $f: /" | tee -a "$out/summary.txt"
done; done
run() { # BUILD NAME FILE S1 S2 SETS...: the steady rate between S1 and S2 steps, and the end-to-end rate of S2
  local b=$1 name=$2 file=$3 s1=$4 s2=$5; shift 5; local t=() line=""
  for s in $s1 $s2; do
    line=$(PYRGRID_WISDOM=/tmp/cmp-w-$b timeout 150 /tmp/cmp-build-$b/pyrgrid run "$file" -q --set scheme.steps=$s --set output.field= \
      --set output.image= "$@" 2>>"$out/scaling.err" | tail -1)
    echo "$b $name steps=$s: $line" >> "$out/scaling.log"
    t+=("$(echo "$line" | grep -o 'seconds=[0-9.]*' | cut -d= -f2)")
  done
  local cells; cells=$(echo "$line" | grep -o 'grid=[0-9x]*' | cut -d= -f2 | awk -F x '{p = 1; for (i = 1; i <= NF; i++) p *= ($i - 2); print p}')
  awk -v n="$b $name" -v c="${cells:-0}" -v a="${t[0]:-0}" -v b="${t[1]:-0}" -v s1=$s1 -v s2=$s2 'BEGIN {
    m = (b > a) ? c * (s2 - s1) / (b - a) / 1e9 : 0; e = b > 0 ? c * s2 / b / 1e9 : 0;
    printf "%-40s %10.1f %10.1f   (t %.3f / %.3f s)\n", n, m, e, a, b }' | tee -a "$out/summary.txt"
}
printf "%-40s %10s %10s\n" "configuration (Gcell/s)" "steady" "end-to-end" | tee -a "$out/summary.txt"
for r in 1 2 3; do for b in base new; do
  run $b "2D in core, 2 GPUs" $w/s2.ini 200 4200 --set run.devices=0,1
  run $b "3D in core, 2 GPUs" $w/s3.ini 50 2050 --set run.devices=0,1
done; done
for r in 1 2; do for b in base new; do
  run $b "2D in core, 1 GPU" $w/s2.ini 200 4200
  run $b "3D in core, 1 GPU" $w/s3.ini 50 2050
done; done
stamp done
