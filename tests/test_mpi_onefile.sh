#!/usr/bin/env bash
# mpirun -np P pyrgrid run writes ONE output file (issue 49, item 7): output.field = x.npy under
# mpirun is x.npy itself, rank 0 its header and every rank its box through MPI-IO into a temporary
# that rank 0 renames only once every rank has written; the same bytes as a one-process run for
# heat 2D/3D and Poisson, float and double, awkward sizes, slabs and blocks, np 1..4 (Maxwell's
# components, one file each, too). A failing rank leaves the old file as it was and no temporary
# behind, with its message; a target that is a directory or a device is refused the same way; the
# parts route (run --parts, then pyrgrid assemble) still gives the same bytes.
# usage: test_mpi_onefile.sh PYRGRID MPIEXEC NUMPROC_FLAG [MPIEXEC FLAGS...]   (77 without mpirun)
set -u
. "$(dirname "${BASH_SOURCE[0]}")/mpi_launch.sh" "$@"

cat > heat2.ini << 'EOF'
[grid]
dims = 2
nx = 61
ny = 47
[scheme]
equation = heat
alpha = 1
dt = 2e-5
steps = 23
precision = double
[initial]
kind = random
seed = 5
[run]
backend = cpu
threads = 1
[output]
field = out.npy
EOF
cat > heat3.ini << 'EOF'
[grid]
dims = 3
nx = 13
ny = 19
nz = 11
[scheme]
equation = heat
alpha = 1
dt = 1e-4
steps = 9
precision = float
[initial]
kind = random
seed = 3
[run]
backend = cpu
threads = 1
[output]
field = out.npy
EOF
cat > poisson2.ini << 'EOF'
[grid]
dims = 2
nx = 29
ny = 37
[scheme]
equation = poisson
iterations = 3000
tolerance = 1e-4
check_every = 5
precision = double
[initial]
kind = random
seed = 2
[rhs]
kind = sine
[run]
backend = cpu
threads = 1
[output]
field = out.npy
EOF
cat > poisson3.ini << 'EOF'
[grid]
dims = 3
nx = 13
ny = 11
nz = 17
[scheme]
equation = poisson
iterations = 400
tolerance = 1e-4
check_every = 7
precision = float
[initial]
kind = random
seed = 2
[rhs]
kind = sine
[run]
backend = cpu
threads = 1
[output]
field = out.npy
EOF
cat > mx.ini << 'EOF'
[grid]
dims = 2
nx = 41
ny = 37
[scheme]
equation = maxwell
mode = te
courant = 0.5
steps = 20
precision = double
[boundary]
kind = cpml
cpml_cells = 5
[source]
source1 = Hz point 20 18 gaussian width=0.05 delay=0.15
[output]
field = mx.npy
EOF

# ---------------------------------------------------------------- same bytes as one process
for c in heat2 heat3 poisson2 poisson3; do
  "$pyr" run $c.ini -q --set output.field=${c}_ref.npy > /dev/null || fail "one-process $c run"
  # the other precision too, so that float and double go through each scheme
  "$pyr" run $c.ini -q --set output.field=${c}_other_ref.npy --set scheme.precision=$(grep -q 'precision = float' $c.ini && echo double || echo float) \
    > /dev/null || fail "one-process $c run (the other precision)"
done
for np in 1 2 3 4; do
  for c in heat2 heat3 poisson2 poisson3; do
    for part in auto slabs blocks; do
      [ $np -lt 4 ] && [ $part = blocks ] && continue # blocks need 4 ranks to differ from slabs
      rm -f out.npy
      run_np $np run $c.ini --set run.partition=$part > run.txt 2> run.err || { fail "np $np $c $part: $(cat run.err)"; continue; }
      [ $np -gt 1 ] && { grep -q "ranks=$np" run.txt || fail "np $np $c $part ran in one process: $(cat run.txt)"; }
      cmp -s out.npy ${c}_ref.npy || fail "np $np $c $part: out.npy differs from the one-process run's"
      ls out.rank*.npy out.parts.json > /dev/null 2>&1 && fail "np $np $c $part wrote parts as well"
      [ -z "$(temps)" ] || fail "np $np $c $part left temporaries: $(temps)"
    done
    other=$(grep -q 'precision = float' $c.ini && echo double || echo float)
    run_np $np run $c.ini --set output.field=other.npy --set scheme.precision=$other > /dev/null 2> run.err || fail "np $np $c $other: $(cat run.err)"
    cmp -s other.npy ${c}_other_ref.npy || fail "np $np $c $other: differs from the one-process run's"
  done
done
[ $np = 4 ] && [ $fails = 0 ] && echo "np 1-4: heat 2D/3D and Poisson 2D/3D, float and double, slabs and blocks: the one-process bytes"

# Maxwell: one file per component, each the one-process bytes
"$pyr" run mx.ini -q --set output.field=mxref.npy > /dev/null || fail "one-process Maxwell run"
run_np 3 run mx.ini > mx.txt 2> mx.err || fail "np 3 Maxwell: $(cat mx.err)"
for c in Hz Ex Ey; do cmp -s mx_$c.npy mxref_$c.npy || fail "np 3 Maxwell: mx_$c.npy differs from one process's"; done
ls mx_*.parts.json > /dev/null 2>&1 && fail "np 3 Maxwell wrote parts indexes"

