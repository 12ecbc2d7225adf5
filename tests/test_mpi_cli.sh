#!/usr/bin/env bash
# mpirun -np P pyrgrid run (issue 25): each rank writes its part and rank 0
# the index; pyrgrid assemble makes one .npy equal, byte for byte, to the
# single-process run's (heat and Poisson, initial.kind = file read in parts,
# a Poisson stop at a check); a NaN in one rank's part of initial.file stops
# every rank with that rank's message, as do fields that diverge (a probe's
# value, a rank's box at the end: nothing written); too many ranks for the
# grid, and the long-vector method (one GPU only), are refused.
# usage: test_mpi_cli.sh PYRGRID MPIEXEC NUMPROC_FLAG [MPIEXEC FLAGS...]
set -u
. "$(dirname "${BASH_SOURCE[0]}")/cli/common.sh"
pyr_setup "$1"
mpiexec=$2
npflag=$3
shift 3
flags=("$@")
run_np() { # NP ARGS...: pyrgrid under mpirun, writing the parts and their index (run --parts;
  # one output file, the default, is test_mpi_onefile.sh's)
  local np=$1
  shift
  "$mpiexec" "$npflag" "$np" "${flags[@]}" "$pyr" "$@" --parts
}

cat > heat.ini <<'EOF'
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
cat > poisson.ini <<'EOF'
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

"$pyr" run heat.ini -q --set output.field=heat_ref.npy > /dev/null || fail "single-process heat run"
"$pyr" run poisson.ini -q --set output.field=poisson_ref.npy > poisson_ref.txt || fail "single-process Poisson run"
sweeps_ref=$(grep -o 'sweeps=[0-9]*' poisson_ref.txt)
# the initial field from a file, each rank reading its part of it
cp heat_ref.npy init.npy

for np in 2 3 4; do
  rm -f out.*
  run_np "$np" run heat.ini > heat_$np.txt 2> heat_$np.err || fail "np $np heat run: $(cat heat_$np.err)"
  grep -q "ranks=$np parts=$np H=[0-9]* exchanges=[0-9]* halo_sent=[0-9]* halo_received=" heat_$np.txt || fail "np $np summary: $(cat heat_$np.txt)"
  n=$(ls out.rank*.npy 2> /dev/null | wc -l)
  [ "$n" = "$np" ] || fail "np $np wrote $n parts"
  "$pyr" assemble out.parts.json heat_$np.npy -q || fail "np $np assemble"
  cmp -s heat_$np.npy heat_ref.npy || fail "np $np heat differs from one process"

  rm -f out.*
  part=slabs
  [ "$np" = 4 ] && part=blocks
  run_np "$np" run heat.ini --set initial.kind=file --set initial.file=init.npy --set run.partition=$part --set run.exchange=3 \
    --set run.method=pyramid --set run.memory=16K > file_$np.txt 2> file_$np.err || fail "np $np file run: $(cat file_$np.err)"
  "$pyr" run heat.ini -q --set initial.kind=file --set initial.file=init.npy --set output.field=file_ref.npy > /dev/null || fail "file reference"
  "$pyr" assemble out.parts.json file_$np.npy -q && cmp -s file_$np.npy file_ref.npy || fail "np $np: initial.file in parts differs"

  rm -f out.*
  run_np "$np" run poisson.ini > poisson_$np.txt 2> poisson_$np.err || fail "np $np Poisson run: $(cat poisson_$np.err)"
  grep -q "$sweeps_ref " poisson_$np.txt || fail "np $np Poisson: $(grep -o 'sweeps=[0-9]*' poisson_$np.txt), one process $sweeps_ref"
  grep -q "converged=yes" poisson_$np.txt || fail "np $np Poisson did not converge"
  "$pyr" assemble out.parts.json poisson_$np.npy -q && cmp -s poisson_$np.npy poisson_ref.npy || fail "np $np Poisson differs"
done

