#!/usr/bin/env bash
# mpirun -np P pyrgrid run writes output.field = NAME.h5 as ONE HDF5 file (issue 49, item 7): rank 0
# writes it with the serial HDF5 library while every rank sends its box a row of chunks at a time;
# the file holds every dataset and attribute of a one-process run's file (compared with h5py: values
# bit for bit, chunks and filters, dimension scales by name; the root's plan and run attributes say
# how the ranks ran instead) and the same XDMF sidecar, for heat 2D/3D, Poisson 2D/3D, Maxwell 2D/3D
# (coefficients from a material box, a DFT monitor's spectra), float and double, fields of one row of
# chunks and of several, slabs along each axis and blocks, np 1..4.  A failing rank (a NaN in its
# part) leaves the old file and its sidecar as they were and no temporary; rank 0 failing as it writes
# stops every rank with its message; a new file replaces the old one by a rename (another link to the
# old one keeps it); --parts with an .h5 output is refused.
# usage: test_mpi_h5.sh PYRGRID MPIEXEC NUMPROC_FLAG [MPIEXEC FLAGS...]   (77 without mpirun, HDF5 or h5py)
set -u
py=/usr/bin/python3
[ -x $py ] && $py -c "import h5py, numpy" 2> /dev/null || { echo "no h5py for $py: skipped"; exit 77; }
. "$(dirname "${BASH_SOURCE[0]}")/../mpi_launch.sh" "$@"

# Every object of A in B and no other; datasets: shape, type, chunks, filters, virtual or not, the
# values' bytes; attributes of every object equal (references by the names they point to), except
# the root's plan and run, which describe the execution: over ranks they must name the rank count.
cat > same.py << 'EOF'
import json, sys
import h5py, numpy as np
a, b, ranks = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r"), int(sys.argv[3])
errs = []
def norm(f, v):
    if isinstance(v, h5py.Reference):
        return ("ref", f[v].name if v else None)
    if isinstance(v, np.ndarray):
        if v.dtype.kind == "O":
            return ("objects", [norm(f, x) for x in v.ravel()])
        if v.dtype.names:
            return ("compound", [tuple(norm(f, x) for x in row) for row in v.ravel()])
        return ("array", v.dtype.str, v.shape, v.tobytes())
    if isinstance(v, (bytes, str)):
        return ("text", v)
    if isinstance(v, np.generic):
        return ("scalar", v.dtype.str, v.tobytes())
    return ("other", repr(v))
def objects(f):
    out = {"/": f["/"]}
    f.visititems(lambda n, o: out.__setitem__(n, o))
    return out
oa, ob = objects(a), objects(b)
if set(oa) != set(ob):
    errs.append("objects differ: %s" % sorted(set(oa) ^ set(ob)))
for n in sorted(set(oa) & set(ob)):
    x, y = oa[n], ob[n]
    if type(x) != type(y):
        errs.append("%s: a %s and a %s" % (n, type(x).__name__, type(y).__name__))
        continue
    if isinstance(x, h5py.Dataset):
        for k in ("shape", "dtype", "chunks", "compression", "compression_opts", "shuffle", "is_virtual"):
            if getattr(x, k) != getattr(y, k):
                errs.append("%s: %s %r, expected %r" % (n, k, getattr(y, k), getattr(x, k)))
        if x.shape == y.shape and x.dtype == y.dtype and np.asarray(x[()]).tobytes() != np.asarray(y[()]).tobytes():
            errs.append("%s: values differ" % n)
    if set(x.attrs) != set(y.attrs):
        errs.append("%s: attributes differ: %s" % (n, sorted(set(x.attrs) ^ set(y.attrs))))
    for k in sorted(set(x.attrs) & set(y.attrs)):
        if n == "/" and k in ("plan", "run"):
            continue
        if norm(a, x.attrs[k]) != norm(b, y.attrs[k]):
            errs.append("%s: attribute %s = %r, expected %r" % (n, k, y.attrs[k], x.attrs[k]))
for k in ("plan", "run"):
    if ranks > 1 and k in b.attrs and json.loads(b.attrs[k]).get("ranks") != ranks:
        errs.append("/: attribute %s does not say %d ranks: %s" % (k, ranks, b.attrs[k]))
for e in errs[:12]:
    print(e)
sys.exit(1 if errs else 0)
EOF

