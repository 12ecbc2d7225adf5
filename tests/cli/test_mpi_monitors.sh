#!/usr/bin/env bash
# Maxwell's monitors under mpirun (issue 46): mpirun -np P pyrgrid run with [monitor] writes the
# spectra CSV and the flux plot (output.spectra, output.spectra_png) once, from rank 0, with the
# same bytes as a one-process run, np 1..4, for the slab example (2D TE: flux planes and a DFT
# point), a 2D TM problem (a DFT point and plane, flux lines boxing the source) and a 3D one (DFT
# points, flux planes), on slabs along each axis and blocks; the components' .npy too.  A failing rank (a source in
# its part that overflows the field) stops every rank with its message and leaves the old spectra
# as they were.  (test_mpi_monitors.c checks every monitor's transforms and the far field over the
# ranks through the C API.)
# usage: test_mpi_monitors.sh PYRGRID SRC MPIEXEC NUMPROC_FLAG [MPIEXEC FLAGS...]   (77 without mpirun)
set -u
src=$(realpath "$2")
. "$(dirname "${BASH_SOURCE[0]}")/../mpi_launch.sh" "$1" "${@:3}"

cp "$src/examples/maxwell_slab_spectrum.ini" slab.ini
# the program's run refused [monitor] under mpirun before the library made the ranks' spectra whole;
# a program that still does so (tools/cli_run.c) is said and skipped, not failed
run_np 2 run slab.ini -q --set output.spectra=probe.csv > /dev/null 2> probe.err
if grep -q "\[monitor\] .* not supported in runs over several MPI ranks" probe.err; then
  echo "SKIP: this pyrgrid's run still refuses [monitor] under mpirun (tools/cli_run.c): $(head -1 probe.err)"
  exit 77
fi
cat > tm.ini << 'EOF'
[grid]
dims = 2
nx = 57
ny = 45
lx = 5.6
ly = 4.4
[scheme]
equation = maxwell
mode = tm
courant = 0.6
steps = 150
precision = double
[boundary]
kind = cpml
cpml_cells = 6
[material]
shape1 = box 3.0 3.8 2.2 3.0 eps_r=3
[source]
source1 = Ez point 27 21 ricker frequency=0.7 delay=1.6
[monitor]
dft1 = Ez,Hx point 33 27 freqs=0.3:0.9:8
dft2 = Hy point 8 37 freqs=0.5,0.7
flux1 = plane x 12 12 36 freqs=0.3:0.9:13
flux2 = plane x 36 12 36 freqs=0.3:0.9:13
flux3 = plane y 12 12 36 freqs=0.3:0.9:13
flux4 = plane y 36 12 36 freqs=0.3:0.9:13
flux5 = plane x 44 freqs=0.4,0.8
[run]
backend = cpu
threads = 1
EOF
cat > mx3.ini << 'EOF'
[grid]
dims = 3
nx = 27
ny = 23
nz = 21
[scheme]
equation = maxwell
courant = 0.5
steps = 40
precision = float
[boundary]
kind = cpml
cpml_cells = 4
[source]
source1 = Ez point 13 11 10 ricker frequency=4 delay=0.25
[monitor]
dft1 = Ex,Ey,Ez,Hz point 15 12 11 freqs=3,5
dft2 = Hx point 6 16 5 freqs=4
flux1 = plane x 8 freqs=3:8:6
flux2 = plane z 15 6 20 5 18 freqs=3:8:6
flux3 = plane y 5 freqs=4
[run]
backend = cpu
threads = 1
EOF

for c in slab tm mx3; do
  "$pyr" run $c.ini -q --set output.field=${c}ref.npy --set output.spectra=${c}ref.csv --set output.spectra_png=${c}ref.png > /dev/null 2> ref.err ||
    fail "one-process $c run: $(cat ref.err)"
  for np in 1 2 3 4; do
    parts="${np}x1x1 auto"                             # slabs along x, and the cut the model picks
    [ $c != slab ] || [ $np -le 2 ] && parts="$parts 1x${np}x1" # slabs along y (the slab example's 4 nodes hold 2)
    [ $np = 4 ] && parts="$parts 2x2x1"                         # blocks
    [ $np = 1 ] && parts=auto
    for part in $parts; do
      rm -f out*.npy spectra.csv spectra.png
      run_np $np run $c.ini --set run.partition=$part --set output.field=out.npy --set output.spectra=spectra.csv \
        --set output.spectra_png=spectra.png > run.txt 2> run.err || { fail "np $np $c $part: $(cat run.err)"; continue; }
      [ $np -gt 1 ] && { grep -q "ranks=$np" run.txt || fail "np $np $c $part ran in one process: $(cat run.txt)"; }
      cmp -s spectra.csv ${c}ref.csv || fail "np $np $c $part: output.spectra differs from the one-process run's"
      cmp -s spectra.png ${c}ref.png || fail "np $np $c $part: output.spectra_png differs from the one-process run's"
      for f in ${c}ref_*.npy; do
        cmp -s out_${f#${c}ref_} $f || fail "np $np $c $part: out_${f#${c}ref_} differs from the one-process run's"
      done
      [ -z "$(temps)" ] || fail "np $np $c $part left temporaries: $(temps)"
    done
  done
done
# the spectra are not empty: the flux through the transmission plane is positive somewhere
awk -F, '$1 == "flux2" && $3 > 0 { found = 1 } END { exit !found }' slabref.csv || fail "the slab's flux2 spectrum is empty: $(head -3 slabref.csv)"

# a failing rank (rank 2's part, 3 slabs along y, holds a float source that overflows the field in
# the last steps, too late for the overflow to reach the other parts): every rank stops with rank
# 2's message; the old spectra stay as they were, and no temporary is left
echo "old spectra" > keep.csv
run_np 3 run tm.ini --set run.partition=1x3x1 --set output.spectra=keep.csv --set scheme.precision=float \
  --set "source.source2=Ez point 27 38 gaussian width=0.05 delay=6.3 amplitude=1e39" > f.txt 2> f.err
rc=$?
[ $rc = 1 ] || fail "a failing rank: exit $rc, expected 1: $(cat f.err)"
grep -q "error: rank 2: the fields diverged .*inf" f.err || fail "a failing rank's message: $(cat f.err)"
[ "$(cat keep.csv)" = "old spectra" ] || fail "a failing rank changed the old spectra"
[ -z "$(temps)" ] || fail "a failing rank left temporaries: $(temps)"

finish "monitors under mpirun -np 1..4: the one-process spectra, plot and fields, byte for byte"
