#!/usr/bin/env bash
# The Maxwell examples run (issue 46, "Examples and figures"): every examples/maxwell_*.ini goes through the
# program with fewer steps (still enough for its monitors' lowest frequency, 1 / (steps dt)) and must succeed and
# write every output its [output] section names (field NAME.npy: NAME_<component>.npy); then the Python examples
# (with PYTHON given): maxwell_spectra.py writes its PNG of the slab's transmittance, maxwell.py runs shrunk, and the
# far-field recipe in maxwell_dipole_farfield.ini's comment gives a pattern at its directions.
# usage: test_examples_maxwell.sh PYRGRID SOURCE_DIR [PYTHON]   (without PYTHON, the Python examples are skipped)
set -u
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
pyr_setup "$1"
bin=$pyr
src=$2
py=${3:-}
cpu=(--set run.backend=cpu --set run.threads=2)

# the steps each example runs here (an example not listed runs its own count)
steps_of() {
  case $1 in
    maxwell_cavity.ini) echo 200 ;;
    maxwell_waveguide.ini) echo 300 ;;
    maxwell_scatterer.ini) echo 200 ;;
    maxwell_tfsf.ini) echo 300 ;;              # dt 0.0177, f >= 0.2: 283 at least
    maxwell_slab_spectrum.ini | maxwell_slab_positions.ini | maxwell_drude.ini) echo 550 ;;   # dt 0.00985: 508
    maxwell_mie.ini) echo 300 ;;               # dt 0.0229, f >= 0.159: 275
    maxwell_dipole_farfield.ini) echo 100 ;;   # dt 0.026, f >= 0.5: 77
    maxwell_grating.ini) echo 500 ;;           # dt 0.0124, f >= 0.2: 404
    *) echo "" ;;
  esac
}

# the [output] section's KEY = VALUE pairs of a problem file, comments dropped
outputs() {
  awk '/^\[/ { sect = $0 } sect == "[output]" && /=/ { sub(/;.*/, ""); split($0, kv, "="); k = kv[1]; v = kv[2];
       gsub(/[ \t]/, "", k); gsub(/[ \t]/, "", v); if (v != "") print k, v }' "$1"
}

count=0
for ini in "$src"/examples/maxwell_*.ini; do
  name=$(basename "$ini")
  count=$((count + 1))
  dir=$work/${name%.ini}
  mkdir -p "$dir"
  n=$(steps_of "$name")
  extra=()
  [ -n "$n" ] && extra=(--set scheme.steps="$n")
  out=$(cd "$dir" && "$bin" run "$ini" "${cpu[@]}" "${extra[@]}" 2>&1)
  rc=$?
  if [ $rc -ne 0 ]; then
    bad "$name: rc=$rc $out"
    continue
  fi
  missing=""
  while read -r key value; do
    case $key in
      field)
        stem=${value%.npy}
        if [ "$stem" != "$value" ]; then
          ls "$dir/${stem}"_*.npy >/dev/null 2>&1 || missing="$missing $key=$value"
        else
          [ -s "$dir/$value" ] || missing="$missing $key=$value"
        fi ;;
      image | probes | spectra | spectra_png | history)
        [ -s "$dir/$value" ] || missing="$missing $key=$value" ;;
    esac
  done < <(outputs "$ini")
  [ -z "$missing" ] && ok || bad "$name: ran (rc 0) but did not write$missing: $(ls "$dir")"
done
[ $count -ge 8 ] && ok || bad "found $count examples/maxwell_*.ini"

# the spectra the new examples write hold their monitors (a line per flux monitor and frequency)
csv=$work/maxwell_mie/mie_spectra.csv
[ -s "$csv" ] && [ "$(grep -c '^flux[1-6],' "$csv")" -eq 156 ] && ok || bad "mie_spectra.csv: $(head -3 "$csv" 2>&1)"
csv=$work/maxwell_dipole_farfield/dipole_spectra.csv
[ -s "$csv" ] && [ "$(grep -c '^flux[1-6],' "$csv")" -eq 18 ] && ok || bad "dipole_spectra.csv: $(head -3 "$csv" 2>&1)"
png=$work/maxwell_mie/mie_spectra.png
[ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] && ok || bad "mie_spectra.png is not a PNG"

if [ -n "$py" ]; then
  out=$("$py" "$src/examples/maxwell_spectra.py" "$work/slab.png" 600 2>&1)
  rc=$?
  [ $rc -eq 0 ] && echo "$out" | grep -q "max |T - T_FP|" && [ "$(head -c 8 "$work/slab.png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] \
    && ok || bad "maxwell_spectra.py: rc=$rc $out"
  out=$("$py" "$src/examples/maxwell.py" 41 400 2>&1)
  rc=$?
  [ $rc -eq 0 ] && echo "$out" | grep -q "bit for bit: True" && ok || bad "maxwell.py: rc=$rc $out"
  # the far-field recipe of maxwell_dipole_farfield.ini's comment, shortened
  out=$("$py" - "$src/examples/maxwell_dipole_farfield.ini" 2>&1 <<'PY'
import sys
import numpy as np
import pyrgrid
r = pyrgrid.maxwell(sys.argv[1], steps=100)
theta = np.radians([0, 30, 60, 90, 120, 150, 180])
ff = r.farfield(["flux1", "flux2", "flux3", "flux4", "flux5", "flux6"], phi=np.zeros(7), theta=theta)
assert ff.power.shape == (3, 7) and np.all(np.isfinite(ff.power)) and np.all(ff.power >= 0) and ff.power.max() > 0, ff.power
print("far field", ff.power.shape)
PY
)
  rc=$?
  [ $rc -eq 0 ] && echo "$out" | grep -q "far field (3, 7)" && ok || bad "the dipole's far-field recipe: rc=$rc $out"
fi

finish
