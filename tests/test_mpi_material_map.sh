#!/usr/bin/env bash
# A Maxwell material map ([material] map, label1 ..) over MPI ranks: mpirun -np 2 and 3 of a
# problem whose dispersive boxes (Drude; Lorentz with Debye) are given as a label map write the
# bytes of the single-process run of the boxes themselves (fields and probes), as does the map over
# two parts in one process.
# usage: test_mpi_material_map.sh PYRGRID MPIEXEC NUMPROC_FLAG [MPIEXEC FLAGS...]
set -u
. "$(dirname "${BASH_SOURCE[0]}")/mpi_launch.sh"

# the boxes' nodes (node i at x = i h, h = 0.05, inside when lo <= x <= hi: the library's test), as int16 labels
/usr/bin/python3 - <<'EOF'
import struct
h, nx, ny = 0.05, 41, 31
boxes = [(0.82, 1.18, 0.52, 0.98), (1.23, 1.47, 0.33, 1.12)]
lab = [0] * (nx * ny)
for k, (x0, x1, y0, y1) in enumerate(boxes):
    for j in range(ny):
        for i in range(nx):
            if x0 <= i * h <= x1 and y0 <= j * h <= y1:
                lab[j * nx + i] = k + 1
hdr = "{'descr': '<i2', 'fortran_order': False, 'shape': (31, 41), }"
hdr += " " * ((64 - (10 + len(hdr) + 1) % 64) % 64) + "\n"
open("labels.npy", "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() + struct.pack("<%dh" % len(lab), *lab))
EOF
base='[grid]
dims = 2
nx = 41
ny = 31
lx = 2.0
ly = 1.5
[scheme]
equation = maxwell
courant = 0.5
steps = 60
[boundary]
kind = cpml
cpml_cells = 6
[source]
source1 = Ez point 10 15 ricker frequency=2 delay=0.6
[probe]
probe1 = Ez 30 15
probe2 = Hy 20 7
[run]
backend = cpu
threads = 1
[material]'
printf '%s\nshape1 = box 0.82 1.18 0.52 0.98 eps_r=2 drude=1.5 0.1\nshape2 = box 1.23 1.47 0.33 1.12 eps_r=1.5 sigma=0.2 lorentz=1.2 2 0.3 debye=2 0.5\n' "$base" > shapes.ini
printf '%s\nmap = labels.npy\nlabel1 = eps_r=2 drude=1.5 0.1\nlabel2 = eps_r=1.5 sigma=0.2 lorentz=1.2 2 0.3 debye=2 0.5\n' "$base" > map.ini

"$pyr" run shapes.ini -q --set output.field=ref.npy --set output.probes=ref.csv || fail "the boxes' run failed"
"$pyr" run map.ini -q --set output.field=parts.npy --set output.probes=parts.csv --set run.devices=0,0 || fail "the map over two parts failed"
for c in Ez Hx Hy; do cmp -s parts_$c.npy ref_$c.npy && ok || fail "the map over two parts: $c differs from the boxes'"; done
cmp -s parts.csv ref.csv && ok || fail "the map over two parts: the probes differ"
for np in 2 3; do
  run_np "$np" run map.ini -q --set output.field=np$np.npy --set output.probes=np$np.csv ||
    fail "np $np: the map's run failed"
  for c in Ez Hx Hy; do cmp -s np${np}_$c.npy ref_$c.npy && ok || fail "np $np: $c differs from the boxes' single-process run"; done
  cmp -s np$np.csv ref.csv && ok || fail "np $np: the probes differ"
done
finish "a label map over MPI ranks and parts: the bytes of the boxes' run"
