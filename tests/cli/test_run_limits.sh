#!/usr/bin/env bash
# pyrgrid run at the edges of memory and of the number range (reliability review):
#  M9   method = auto on the CPU chose naive (the host grid and two more copies) whatever memory was
#       left: under ulimit -v where naive does not fit, auto must solve in pieces, give run.memory =
#       256M's bytes, and `pyrgrid plan` must say which budget it took and from which limit;
#  L23  out-of-memory advice offers float precision only for a double grid;
#  L4   heat and Poisson values that overflow to inf/NaN stop the run (exit 1, a message naming the
#       step and the node) and write nothing, as Maxwell's do.
# The ulimit cases are skipped where the program cannot start under an address-space limit
# (a sanitizer build).   usage: test_run_limits.sh PYRGRID SOURCE_DIR
set -u
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
pyr_setup "$1"
bin=$pyr
src=$2

cat > tiny.ini <<'INI'
[grid]
dims = 3
nx = 17
ny = 17
nz = 17
[scheme]
alpha = 1
dt = 1e-5
steps = 2
[run]
backend = cpu
[output]
field = tiny.npy
image =
INI
# ---------------------------------------------------------------- M9
# the least address space (KiB, to 8 MiB) in which the program runs a tiny problem: its own mappings
lo=0 hi=$((8 * 1024 * 1024))
if bash -c "ulimit -v $hi && exec \"\$0\" run tiny.ini -q" "$bin" >/dev/null 2>&1; then
  while [ $((hi - lo)) -gt 8192 ]; do
    mid=$(((lo + hi) / 2))
    if bash -c "ulimit -v $mid && exec \"\$0\" run tiny.ini -q" "$bin" >/dev/null 2>&1; then hi=$mid; else lo=$mid; fi
  done
  base=$hi
  # 256^3 doubles: 128 MiB a grid, naive 384 MiB with the host field; 300 MiB more than the program's own
  limit=$((base + 300 * 1024))
  big=(--set grid.nx=256 --set grid.ny=256 --set grid.nz=256 --set scheme.dt=1e-6 --set scheme.precision=double
       --set initial.kind=sine --set run.method=auto --set run.memory=auto)
  o=$(bash -c "ulimit -v $limit && exec \"\$0\" run tiny.ini \"\$@\" --set output.field=naive.npy --set run.method=naive" "$bin" "${big[@]}" 2>&1)
  [ $? -eq 1 ] && [ ! -e naive.npy ] && ok || bad "the limit of $limit KiB should stop the naive method: $o"
  o=$(bash -c "ulimit -v $limit && exec \"\$0\" run tiny.ini \"\$@\" --set output.field=auto.npy" "$bin" "${big[@]}" 2>&1)
  r=$?
  [ $r -eq 0 ] && echo "$o" | grep -q "method=pyramid" && echo "$o" | grep -q "run.memory = auto: naive needs" && [ -s auto.npy ] \
    && ok || bad "method = auto under ulimit -v $limit: rc=$r $o"
  o=$("$bin" run tiny.ini "${big[@]}" --set output.field=m256.npy --set run.memory=256M 2>&1)
  [ $? -eq 0 ] && cmp -s auto.npy m256.npy && ok || bad "method = auto under the limit differs from run.memory = 256M: $o"
  o=$(bash -c "ulimit -v $limit && exec \"\$0\" plan tiny.ini \"\$@\"" "$bin" "${big[@]}" 2>&1)
  echo "$o" | grep -q "^method  *pyramid" && echo "$o" | grep -q "of budget [0-9.]* [KM]iB" && echo "$o" | grep -q "^notice .*ulimit -v" \
    && ok || bad "plan under ulimit -v $limit does not show the budget and its limit: $o"
  # without a limit this grid runs naive, in a budget from the memory left (no longer "unlimited")
  o=$("$bin" plan tiny.ini "${big[@]}" 2>&1)
  if awk '/^MemAvailable/ { exit !($2 > 4 * 1024 * 1024) }' /proc/meminfo; then
    echo "$o" | grep -q "^method  *naive" && ! echo "$o" | grep -q "budget unlimited" && ok || bad "plan without a limit: $o"
  fi
else
  echo "skipped the ulimit cases: the program does not start under ulimit -v $hi (a sanitizer build?)"
fi

# ---------------------------------------------------------------- L23
# 100000^3 nodes fit no machine; sanitizers must let the allocation fail rather than abort
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1"
for m in naive auto; do
  for prec in float double; do
    o=$("$bin" run tiny.ini --set grid.nx=100000 --set grid.ny=100000 --set grid.nz=100000 --set scheme.dt=1e-12 \
      --set scheme.precision=$prec --set run.method=$m --set output.field=huge.npy 2>&1)
    r=$?
    if [ $prec = float ]; then
      [ $r -eq 1 ] && echo "$o" | grep -q "use fewer nodes" && ! echo "$o" | grep -q "float precision" && ok \
        || bad "a float grid too large ($m) advises float precision: rc=$r $o"
    else
      [ $r -eq 1 ] && echo "$o" | grep -q "float precision" && ok || bad "a double grid too large ($m): rc=$r $o"
    fi
  done
done
[ ! -e huge.npy ] && ok || bad "huge.npy written"

# ---------------------------------------------------------------- L4: heat and Poisson
/usr/bin/python3 - <<'PY'
import numpy as np
a = np.zeros((33, 33), np.float32); a[1:-1, 1:-1] = 3e38; np.save("hot.npy", a)
b = np.zeros((33, 33)); b[1:-1, 1:-1] = 1e308; np.save("guess.npy", b)
PY
cat > hot.ini <<'INI'
[grid]
dims = 2
nx = 33
ny = 33
[scheme]
alpha = 1
dt = 1e-4
steps = 10
precision = float
[initial]
kind = file
file = hot.npy
[run]
backend = cpu
[output]
field = hot_out.npy
image = hot_out.png
INI
echo keep > hot_out.npy
cp hot_out.npy keep.npy
for how in "the end of the run" "at a snapshot"; do
  extra=()
  [ "$how" = "at a snapshot" ] && extra=(--set output.every=5)
  for m in naive pyramid; do
    o=$("$bin" run hot.ini --set run.method=$m "${extra[@]}" 2>&1)
    r=$?
    [ $r -eq 1 ] && echo "$o" | grep -q "the fields diverged (non-finite) by step [0-9]* ($how): u is .* at node (x=" \
      && echo "$o" | grep -q "use scheme.precision = double" && cmp -s hot_out.npy keep.npy && [ ! -e hot_out.png ] \
      && [ -z "$(ls hot_out_0* 2>/dev/null)" ] && ok || bad "heat diverged, $how, $m: rc=$r $o"
  done
done
o=$("$bin" run hot.ini --set scheme.precision=double --set initial.kind=sine 2>&1)
[ $? -eq 0 ] && ok || bad "a finite heat run: $o"
rm -f hot_out.npy hot_out.png
# Poisson: a guess near the largest double; "did not converge, the result was written" (exit 3) before
o=$("$bin" run "$src/examples/poisson2d.ini" --set grid.nx=33 --set grid.ny=33 --set initial.kind=file --set initial.file=guess.npy \
  --set scheme.iterations=100 --set run.backend=cpu --set output.field=p.npy --set output.image= 2>&1)
r=$?
[ $r -eq 1 ] && echo "$o" | grep -q "the fields diverged (non-finite) by sweep 100 (the end of the run): u is" \
  && ! echo "$o" | grep -q "precision = double" && [ ! -e p.npy ] && ok || bad "Poisson diverged: rc=$r $o"

finish