# Maxwell (2D TE with CPML, a lossy dielectric disk, a line source and probes; 3D with CPML on two faces
# and a lossy box): every component and the probes' CSV from 2 and 3 ranks (and three devices of one
# process) equal one process's, byte for byte
cat > mx.ini <<'EOF'
[grid]
dims = 2
nx = 61
ny = 53
lx = 3
ly = 2.6
[scheme]
equation = maxwell
mode = te
courant = 0.6
steps = 70
precision = double
[boundary]
kind = cpml
cpml_cells = 6
faces = all
[material]
shape1 = sphere 1.8 1.3 0.5 eps_r=4 sigma=0.3
[source]
source1 = Hz line 12 8 12 44 ricker frequency=1.5 delay=0.7
[probe]
probe1 = Hz 30 26
probe2 = Ex 50 40
probe3 = Ey 7 7
[output]
field = mx.npy
probes = mx_probes.csv
EOF
cat > mx3.ini <<'EOF'
[grid]
dims = 3
nx = 21
ny = 19
nz = 23
[scheme]
equation = maxwell
courant = 0.5
steps = 25
precision = float
[boundary]
kind = cpml
cpml_cells = 4
faces = z-,z+
[material]
shape1 = box 0.3 0.7 0.2 0.6 0.4 0.9 eps_r=3 sigma=2
[source]
source1 = Ez point 10 9 6 gaussian width=0.05 delay=0.15
[probe]
probe1 = Ez 10 9 16
probe2 = Hx 3 3 6
[output]
field = mx3.npy
probes = mx3_probes.csv
EOF
"$pyr" run mx.ini -q --set output.field=mxref.npy --set output.probes=mxref_probes.csv > /dev/null || fail "Maxwell reference run"
"$pyr" run mx3.ini -q --set output.field=mx3ref.npy --set output.probes=mx3ref_probes.csv > /dev/null || fail "Maxwell 3D reference run"
"$pyr" run mx.ini -q --set run.devices=0,0,0 --set output.field=mxdev.npy --set output.probes=mxdev_probes.csv > /dev/null ||
  fail "Maxwell over three devices of one process"
for c in Hz Ex Ey; do cmp -s mxdev_$c.npy mxref_$c.npy || fail "Maxwell over three devices: $c differs"; done
cmp -s mxdev_probes.csv mxref_probes.csv || fail "Maxwell over three devices: the probes differ"
for np in 2 3; do
  rm -f mx_*.npy mx_*.json mx_probes.csv
  run_np "$np" run mx.ini --set run.method=pyramid --set run.memory=64K > mx_$np.txt 2> mx_$np.err || fail "np $np Maxwell run: $(cat mx_$np.err)"
  grep -q "equation=maxwell mode=te ranks=$np parts=$np" mx_$np.txt || fail "np $np Maxwell summary: $(cat mx_$np.txt)"
  for c in Hz Ex Ey; do
    "$pyr" assemble mx_$c.parts.json mx_${c}_$np.npy -q && cmp -s mx_${c}_$np.npy mxref_$c.npy || fail "np $np Maxwell $c differs from one process"
  done
  ls mx_Ez.parts.json > /dev/null 2>&1 && fail "np $np Maxwell TE wrote Ez"
  cmp -s mx_probes.csv mxref_probes.csv || fail "np $np Maxwell probes differ from one process"
  rm -f mx3_*.npy mx3_*.json mx3_probes.csv
  run_np "$np" run mx3.ini > mx3_$np.txt 2> mx3_$np.err || fail "np $np Maxwell 3D run: $(cat mx3_$np.err)"
  for c in Ex Ey Ez Hx Hy Hz; do
    "$pyr" assemble mx3_$c.parts.json mx3_${c}_$np.npy -q && cmp -s mx3_${c}_$np.npy mx3ref_$c.npy || fail "np $np Maxwell 3D $c differs"
  done
  cmp -s mx3_probes.csv mx3ref_probes.csv || fail "np $np Maxwell 3D probes differ from one process"
done

# HDF5 (issue 24): ranks read their hyperslab of an HDF5 result (a restart
# from its step); HDF5 outputs with --parts and --report are refused, once, before the run
if "$pyr" run heat.ini -q --set grid.nx=5 --set grid.ny=5 --set output.field=probe.h5 > /dev/null 2>&1; then
  "$pyr" run heat.ini -q --set scheme.steps=10 --set output.field=half.h5 > /dev/null || fail "HDF5 half run"
  "$pyr" run heat.ini -q --set initial.kind=file --set initial.file=half.h5 --set output.field=rest_ref.npy > /dev/null ||
    fail "single-process restart from HDF5"
  for np in 2 3; do
    rm -f out.*
    run_np "$np" run heat.ini --set initial.kind=file --set initial.file=half.h5 --set run.partition=slabs > h5_$np.txt 2> h5_$np.err ||
      fail "np $np restart from HDF5: $(cat h5_$np.err)"
    grep -q "steps=13 " h5_$np.txt || fail "np $np restart from step 10 of 23: $(cat h5_$np.txt)"
    "$pyr" assemble out.parts.json h5_$np.npy -q && cmp -s h5_$np.npy rest_ref.npy || fail "np $np: HDF5 initial.file in parts differs"
  done
  rm -f out.*
  run_np 2 run heat.ini --set output.field=out.h5 > h5out.txt 2> h5out.err && fail "np 2 --parts accepted an HDF5 output"
  grep -q "\-\-parts writes each rank's part as NAME.rankNNNN.npy, but output.field = out.h5 is an HDF5 result" h5out.err ||
    fail "np 2 --parts with out.h5: $(cat h5out.err)"
  [ "$(grep -c 'error:' h5out.err)" = 1 ] || fail "the HDF5 refusal was printed $(grep -c 'error:' h5out.err) times"
  ls out.* > /dev/null 2>&1 && fail "a refused HDF5 run left outputs: $(ls out.*)"
  run_np 2 run heat.ini --report r.json > rep.txt 2> rep.err && fail "np 2 accepted --report"
  grep -q "\-\-report is not written by runs over several MPI ranks" rep.err || fail "np 2 --report: $(cat rep.err)"
  [ -e r.json ] && fail "a refused run wrote its report"
