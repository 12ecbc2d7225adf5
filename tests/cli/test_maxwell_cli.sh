#!/usr/bin/env bash
# The Maxwell (FDTD) scheme from the command line (issue 21): the three
# examples run (shrunk) and write every output they name; the pyramid method
# in a small budget gives the naive method's bytes, probes included;
# snapshots; and bad input (an unstable dt, CPML thicker than the grid, a
# source inside the CPML or outside the grid, a material file of the wrong
# shape or with eps_r <= 0, a NaN, a component of the other mode) is refused
# with a message naming the fix, before anything is written and without
# touching existing outputs; fields that diverge (overflow to inf/NaN) stop
# the run with a message and write nothing.   usage: test_maxwell_cli.sh PYRGRID SOURCE_DIR
set -u
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
pyr_setup "$1"
bin=$pyr
src=$2
cpu=(--set run.backend=cpu --set run.threads=2)

# the waveguide, shrunk: outputs per component, the image, the probes
wg=(--set grid.nx=161 --set grid.ny=81 --set grid.lx=16 --set grid.ly=8 --set scheme.steps=300 --set boundary.cpml_cells=10
    --set source.source1="Ez point 20 40 sine frequency=0.15 width=20" --set probe.probe1="Ez 140 40" --set probe.probe2="Ez 140 60")
out=$("$bin" run "$src/examples/maxwell_waveguide.ini" "${cpu[@]}" "${wg[@]}" --set output.field=a.npy --set output.probes=a.csv \
  --set output.image=a.png --set run.method=naive 2>&1)
rc=$?
[ $rc -eq 0 ] && echo "$out" | grep -q "equation=maxwell mode=tm" && [ -s a_Ez.npy ] && [ -s a_Hx.npy ] && [ -s a_Hy.npy ] && [ ! -e a_Ex.npy ] \
  && [ -s a.png ] && [ -s a.csv ] && ok || bad "waveguide: rc=$rc $out"
head -1 a.csv | grep -q "^step,t,Ez(140;40),Ez(140;60)$" && [ "$(wc -l < a.csv)" -eq 301 ] && ok || bad "probes.csv: $(head -2 a.csv)"
# the pyramid method in a small budget: the same bytes, probes included
out=$("$bin" run "$src/examples/maxwell_waveguide.ini" "${cpu[@]}" "${wg[@]}" --set output.field=b.npy --set output.probes=b.csv \
  --set output.image= --set run.method=pyramid --set run.memory=256K --set run.height=9 2>&1)
echo "$out" | grep -q "method=pyramid" && cmp -s a_Ez.npy b_Ez.npy && cmp -s a_Hx.npy b_Hx.npy && cmp -s a_Hy.npy b_Hy.npy && cmp -s a.csv b.csv \
  && ok || bad "pyramid differs: $out"

# the cavity (3D, snapshots) and the scatterer (TE), shrunk
out=$("$bin" run "$src/examples/maxwell_cavity.ini" "${cpu[@]}" --set grid.nx=21 --set grid.ny=17 --set grid.nz=13 --set scheme.steps=40 \
  --set source.source1="Ez point 6 5 4 gaussian width=0.05 delay=0.2" --set probe.probe1="Ez 13 10 6" --set probe.probe2="Hx 4 12 6" \
  --set output.every=20 --set output.field=c.npy --set output.probes=c.csv --set output.image=c.png 2>&1)
rc=$?
[ $rc -eq 0 ] && for c in Ex Ey Ez Hx Hy Hz; do [ -s c_$c.npy ] && [ -s c_${c}_000020.npy ] && [ -s c_${c}_000040.npy ] || exit 9; done \
  && cmp -s c_Ez.npy c_Ez_000040.npy && [ -s c.png ] && ok || bad "cavity: rc=$rc $out $(ls)"
out=$("$bin" run "$src/examples/maxwell_scatterer.ini" "${cpu[@]}" --set grid.nx=121 --set grid.ny=121 --set scheme.steps=100 \
  --set boundary.cpml_cells=10 --set source.source1="Hz line 20 11 20 109 ricker frequency=0.5 delay=3" --set probe.probe1="Hz 40 60" \
  --set probe.probe2="Hz 90 60" --set probe.probe3="Hz 90 20" --set output.field=s.npy --set output.probes=s.csv --set output.image=s.png 2>&1)
rc=$?
[ $rc -eq 0 ] && echo "$out" | grep -q "mode=te" && [ -s s_Hz.npy ] && [ -s s_Ex.npy ] && [ -s s_Ey.npy ] && ok || bad "scatterer: rc=$rc $out"