# an existing output is replaced (its temporary renamed over it), never written in place
printf 'old' > keep.npy
ln keep.npy keep_link.npy
run_np 2 run heat2.ini --set output.field=keep.npy > /dev/null 2> run.err || fail "np 2 over an old file: $(cat run.err)"
cmp -s keep.npy heat2_ref.npy || fail "np 2 over an old file: not the result"
[ "$(cat keep_link.npy)" = old ] || fail "np 2 wrote the old file in place (its other link changed)"

# ---------------------------------------------------------------- failures leave the old file
printf 'old result' > x.npy
# a failing rank (a NaN in rank 2's part of the initial field): every rank stops, rank 2's message
/usr/bin/python3 - << 'EOF' || fail "making nan.npy"
import numpy as np
a = np.load("heat2_ref.npy")
a[45, 30] = np.nan  # rank 2's rows of 3 slabs
np.save("nan.npy", a)
EOF
run_np 3 run heat2.ini --set output.field=x.npy --set initial.kind=file --set initial.file=nan.npy --set run.partition=slabs --set run.exchange=1 \
  > f.txt 2> f.err
rc=$?
[ $rc = 1 ] || fail "a failing rank: exit $rc, expected 1"
grep -q "error: rank 2: initial.file: .*NaN at index \[45, 30\]" f.err || fail "a failing rank's message: $(cat f.err)"
[ "$(cat x.npy)" = "old result" ] || fail "a failing rank changed the old x.npy"
[ -z "$(temps)" ] || fail "a failing rank left temporaries: $(temps)"
# a rank that cannot reach rank 0's temporary (as without a shared file system: rank 1 runs in
# another directory, Open MPI's --wdir): every rank stops with rank 1's message, naming --parts,
# rather than waiting in a collective open; the old file stays and the temporary goes
if "$mpiexec" --version 2>&1 | grep -q "Open MPI"; then
  mkdir -p A B && cp heat2.ini A/ && cp heat2.ini B/ && printf 'old result' > A/x.npy
  timeout 120 "$mpiexec" "${flags[@]}" "$npflag" 1 --wdir "$work/A" "$pyr" run heat2.ini --set output.field=x.npy : \
    "$npflag" 1 --wdir "$work/B" "$pyr" run heat2.ini --set output.field=x.npy > f.txt 2> f.err
  rc=$?
  [ $rc = 1 ] || fail "a rank without the temporary: exit $rc, expected 1 (124: it hung)"
  grep -q "error: rank 1: cannot write x.npy: this rank cannot open the temporary .* that rank 0 made .*pyrgrid run --parts" f.err ||
    fail "a rank without the temporary: $(cat f.err)"
  [ "$(cat A/x.npy)" = "old result" ] || fail "a rank without the temporary changed the old x.npy"
  [ -z "$(cd A && temps)$(cd B && temps)" ] || fail "a rank without the temporary left temporaries: $(ls -A A B)"
  [ ! -e B/x.npy ] || fail "a rank without the temporary wrote B/x.npy"
fi
# the target is a directory
mkdir d.npy
run_np 2 run heat2.ini --set output.field=d.npy > f.txt 2> f.err
rc=$?
[ $rc = 1 ] || fail "a directory as output.field: exit $rc, expected 1"
grep -q "error: .*d.npy.*directory" f.err || fail "a directory as output.field: $(cat f.err)"
[ -d d.npy ] && [ -z "$(ls -A d.npy)" ] || fail "a directory as output.field was changed"
# an unwritable directory (not as root: root writes anywhere)
mkdir ro && chmod 555 ro
if [ ! -w ro ]; then
  printf 'old result' > ro/x.npy 2> /dev/null
  run_np 2 run heat2.ini --set output.field=ro/x.npy > f.txt 2> f.err
  rc=$?
  [ $rc = 1 ] || fail "an unwritable directory: exit $rc, expected 1"
  grep -q "error: .*ro/x.npy" f.err || fail "an unwritable directory: $(cat f.err)"
  [ -z "$(cd ro && temps)" ] || fail "an unwritable directory: temporaries left"
else
  echo "note: running as root, which writes any directory: the unwritable directory is not tested"
fi
chmod 755 ro
# a device cannot be written at each rank's place: refused, /dev/full untouched
if [ -c /dev/full ]; then
  run_np 2 run heat2.ini --set output.field=/dev/full > f.txt 2> f.err
  rc=$?
  [ $rc = 1 ] || fail "a device as output.field: exit $rc, expected 1"
  grep -q "error: .*/dev/full" f.err || fail "a device as output.field: $(cat f.err)"
fi
[ -z "$(temps)" ] || fail "the refusals left temporaries: $(temps)"

# ---------------------------------------------------------------- the parts route, when asked
rm -f out.*
run_np 3 run heat2.ini --parts > p.txt 2> p.err || fail "np 3 --parts: $(cat p.err)"
[ "$(ls out.rank*.npy 2> /dev/null | wc -l)" = 3 ] || fail "np 3 --parts wrote $(ls out.rank*.npy 2> /dev/null | wc -l) parts"
[ -e out.npy ] && fail "np 3 --parts wrote out.npy as well"
grep -q "pyrgrid assemble out.parts.json" p.err || fail "np 3 --parts does not say how to join the parts: $(cat p.err)"
"$pyr" assemble out.parts.json joined.npy -q && cmp -s joined.npy heat2_ref.npy || fail "np 3 --parts + assemble differs from one process"

finish "mpirun pyrgrid run: one output file, the one-process bytes; failures keep the old file; --parts still works"
