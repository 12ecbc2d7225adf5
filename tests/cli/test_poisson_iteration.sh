#!/usr/bin/env bash
# scheme.iteration from the command line: Chebyshev-accelerated Jacobi reaches
# the example's tolerance in far fewer sweeps than plain Jacobi (and to the
# same field within it), jacobi stays the default; the streamed plans (trivial,
# pyramid in its decompositions, skewed pieces included, auto where the grid
# does not fit in core) carry both layers through their pieces and write the
# in-core run's file byte for byte, and what cannot carry the layer two sweeps
# back (several parts, a restart) refuses it saying what works, before
# anything is written.
#   usage: test_poisson_iteration.sh PYRGRID SOURCE_DIR
set -u
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
pyr_setup "$1"
bin=$pyr
src=$2
ini=$src/examples/poisson2d.ini
small=(--set grid.nx=65 --set grid.ny=65 --set run.backend=cpu --set output.image=)
sweeps_of() { echo "$1" | sed -n 's/.* sweeps=\([0-9]*\).*/\1/p'; }

out_j=$("$bin" run "$ini" "${small[@]}" --set output.field=j.npy 2>&1)
rc_j=$?
out_c=$("$bin" run "$ini" "${small[@]}" --set scheme.iteration=chebyshev --set output.field=c.npy 2>&1)
rc_c=$?
sj=$(sweeps_of "$out_j")
sc=$(sweeps_of "$out_c")
[ $rc_j -eq 0 ] && echo "$out_j" | grep -q "converged=yes" && [ -n "$sj" ] && ok || bad "jacobi: rc=$rc_j $out_j"
[ $rc_c -eq 0 ] && echo "$out_c" | grep -q "converged=yes" && echo "$out_c" | grep -q "method=naive" && [ -n "$sc" ] && ok ||
  bad "chebyshev: rc=$rc_c $out_c"
# O(N) against O(N^2) sweeps: on 65^2 about 400 against 11650
[ -n "$sj" ] && [ -n "$sc" ] && [ $((sc * 10)) -le "$sj" ] && ok || bad "chebyshev took $sc sweeps, jacobi $sj: expected at most a tenth"
if [ -s j.npy ] && [ -s c.npy ] && [ -x /usr/bin/python3 ]; then
  # both stop where a sweep changes u by < 1e-9; the fields agree to well within the
  # distance to the discrete solution such a change leaves
  /usr/bin/python3 -c "
import sys, numpy as np
a, b = np.load('j.npy'), np.load('c.npy')
sys.exit(0 if a.shape == b.shape and np.max(np.abs(a - b)) < 1e-5 else 1)" && ok || bad "chebyshev's field differs from jacobi's"
fi

# the default and the report's key
"$bin" run "$ini" "${small[@]}" --set scheme.iteration=jacobi --set output.field=d.npy > /dev/null 2>&1 && cmp -s j.npy d.npy && ok ||
  bad "scheme.iteration = jacobi is not the default"

expect_error() { # name, text the message must contain, args...
  local name=$1 text=$2
  shift 2
  rm -f e.npy
  local o
  o=$("$bin" run "$ini" "${small[@]}" --set output.field=e.npy "$@" 2>&1)
  local rc=$?
  [ $rc -ne 0 ] && echo "$o" | grep -qF -- "$text" && [ ! -e e.npy ] && ok || bad "$name: rc=$rc $o"
}
cheb=(--set scheme.iteration=chebyshev)
expect_error "misspelt" "did you mean 'chebyshev'" --set scheme.iteration=chebishev
expect_error "omega" "leave omega = 1" "${cheb[@]}" --set scheme.omega=0.9
# streamed plans (issue 48; they refused it before): the same sweeps and the in-core run's bytes
expect_same() { # name, method the report must name, args...
  local name=$1 method=$2
  shift 2
  rm -f s.npy
  local o
  o=$("$bin" run "$ini" "${small[@]}" "${cheb[@]}" --set output.field=s.npy "$@" 2>&1)
  local rc=$?
  [ $rc -eq 0 ] && echo "$o" | grep -q "method=$method" && [ "$(sweeps_of "$o")" = "$sc" ] && echo "$o" | grep -q "converged=yes" &&
    cmp -s c.npy s.npy && ok || bad "$name: rc=$rc (chebyshev in core: $sc sweeps) $o"
}
expect_same "trivial" trivial --set run.method=trivial
for d in strips blocks; do
  expect_same "pyramid $d" "pyramid $d" --set run.method=pyramid --set run.decomposition=$d --set run.memory=64K
done
expect_same "pyramid auto decomposition" pyramid --set run.method=pyramid
expect_same "auto, out of core" pyramid --set run.memory=20000
expect_same "pyramid, height 7, 3 slots" "pyramid strips height=7" --set run.method=pyramid --set run.decomposition=strips \
  --set run.height=7 --set run.slots=3 --set run.memory=100K
expect_same "pyramid skewed" "pyramid skewed" --set run.method=pyramid --set run.decomposition=skewed --set run.memory=64K
expect_same "pyramid skewed, height 9, 3 slots" "pyramid skewed height=9" --set run.method=pyramid --set run.decomposition=skewed \
  --set run.height=9 --set run.slots=3 --set run.memory=100K
expect_error "several devices" "over several devices or MPI ranks" "${cheb[@]}" --set run.devices=0,0
expect_error "several devices (what works)" "scheme.iteration = jacobi" "${cheb[@]}" --set run.devices=0,0
# jacobi still runs out of core and over several parts
"$bin" run "$ini" "${small[@]}" --set run.memory=20000 --set output.field=p.npy > /dev/null 2>&1 && [ -s p.npy ] && ok ||
  bad "jacobi out of core refused"

# a restart: a Chebyshev run of 100 sweeps, continued with chebyshev (refused) and jacobi (runs)
cat > r.ini << 'INI'
[grid]
dims = 2
nx = 33
ny = 33
[scheme]
equation = poisson
iterations = 100
precision = double
[rhs]
kind = sine
[initial]
kind = zero
INI
if "$bin" run r.ini --set run.backend=cpu --set scheme.iteration=chebyshev --set output.field=r.h5 --set output.image= > /dev/null 2>&1 &&
  [ -s r.h5 ]; then
  o=$("$bin" run r.ini --set run.backend=cpu --set scheme.iteration=chebyshev --set scheme.iterations=200 --set initial.kind=file \
    --set initial.file=r.h5 --set output.field=s.h5 --set output.image= 2>&1)
  rc=$?
  [ $rc -ne 0 ] && echo "$o" | grep -q "restart from sweep 100 with scheme.iteration = chebyshev" &&
    echo "$o" | grep -q "scheme.iteration = jacobi" && [ ! -e s.h5 ] && ok || bad "chebyshev restart: rc=$rc $o"
  "$bin" run r.ini --set run.backend=cpu --set scheme.iterations=200 --set initial.kind=file --set initial.file=r.h5 \
    --set output.field=s.h5 --set output.image= > /dev/null 2>&1 && [ -s s.h5 ] && ok || bad "jacobi restart of a chebyshev result refused"
else
  echo "(no HDF5 output in this build: the restart checks skipped)"
fi

finish
