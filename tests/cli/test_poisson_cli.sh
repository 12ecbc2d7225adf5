#!/usr/bin/env bash
# The Poisson scheme from the command line (issue 19): the example runs and
# converges, the pyramid method gives the naive method's bytes and sweep
# count, a run that does not converge says so and exits 3, and bad input
# (keys of another scheme, no way to stop, omega, a bad f) is refused before
# anything is written.   usage: test_poisson_cli.sh PYRGRID SOURCE_DIR
set -u
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
pyr_setup "$1"
bin=$pyr
src=$2
small=(--set grid.nx=65 --set grid.ny=49 --set run.backend=cpu --set output.image=)

out=$("$bin" run "$src/examples/poisson2d.ini" "${small[@]}" --set output.field=a.npy 2>&1)
rc=$?
[ $rc -eq 0 ] && echo "$out" | grep -q "converged=yes" && echo "$out" | grep -q "equation=poisson" && [ -s a.npy ] && ok || bad "example: rc=$rc $out"
sweeps=$(echo "$out" | sed -n 's/.* sweeps=\([0-9]*\).*/\1/p')
[ -n "$sweeps" ] && [ $((sweeps % 50)) -eq 0 ] && ok || bad "sweeps $sweeps not at a check (every 50)"

# the pyramid method in a small budget: the same bytes and the same sweep count
out2=$("$bin" run "$src/examples/poisson2d.ini" "${small[@]}" --set output.field=b.npy --set run.method=pyramid --set run.memory=64K \
  --set run.height=7 2>&1)
echo "$out2" | grep -q "method=pyramid" && cmp -s a.npy b.npy && echo "$out2" | grep -q " sweeps=$sweeps " && ok || bad "pyramid differs: $out2"

# not converging: exit 3, a message saying what would help, and the result written
rm -f c.npy
"$bin" run "$src/examples/poisson2d.ini" "${small[@]}" --set output.field=c.npy --set scheme.iterations=10 > out.txt 2> err.txt
rc=$?
[ $rc -eq 3 ] && grep -q "did not converge" err.txt && grep -q "iterations" err.txt && [ -s c.npy ] && ok || bad "no convergence: rc=$rc $(cat err.txt)"

expect_error() { # name, text the message must contain, args...
  local name=$1 text=$2
  shift 2
  rm -f e.npy
  local o
  o=$("$bin" "$@" --set output.field=e.npy 2>&1)
  local r=$?
  [ $r -ne 0 ] && [ $r -ne 3 ] && echo "$o" | grep -q -- "$text" && [ ! -e e.npy ] && ok || bad "$name: rc=$r $o"
}
expect_error heat-key "not the heat equation's" run "$src/examples/poisson2d.ini" "${small[@]}" --set scheme.dt=1e-3
expect_error poisson-key "belong to scheme.equation = poisson" run "$src/examples/heat2d.ini" "${small[@]}" --set scheme.tolerance=1e-3
printf '[grid]\ndims = 2\nnx = 17\nny = 17\n[scheme]\nequation = poisson\n' > nostop.ini
expect_error no-stop "needs a way to stop" run nostop.ini --set run.backend=cpu
expect_error zero-tolerance "positive finite tolerance" run "$src/examples/poisson2d.ini" "${small[@]}" --set scheme.tolerance=0
expect_error omega "0 < omega < 2" run "$src/examples/poisson2d.ini" "${small[@]}" --set scheme.omega=2
# over the grid's bound 2 / (1 + rho) (barely above 1 on a fine grid) damped Jacobi diverges: refused, the bound named
expect_error omega-bound "grid converges only for 0 < omega < 1\.0" run "$src/examples/poisson2d.ini" --set grid.nx=129 --set grid.ny=129 --set scheme.omega=1.5
expect_error rhs-file "rhs.file" run "$src/examples/poisson2d.ini" "${small[@]}" --set rhs.kind=file --set rhs.file=missing.npy
expect_error kernel "no CPU kernel variant" run "$src/examples/poisson2d.ini" "${small[@]}" --set run.kernel=fused:3

# the plan names the scheme, its fields and the stopping rule
out=$("$bin" plan "$src/examples/poisson2d.ini" "${small[@]}" --set run.method=pyramid --set run.memory=64K 2>&1)
echo "$out" | grep -q "2D poisson" && echo "$out" | grep -q "f (input" && echo "$out" | grep -q "checked every 50" && ok || bad "plan: $out"

finish
