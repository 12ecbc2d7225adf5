#!/usr/bin/env bash
# pyrgrid run of Maxwell from initial.kind = zero: the components are made as
# pages that read as zero and an in-core run sets them on the device (with
# the CPML states) instead of uploading them; the result equals, byte for
# byte, a run that streams its pieces every step (uploading those zeros),
# with the heap perturbed so that device buffers left unset hold garbage;
# over two parts too (on a GPU: two contexts of device 0).
# usage: test_cli_zero_start.sh PYRGRID [BACKEND]
set -u
. "$(dirname "${BASH_SOURCE[0]}")/cli/common.sh"
pyr_setup "$1"
backend=${2:-cpu}
need_gpu "$backend"
cat > m.ini <<'EOF2'
[grid]
dims = 2
nx = 43
ny = 37
lx = 4.3
ly = 3.7
[scheme]
equation = maxwell
mode = te
courant = 0.5
steps = 40
precision = float
[initial]
kind = zero
[boundary]
kind = cpml
cpml_cells = 6
faces = all
[source]
source1 = Hz point 15 18 ricker frequency=0.8 delay=1.5
[output]
field = ref.npy
EOF2
export MALLOC_PERTURB_=165
"$pyr" run m.ini -q --set run.backend=$backend --set run.method=trivial > /dev/null || fail "streamed every step"
"$pyr" run m.ini -q --set run.backend=$backend --set run.method=naive --set output.field=core.npy > /dev/null || fail "in core"
"$pyr" run m.ini -q --set run.backend=$backend --set run.method=naive --set run.devices=0,0 --set output.field=parts.npy > /dev/null ||
  fail "in core over two parts"
n=0
for ref in ref_*.npy; do
  c=${ref#ref_}
  n=$((n + 1))
  cmp -s "$ref" "core_$c" || fail "in core: $c differs from the streamed run's"
  cmp -s "$ref" "parts_$c" || fail "two parts: $c differs from the streamed run's"
done
[ "$n" -ge 3 ] || fail "$n component files written (ref_*.npy), 3 expected: $(ls)"
# the run is not all zeros: the source reached the components
python=/usr/bin/python3
if "$python" -c 'import numpy' 2>/dev/null; then
  "$python" -c 'import numpy as np, sys; sys.exit(0 if np.abs(np.load("ref_Hz.npy")).max() > 0 else 1)' || fail "Hz is all zeros"
fi
finish "pass"
