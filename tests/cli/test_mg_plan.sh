#!/usr/bin/env bash
# pyrgrid plan of examples/poisson_multigrid.ini, in core and at a run.memory that streams its finest levels: the
# hierarchy, the cycle, the coarsest solve, what stays on the device and what is streamed (slabs, halos, passes,
# bytes per cycle), the device's bytes and the cost of a cycle in sweeps of the finest grid; none of the naive
# method's lines (Jacobi sweeps to a change, the whole grid in 2 time layers, counts of 0, the sweeps' run model).
# The cost a plan states is the one its run reports: sweep_equivalents = cycles * cost + 1 (the initial residual).
#   usage: test_mg_plan.sh PYRGRID SOURCE_DIR
set -u
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
pyr_setup "$1"
bin=$pyr
src=$2
ini=$src/examples/poisson_multigrid.ini
cpu=(--set run.backend=cpu)
has() { printf '%s\n' "$1" | grep -qE -- "$2" && ok || bad "$3: no line matching '$2' in:
$1"; }
hasnt() { printf '%s\n' "$1" | grep -qE -- "$2" && bad "$3: a line matching '$2' (the naive method's) in:
$1" || ok; }
naive() {
  for re in 'at most [0-9]+ Jacobi sweeps' 'changes u by' 'checked every [0-9]+ sweeps' 'whole grid stays' 'time layers' 'values (uploaded|downloaded|computed)' \
    '^redundancy' '^model ' '^predicted ' '^pieces ' '^height ' '^trivial' 'kernel multigrid'; do
    hasnt "$1" "$re" "$2"
  done
}
# the cost line's number, and a run's sweep equivalents and cycles
cost_of() { printf '%s\n' "$1" | sed -n 's/^cost  *\([0-9.e+-]*\) sweeps of the finest grid per cycle.*/\1/p'; }
check_cost() { # plan output, run output, what
  local c n s
  c=$(cost_of "$1")
  n=$(printf '%s\n' "$2" | sed -n 's/.* cycles=\([0-9]*\) .*/\1/p')
  s=$(printf '%s\n' "$2" | sed -n 's/.* sweep_equivalents=\([0-9.e+-]*\) .*/\1/p')
  if [ -n "$c" ] && [ -n "$n" ] && [ -n "$s" ] &&
    awk -v c="$c" -v n="$n" -v s="$s" 'BEGIN { d = n * c + 1 - s; exit !(n > 0 && (d < 0 ? -d : d) <= 0.05 + 1e-3 * s) }'; then
    ok
  else
    bad "$3: the plan's cost $c per cycle against the run's $s sweep equivalents in $n cycles: $2"
  fi
}

# in core: every level on the device
out=$("$bin" plan "$ini" "${cpu[@]}" 2>&1)
rc=$?
[ $rc -eq 0 ] && ok || bad "plan in core: rc=$rc $out"
has "$out" '^problem +2D poisson, 257 x 257 double nodes, at most 50 V-cycles, stop once the relative residual .* is below 1e-10' "in core"
has "$out" '^method +multigrid on the cpu backend' "in core"
has "$out" '^levels +8: 257 x 257, 129 x 129, 65 x 65, 33 x 33, 17 x 17, 9 x 9, 5 x 5, 3 x 3 ' "in core"
has "$out" '^cycle +V-cycles: 3 pre- and 3 post-smoothing Chebyshev-accelerated Jacobi sweeps per level, full weighting down, bilinear interpolation up' "in core"
has "$out" '^coarsest +3 x 3 solved by [0-9]+ Chebyshev-accelerated Jacobi sweep' "in core"
has "$out" '^in core +every level on the device' "in core"
has "$out" '^device +[0-9.]+ MiB of budget .*: every level.s arrays' "in core"
has "$out" '^cost +[0-9.]+ sweeps of the finest grid per cycle' "in core"
hasnt "$out" '^streamed|^moved|^notice' "in core"
naive "$out" "in core"
run=$("$bin" run "$ini" "${cpu[@]}" --set output.field=a.npy 2>&1)
check_cost "$out" "$run" "in core"

# a budget that holds levels 3-7 only: levels 0-2 streamed in slabs along y
tiny=(--set run.memory=400000)
out=$("$bin" plan "$ini" "${cpu[@]}" "${tiny[@]}" 2>&1)
rc=$?
[ $rc -eq 0 ] && ok || bad "plan streamed: rc=$rc $out"
has "$out" '^levels +8: 257 x 257, ' "streamed"
has "$out" '^cycle +V-cycles: 3 pre- and 3 post-smoothing ' "streamed"
has "$out" '^in core +levels 3-7 on the device; the finest level.s f (streamed with u|stays on the device)' "streamed"
has "$out" '^streamed +the finest levels from host memory \([0-9.]+ [KM]i?B there beside the caller.s u and f\) in slabs of planes along y' "streamed"
has "$out" '^ +level 0: [0-9]+ of its 257 planes per slab, 13 halo planes each side recomputed, 1 pass per cycle' "streamed"
has "$out" '^ +level 1: [0-9]+ of its 129 planes per slab, 5 halo planes each side recomputed, 2 passes per cycle' "streamed"
has "$out" '^ +level 2: (its 65 planes in one slab|[0-9]+ of its 65 planes per slab, 5 halo planes each side recomputed), 2 passes per cycle' "streamed"
hasnt "$out" '^ +level 3:' "streamed"
has "$out" '^moved +[0-9.]+ MiB to and from the device per cycle' "streamed"
has "$out" '^device +[0-9.]+ KiB of budget 390.6 KiB: the in-core levels. arrays and the slab buffers' "streamed"
has "$out" '^cost +[0-9.]+ sweeps of the finest grid per cycle' "streamed"
naive "$out" "streamed"
run=$("$bin" run "$ini" "${cpu[@]}" "${tiny[@]}" --set output.field=b.npy 2>&1)
check_cost "$out" "$run" "streamed"

# F-cycles streamed: a coarser level's visits (and passes) multiply, and so does the cost
outf=$("$bin" plan "$ini" "${cpu[@]}" "${tiny[@]}" --set scheme.cycle=f --set scheme.smoother=jacobi 2>&1)
has "$outf" 'at most 50 F-cycles' "F streamed"
has "$outf" '^cycle +F-cycles: 3 pre- and 3 post-smoothing weighted-Jacobi sweeps' "F streamed"
has "$outf" '^ +level 1: .*, 4 passes per cycle' "F streamed"
has "$outf" '^ +level 2: .*, 6 passes per cycle' "F streamed"
naive "$outf" "F streamed"
run=$("$bin" run "$ini" "${cpu[@]}" "${tiny[@]}" --set scheme.cycle=f --set scheme.smoother=jacobi --set output.field=c.npy 2>&1)
check_cost "$outf" "$run" "F streamed"

# Laplace (no f) in 3D: the residual relative to the initial one, no f on the finest level
out3=$("$bin" plan "$ini" "${cpu[@]}" --set grid.dims=3 --set grid.nx=33 --set grid.ny=33 --set grid.nz=33 --set rhs.kind=zero \
  --set initial.kind=sine 2>&1)
has "$out3" 'max\|f \+ lap u\| / \(the initial field.s\)' "Laplace 3D"
has "$out3" '^levels +5: 33 x 33 x 33, 17 x 17 x 17, 9 x 9 x 9, 5 x 5 x 5, 3 x 3 x 3 ' "Laplace 3D"
has "$out3" 'trilinear interpolation' "Laplace 3D"
naive "$out3" "Laplace 3D"

# the sweeping methods keep their own story
outj=$("$bin" plan "$ini" "${cpu[@]}" --set scheme.iteration=chebyshev --set run.method=auto 2>&1)
has "$outj" 'at most [0-9]+ Jacobi sweeps' "chebyshev"
hasnt "$outj" '^levels |^cost ' "chebyshev"

finish