# bad input: refused, nothing written, existing outputs untouched
echo keep > e_Ez.npy
cp e_Ez.npy keep.npy
expect_error() { # name, text the message must contain, args...
  local name=$1 text=$2
  shift 2
  local o
  o=$("$bin" run "$src/examples/maxwell_waveguide.ini" "${cpu[@]}" "${wg[@]}" --set output.field=e.npy --set output.probes=e.csv \
    --set output.image=e.png "$@" 2>&1)
  local r=$?
  [ $r -ne 0 ] && echo "$o" | grep -q -- "$text" && [ ! -e e.csv ] && [ ! -e e.png ] && [ ! -e e_Hx.npy ] && cmp -s e_Ez.npy keep.npy \
    && ok || bad "$name: rc=$r $o"
}
expect_error unstable "courant <=" --set scheme.courant=1.2
expect_error cpml-thick "cpml_cells <=" --set boundary.cpml_cells=40
expect_error source-in-cpml "inside the CPML" --set source.source1="Ez point 5 40 sine frequency=0.15"
expect_error source-outside "outside the" --set source.source1="Ez point 400 40 sine frequency=0.15"
expect_error probe-outside "outside the" --set probe.probe2="Ez 140 90"
expect_error other-mode "TM: Ez Hx Hy" --set source.source1="Hz point 20 40 sine frequency=0.15"
expect_error waveform "not a waveform" --set source.source1="Ez point 20 40 square frequency=0.15"
expect_error kind "use pec or cpml" --set boundary.kind=absorbing
expect_error shape "not a shape" --set material.shape1="cone 1 2 3"
/usr/bin/python3 - <<'PY'
import numpy as np
np.save("eps_wrong.npy", np.full((161, 81), 2.0))
np.save("eps_neg.npy", np.where(np.arange(81 * 161).reshape(81, 161) == 400, -1.0, 2.0))
a = np.full((81, 161), 2.0); a[3, 7] = np.nan
np.save("eps_nan.npy", a)
np.save("eps_f32.npy", np.full((81, 161), 2.0, dtype=np.float32))
PY
expect_error eps-shape "expected (81, 161)" --set material.eps_file=eps_wrong.npy --set scheme.precision=double
expect_error eps-negative "x=78, y=2" --set material.eps_file=eps_neg.npy --set scheme.precision=double
expect_error eps-nan "finite" --set material.eps_file=eps_nan.npy --set scheme.precision=double
expect_error eps-dtype "float64" --set material.eps_file=eps_f32.npy --set scheme.precision=double
expect_error eps-missing "eps_file" --set material.eps_file=missing.npy
expect_error clobber-input "problem file" --set output.probes="$src/examples/maxwell_waveguide.ini"
# reliability review L7: a probe where its component is never updated records only zeros (sources were refused there)
expect_error probe-pec "probe 2: Ez is not updated at index 0 along x (a PEC face" --set boundary.kind=pec --set probe.probe2="Ez 0 0"
expect_error probe-pec-face "index 0 along y (a PEC face" --set boundary.faces=x- --set probe.probe2="Ez 40 0"
expect_error probe-half-cell "index 80 along y (the unused last half-cell" --set boundary.faces=x- --set probe.probe2="Hx 40 80"
# reliability review L8: an empty box (x0 > x1) and an option given twice were accepted
expect_error box-reversed "the box runs from x = 7 to x = 1, so it is empty" --set material.shape1="box 7 1 3.5 2.5 eps_r=4"
expect_error cylinder-reversed "so it is empty" --set grid.dims=3 --set grid.nz=41 --set grid.lz=4 --set scheme.steps=2 \
  --set material.shape1="cylinder z 8 4 1 3 1 eps_r=4" --set source.source1="Ez point 20 40 20 sine frequency=0.15" \
  --set probe.probe1="Ez 140 40 20" --set probe.probe2="Ez 140 60 20"
expect_error option-twice "the option eps_r is given twice" --set material.shape1="box 0 16 3.5 4.5 eps_r=4 eps_r=5"
expect_error source-option-twice "the option amplitude is given twice" \
  --set source.source1="Ez point 20 40 sine frequency=0.15 amplitude=1 amplitude=2"
# reliability review L24: 1e-320 is finite (subnormal), not "not a finite number"
expect_error courant-subnormal "scheme.courant: '1e-320' is too small to compute with" --set scheme.courant=1e-320
o=$("$bin" run "$src/examples/maxwell_waveguide.ini" "${cpu[@]}" "${wg[@]}" --set output.field=e.npy --set scheme.courant=1e-320 2>&1)
! echo "$o" | grep -q "not a finite number" && ok || bad "1e-320 called not finite: $o"
expect_error courant-huge "'1e999' is too large" --set scheme.courant=1e999
# reliability review L4: a source that overflows float made every field inf/NaN, probes -nan, exit 0
expect_error diverged-probe "the fields diverged (non-finite) at step [0-9]*: probe 1 (Ez 140 40)" \
  --set source.source1="Ez point 20 40 gaussian width=0.5 delay=1 amplitude=1e38"
o=$("$bin" run "$src/examples/maxwell_waveguide.ini" "${cpu[@]}" "${wg[@]}" --set output.field=d.npy --set output.probes=d.csv \
  --set output.image= --set source.source1="Ez point 20 40 gaussian width=0.5 delay=1 amplitude=1e38" --set scheme.precision=double 2>&1)