else
  echo "note: no HDF5 in this build: the MPI runs from HDF5 files are not tested"
fi

# a NaN in the last rank's part of the initial field: every rank stops, with that rank's message
python3 - << 'EOF' || fail "making nan.npy"
import struct
b = bytearray(open("init.npy", "rb").read())
data = 10 + (b[8] | b[9] << 8)  # a version 1.0 header
b[data + (45 * 61 + 30) * 8:data + (45 * 61 + 31) * 8] = struct.pack("<d", float("nan"))  # [45, 30]: rank 2's rows
open("nan.npy", "wb").write(b)
EOF
rm -f out.*
run_np 3 run heat.ini --set initial.kind=file --set initial.file=nan.npy --set run.partition=slabs --set run.exchange=1 > nan.txt 2> nan.err
rc=$?
[ $rc = 1 ] || fail "a NaN in one part: exit $rc, expected 1"
grep -q "rank 2: initial.file: .*NaN at index \[45, 30\]" nan.err || fail "a NaN in rank 2's part: $(cat nan.err)"
[ "$(grep -c 'error:' nan.err)" = 1 ] || fail "the error was printed $(grep -c 'error:' nan.err) times: $(cat nan.err)"
ls out.* > /dev/null 2>&1 && fail "a failed run left outputs: $(ls out.*)"