# ---------------------------------------------------------------- problems
# heat2: one row of chunks; heat2big: 601 x 457, three rows in double, two in float (last rows short);
# heat3/poisson3: 3D, two rows (poisson3 gzip); mx2: TE with CPML, a material box (ca, cb) and a DFT
# monitor; mx3: 3D with a material box (ca, cb, dh)
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
field = out.h5
EOF
cat > heat2big.ini << 'EOF'
[grid]
dims = 2
nx = 601
ny = 457
[scheme]
equation = heat
alpha = 1
dt = 5e-7
steps = 3
precision = double
[initial]
kind = random
seed = 7
[run]
backend = cpu
threads = 1
[output]
field = out.h5
EOF
cat > heat3.ini << 'EOF'
[grid]
dims = 3
nx = 71
ny = 67
nz = 59
[scheme]
equation = heat
alpha = 1
dt = 2e-5
steps = 2
precision = float
[initial]
kind = random
seed = 3
[run]
backend = cpu
threads = 1
[output]
field = out.h5
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
field = out.h5
EOF
cat > poisson3.ini << 'EOF'
[grid]
dims = 3
nx = 71
ny = 67
nz = 59
[scheme]
equation = poisson
iterations = 4
check_every = 2
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
field = out.h5
compression = 4
EOF
cat > mx2.ini << 'EOF'
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
[material]
shape1 = box 14 20 10 26 eps_r=4 sigma=0.1
[source]
source1 = Hz point 20 18 gaussian width=0.05 delay=0.15
[monitor]
dft1 = Hz point 30 20 freqs=8:40:5
[run]
backend = cpu
threads = 1
[output]
field = out.h5
EOF
cat > mx3.ini << 'EOF'
[grid]
dims = 3
nx = 19
ny = 17
nz = 23
[scheme]
equation = maxwell
courant = 0.5
steps = 8
precision = float
[material]
shape1 = box 4 9 3 12 6 15 eps_r=3 mu_r=2
[source]
source1 = Ez point 9 8 11 gaussian width=0.05 delay=0.15
[run]
backend = cpu
threads = 1
[output]
field = out.h5
EOF

# ---------------------------------------------------------------- the one-process files
mkdir -p ref
cases="heat2 heat2big heat3 poisson2 poisson3 mx2 mx3"
for c in $cases; do
  mkdir -p ref/$c
  (cd ref/$c && "$pyr" run ../../$c.ini -q > /dev/null 2> err.txt) || {
    grep -q -i "hdf5" ref/$c/err.txt && { echo "this pyrgrid writes no HDF5: skipped"; exit 77; }
    fail "one-process $c: $(cat ref/$c/err.txt)"
  }
done
mkdir -p ref/heat2big_float
(cd ref/heat2big_float && "$pyr" run ../../heat2big.ini -q --set scheme.precision=float > /dev/null) || fail "one-process heat2big float"
$py -c "
import h5py, sys
f = h5py.File('ref/heat2big/out.h5'); g = h5py.File('ref/heat3/out.h5'); m = h5py.File('ref/mx2/out.h5'); m3 = h5py.File('ref/mx3/out.h5')
assert f['u'].chunks[0] < 457 / 2 and g['u'].chunks[0] < 59, 'the big fields fit one row of chunks: the test would not write several'
assert all(k in m for k in ('ca', 'cb', 'monitors')) and all(k in m3 for k in ('cb', 'dh')), (sorted(m), sorted(m3))
" || fail "the reference files are not what the test needs"

# check NP CASE PART [ARGS...]: out.h5 and out.xmf of mpirun -np NP equal ref/CASE's
check() {
  local np=$1 c=$2 part=$3 ref=$2
  shift 3
  [ "${1:-}" = float ] && { ref=${c}_float; shift; set -- --set scheme.precision=float "$@"; }
  rm -f out.h5 out.xmf
  run_np $np run $c.ini --set run.partition=$part "$@" > run.txt 2> run.err || { fail "np $np $ref $part: $(cat run.err)"; return; }
  [ $np -gt 1 ] && { grep -q "ranks=$np" run.txt || fail "np $np $ref $part ran in one process: $(cat run.txt)"; }
  $py same.py ref/$ref/out.h5 out.h5 $np > same.txt || fail "np $np $ref $part: out.h5 differs from one process's: $(cat same.txt)"
  if [ -e ref/$ref/out.xmf ]; then cmp -s out.xmf ref/$ref/out.xmf || fail "np $np $ref $part: out.xmf differs from one process's"; fi
  [ -z "$(temps)" ] || fail "np $np $ref $part left temporaries: $(temps)"
  ls out*.npy out*.parts.json > /dev/null 2>&1 && fail "np $np $ref $part wrote .npy files as well"
}