[ $? -eq 0 ] && ! grep -qi "nan\|inf" d.csv && ok || bad "amplitude 1e38 in double precision: $o"
# without probes: found at a snapshot, or at the end of the run; nothing written
cat > np.ini <<'EOF2'
[grid]
dims = 2
nx = 81
ny = 61
lx = 8
ly = 6
[scheme]
equation = maxwell
courant = 0.5
steps = 60
precision = float
[boundary]
kind = cpml
cpml_cells = 10
[source]
source1 = Ez point 20 30 gaussian width=0.5 delay=1 amplitude=1e38
[output]
field = np.npy
image = np.png
EOF2
for how in "the end of the run" "at a snapshot"; do
  extra=()
  [ "$how" = "at a snapshot" ] && extra=(--set output.every=20)
  for m in naive pyramid; do
    mem=(); [ $m = pyramid ] && mem=(--set run.memory=64K)
    o=$("$bin" run np.ini "${cpu[@]}" --set run.method=$m "${mem[@]}" "${extra[@]}" 2>&1)
    r=$?
    [ $r -eq 1 ] && echo "$o" | grep -q "the fields diverged (non-finite) by step [0-9]* ($how): Ez is" \
      && echo "$o" | grep -q "use scheme.precision = double" && [ -z "$(ls np_* np.png 2>/dev/null)" ] && ok || bad "diverged, $how, $m: rc=$r $o"
  done
done
o=$("$bin" run np.ini "${cpu[@]}" --set scheme.precision=double --set output.every=20 2>&1)
[ $? -eq 0 ] && [ -s np_Ez.npy ] && [ -s np_Ez_000040.npy ] && ok || bad "np.ini in double precision: $o"

# monitors through the program: output.spectra is written (the flux lines equal the HDF5 result's /monitors
# datasets), the same bytes from a pyramid plan, refused as another suffix, refused without a [monitor]
slab=("$src/examples/maxwell_slab_spectrum.ini" "${cpu[@]}")
out=$("$bin" run "${slab[@]}" --set output.spectra=m.csv --set output.field= --set output.image= --set run.method=naive 2>&1)
rc=$?
[ $rc -eq 0 ] && head -1 m.csv | grep -q "^monitor,frequency,flux,re,im$" && grep -q "^flux2," m.csv && ok || bad "spectra: rc=$rc $out"
out=$("$bin" run "${slab[@]}" --set output.spectra=n.csv --set output.field= --set output.image= --set run.method=pyramid \
  --set run.memory=64K --set run.height=7 2>&1)
echo "$out" | grep -q "method=pyramid" && cmp -s m.csv n.csv && ok || bad "spectra from a pyramid plan differ: $out"
if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c "import h5py" 2>/dev/null \
   && "$bin" run "${slab[@]}" --set output.spectra= --set output.field=m.h5 --set output.image= >/dev/null 2>&1; then
  /usr/bin/python3 - m.h5 m.csv <<'PY' && ok || bad "spectra CSV and HDF5 /monitors disagree"
import csv, sys, h5py
f = h5py.File(sys.argv[1], "r")
rows = [r for r in csv.DictReader(open(sys.argv[2])) if r["monitor"] == "flux2"]
flux = f["monitors/flux2/flux"][:]
freqs = f["monitors/flux2/freqs"][:]
assert len(rows) == len(flux) > 0
for r, p, q in zip(rows, flux, freqs):
    assert float(r["flux"]) == p and float(r["frequency"]) == q, (r, p, q)
PY
fi
expect_spectra() { # name, text, args...
  local name=$1 text=$2
  shift 2
  out=$("$bin" run "$@" 2>&1)
  rc=$?
  [ $rc -ne 0 ] && echo "$out" | grep -q -- "$text" && ok || bad "$name: rc=$rc $out"
}
expect_spectra spectra-suffix "writes .csv" "${slab[@]}" --set output.spectra=m.txt
expect_spectra spectra-no-monitor "has no \[monitor\]" "$src/examples/maxwell_waveguide.ini" "${cpu[@]}" "${wg[@]}" --set output.spectra=w.csv
# output.spectra_png: the flux spectra as a plot (a PNG of the width asked, written beside the CSV)
out=$("$bin" run "${slab[@]}" --set output.spectra_png=m.png --set output.image_width=640 --set output.field= --set output.image= \
  --set run.method=naive 2>&1)
rc=$?
[ $rc -eq 0 ] && [ "$(head -c 8 m.png | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] \
  && [ "$(od -An -tu1 -j16 -N4 m.png | awk '{print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4}')" = 640 ] && ok \
  || bad "spectra_png: rc=$rc $out"
expect_spectra spectra-png-suffix "writes .png" "${slab[@]}" --set output.spectra_png=m.jpg
expect_spectra spectra-png-no-flux "has no flux monitor" "$src/examples/maxwell_waveguide.ini" "${cpu[@]}" "${wg[@]}" \
  --set output.spectra_png=w.png

finish