# diverged fields (reliability review: MPI divergence): the probes' values and each rank's box are
# checked before anything is written; every rank exits 1, the failing rank's message is printed once,
# naming the node as one process does, and no part, index or probes CSV is written
cat > dv.ini <<'EOF'
[grid]
dims = 2
nx = 41
ny = 37
[scheme]
equation = maxwell
courant = 0.5
steps = 40
precision = float
[boundary]
kind = pec
[source]
source1 = Ez point 20 18 gaussian width=0.5 delay=1 amplitude=1e38
[probe]
probe1 = Ez 10 10
[run]
backend = cpu
threads = 1
[output]
field = dv.npy
probes = dv.csv
EOF
grep -v -E '^\[probe\]|^probe1|^probes' dv.ini > dv_noprobe.ini
diverged() { # LABEL PATTERN NP ARGS...
  local label=$1 pattern=$2 np=$3
  shift 3
  rm -f out.* dv_*.npy dv_*.json dv.csv
  timeout 120 "$mpiexec" "$npflag" "$np" "${flags[@]}" "$pyr" "$@" > dv.txt 2> dv.err
  local rc=$?
  [ $rc = 1 ] || fail "$label: exit $rc, expected 1: $(cat dv.err)"
  grep -qE -- "$pattern" dv.err || fail "$label: the message: $(cat dv.err)"
  [ "$(grep -c 'error:' dv.err)" = 1 ] || fail "$label: the error was printed $(grep -c 'error:' dv.err) times: $(cat dv.err)"
  local left
  left=$(ls out.* dv_*.npy dv_*.json dv.csv 2> /dev/null)
  [ -z "$left" ] || fail "$label: a diverged run wrote" $left
}
# Maxwell in float, a source past the largest float: the probe (its series kept on rank 0) reads it first
diverged "Maxwell diverged, a probe" "error: rank 0: the fields diverged \(non-finite\) at step [0-9]+: probe 1 \(Ez 10 10\) reads" 2 run dv.ini
# no probes: the fields at the end, overflowing in rank 1's box only (a source near the top, two steps),
# at the node one process names
big=(--set scheme.steps=2 --set "source.source1=Ez point 20 33 gaussian width=0.05 delay=0 amplitude=1e39")
"$pyr" run dv_noprobe.ini -q "${big[@]}" --set output.field= > /dev/null 2> dv1.err && fail "Maxwell diverged in one process: exit 0"
node=$(grep -o 'Ez is [^ ]* at node ([^)]*)' dv1.err)
[ -n "$node" ] || fail "Maxwell diverged in one process: $(cat dv1.err)"
node=${node//[()+]/.}
diverged "Maxwell diverged, the fields of rank 1" "error: rank 1: the fields diverged \(non-finite\) by step 2 \(the end of the run\): $node" 2 \
  run dv_noprobe.ini "${big[@]}"
# heat: values near the largest double in rank 1's rows overflow there
python3 - << 'EOF' || fail "making big.npy"
import struct
b = bytearray(open("init.npy", "rb").read())
data = 10 + (b[8] | b[9] << 8)  # a version 1.0 header
for j, i, v in ((40, 30, 1.7e308), (40, 31, -1.7e308)):
    b[data + (j * 61 + i) * 8:data + (j * 61 + i + 1) * 8] = struct.pack("<d", v)
open("big.npy", "wb").write(b)
EOF
diverged "heat diverged" "error: rank 1: the fields diverged \(non-finite\) by step 3 \(the end of the run\): u is -inf at node \(x=30, y=38\)" 2 \
  run heat.ini --set initial.kind=file --set initial.file=big.npy --set scheme.steps=3 --set run.partition=slabs

# a problem that is wrong: rank 0 says why, once
run_np 2 run heat.ini --set grid.nx=2 > bad.txt 2> bad.err
rc=$?
[ $rc = 1 ] || fail "a bad grid under mpirun: exit $rc"
grep -q "error: .*grid.nx = 2: each axis needs at least 3 nodes" bad.err || fail "a bad grid under mpirun: $(cat bad.err)"
run_np 2 run mx3.ini --set probe.probe2="Hx 3 3 3" > bad.txt 2> bad.err
grep -q "error: .*probe 2: node (3, 3, 3) lies inside the CPML" bad.err || fail "a probe in the CPML under mpirun: $(cat bad.err)"
# monitors: every node's transforms from the rank owning it, rank 0 writes the one-process spectra
# (tests/cli/test_mpi_monitors.sh checks them over np 1..4 and partitions)
run_np 2 run mx3.ini --set monitor.dft1="Ez point 8 8 8 freqs=5" --set output.spectra=sp.csv > mon.txt 2> mon.err || fail "monitors under mpirun: $(cat mon.err)"
"$pyr" run mx3.ini -q --set monitor.dft1="Ez point 8 8 8 freqs=5" --set output.spectra=sp1.csv > /dev/null 2> mon1.err || fail "monitors, one process: $(cat mon1.err)"
cmp -s sp.csv sp1.csv || fail "monitors under mpirun: the spectra differ from one process's"

# too many ranks for the grid
run_np 4 run heat.ini --set grid.nx=5 --set grid.ny=3 > many.txt 2> many.err
rc=$?
[ $rc = 1 ] || fail "too many ranks: exit $rc"
grep -q "error: rank 0: too many parts: 4 (4 ranks x 1 device) cannot cut the 5 x 3 grid" many.err || fail "too many ranks: $(cat many.err)"

# the long-vector method runs on one GPU: refused over ranks, on every machine, before any device is looked at
run_np 2 run heat.ini --set run.method=longvector --set run.backend=auto > lv.txt 2> lv.err
rc=$?
[ $rc = 1 ] || fail "method = longvector over 2 ranks: exit $rc"
grep -q "error: rank 0: method = longvector runs on one GPU, and this run cuts the grid into 2 parts (2 MPI ranks)" lv.err ||
  fail "method = longvector over 2 ranks: $(cat lv.err)"
[ "$(grep -c 'error:' lv.err)" = 1 ] || fail "the long-vector refusal was printed $(grep -c 'error:' lv.err) times: $(cat lv.err)"

# assemble refuses indexes whose parts do not tile the array
printf '{"format": "pyrgrid-parts", "version": 1, "dims": 2, "shape": [47, 61], "dtype": "<f8", "parts": [{"file": "heat_ref.npy", "offset": [0, 0], "shape": [47, 61]}, {"file": "heat_ref.npy", "offset": [0, 0], "shape": [47, 61]}]}' > bad.json
"$pyr" assemble bad.json x.npy 2> bad.err && fail "assemble accepted overlapping parts"
grep -q "overlap" bad.err || fail "assemble: $(cat bad.err)"
printf '{"format": "pyrgrid-parts", "version": 1, "dims": 2, "shape": [48, 61], "dtype": "<f8", "parts": [{"file": "heat_ref.npy", "offset": [0, 0], "shape": [47, 61]}]}' > bad.json
"$pyr" assemble bad.json x.npy 2> bad.err && fail "assemble accepted a missing part"
grep -q "a part is missing" bad.err || fail "assemble: $(cat bad.err)"

finish "mpirun pyrgrid run: np 2, 3, 4 equal to one process (heat, Poisson, Maxwell); failures stop every rank"