# ---------------------------------------------------------------- the one-process file from every np
for np in 1 2 3 4; do check $np heat2 auto; done
check 3 heat2 3x1x1
check 3 heat2 1x3x1
check 4 heat2 blocks
check 3 heat2big 1x3x1
check 2 heat2big 2x1x1 float
check 4 heat2big 2x2x1
check 3 heat3 1x1x3
check 3 heat3 3x1x1
check 4 heat3 1x2x2
check 2 poisson2 1x2x1
check 4 poisson2 blocks
check 3 poisson3 1x3x1
check 4 poisson3 2x1x2
check 3 mx2 1x3x1
check 4 mx2 2x2x1
check 2 mx3 1x1x2
check 3 mx3 3x1x1
[ $fails = 0 ] && echo "np 1-4: heat 2D/3D, Poisson 2D/3D, Maxwell 2D/3D, float and double, one and several rows of chunks, slabs along x, y, z and blocks: the one-process file"

# ---------------------------------------------------------------- an old file: replaced by a rename
cp ref/heat2/out.h5 keep.h5 && printf 'old' > keep.h5 && ln keep.h5 keep_link.h5
run_np 2 run heat2.ini --set output.field=keep.h5 > /dev/null 2> run.err || fail "np 2 over an old file: $(cat run.err)"
$py same.py ref/heat2/out.h5 keep.h5 2 > same.txt || fail "np 2 over an old file: not the result: $(cat same.txt)"
[ "$(cat keep_link.h5)" = old ] || fail "np 2 wrote the old file in place (its other link changed)"

# ---------------------------------------------------------------- failures keep the old file
printf 'old result' > x.h5
printf 'old sidecar' > x.xmf
# a failing rank (a NaN in rank 2's part of the initial field): every rank stops, rank 2's message
$py - << 'EOF' || fail "making nan.npy"
import numpy as np
a = np.random.default_rng(1).random((47, 61))
a[45, 30] = np.nan  # rank 2's rows of 3 slabs
np.save("nan.npy", a)
EOF
run_np 3 run heat2.ini --set output.field=x.h5 --set initial.kind=file --set initial.file=nan.npy --set run.partition=slabs --set run.exchange=1 \
  > /dev/null 2> f.err
rc=$?
[ $rc = 1 ] || fail "a failing rank: exit $rc, expected 1"
grep -q "error: rank 2: initial.file: .*NaN at index \[45, 30\]" f.err || fail "a failing rank's message: $(cat f.err)"
[ "$(cat x.h5)" = "old result" ] || fail "a failing rank changed the old x.h5"
[ "$(cat x.xmf)" = "old sidecar" ] || fail "a failing rank changed the old x.xmf"
[ -z "$(temps)" ] || fail "a failing rank left temporaries: $(temps)"
# rank 0 failing as it writes (HDF5 takes no device): the ranks waiting to send their rows stop with its message
if [ -w /dev/full ]; then
  ln -s /dev/full dev.h5
  timeout 120 "$mpiexec" "$npflag" 3 "${flags[@]}" "$pyr" run heat2.ini --set output.field=dev.h5 > /dev/null 2> d.err
  rc=$?
  [ $rc = 1 ] || fail "rank 0 failing in the write: exit $rc, expected 1 (124: the others hung)"
  grep -q "error: rank 0: output.field: dev.h5 is not a regular file" d.err || fail "rank 0 failing in the write: $(cat d.err)"
  [ -z "$(temps)" ] || fail "rank 0 failing in the write left temporaries: $(temps)"
fi
# --parts writes .npy parts: with an HDF5 output it is refused, once, before the run
run_np 2 run heat2.ini --parts --set output.field=x.h5 > /dev/null 2> p.err && fail "np 2 --parts accepted an HDF5 output"
grep -q "\-\-parts writes each rank's part as NAME.rankNNNN.npy, but output.field = x.h5 is an HDF5 result" p.err ||
  fail "np 2 --parts with x.h5: $(cat p.err)"
[ "$(grep -c 'error:' p.err)" = 1 ] || fail "the --parts refusal was printed $(grep -c 'error:' p.err) times"
[ "$(cat x.h5)" = "old result" ] || fail "a refused run changed the old x.h5"
# snapshots over ranks stay refused, with the reason
run_np 2 run heat2.ini --set output.field=x.h5 --set output.every=5 > /dev/null 2> s.err && fail "np 2 accepted HDF5 snapshots"
grep -q "output.every (snapshots) is not supported in runs over several MPI ranks" s.err || fail "np 2 snapshots: $(cat s.err)"
[ "$(cat x.h5)" = "old result" ] || fail "a refused snapshot run changed the old x.h5"

finish "ok"
