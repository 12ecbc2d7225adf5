#!/usr/bin/env bash
# End-to-end tests of the pyrgrid program: the examples run and write files
# NumPy reads; bad input fails with a clear message and leaves no file.
# usage: test_cli.sh PYRGRID SOURCE_DIR
set -u
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
pyr_setup "$1"
bin=$pyr
src=$2

have_numpy=0
for py in /usr/bin/python3 python3; do
  if "$py" -c "import numpy" 2>/dev/null; then have_numpy=1; PY=$py; break; fi
done

"$bin" --help | grep -q "pyrgrid run FILE" && ok || bad "--help"
"$bin" --version | grep -q "^pyrgrid [0-9]" && ok || bad "--version"
"$bin" info | grep -q "backend cpu: available" && ok || bad "info"
"$bin" frobnicate >/dev/null 2>&1; [ $? -eq 2 ] && ok || bad "unknown command exits 2"
# issue 18: every command answers --help (exit 0, its usage, the common options and exit
# statuses), takes -v/--verbose and -q/--quiet, and a bad option is a usage error (2)
"$bin" --help | grep -q "3 did not converge" && ok || bad "--help lacks the exit statuses"
for c in run plan solve calibrate sweep info; do
  out=$("$bin" $c --help 2>&1); rc=$?
  [ $rc -eq 0 ] && echo "$out" | grep -q "^usage: pyrgrid $c" && echo "$out" | grep -q -- "--verbose" && echo "$out" | grep -q "exit status" \
    && ok || bad "$c --help: rc $rc, '$(echo "$out" | head -2)'"
  "$bin" $c --frobnicate >/dev/null 2>&1; rc=$?
  [ $rc -eq 2 ] && ok || bad "$c --frobnicate: rc $rc, expected 2"
done
for flag in -v --verbose -q --quiet; do
  "$bin" info $flag >/dev/null 2>&1 && ok || bad "info $flag"
  "$bin" plan "$src/examples/heat2d.ini" $flag --set run.backend=cpu >/dev/null 2>&1 && ok || bad "plan $flag"
  "$bin" run "$src/examples/heat1d.ini" $flag --set scheme.steps=2 --set output.field=v.npy --set output.image= >/dev/null 2>&1 && ok || bad "run $flag"
  "$bin" solve "$src/examples/solve_test1.ini" $flag --set system.N=64 --set system.M=64 --set output.solution=v.npy --set output.history= --set output.image= >/dev/null 2>&1; rc=$?
  [ $rc -eq 0 ] && ok || bad "solve $flag: rc $rc"
  PYRGRID_WISDOM=$work/flags-wisdom "$bin" calibrate $flag --show >/dev/null 2>&1 && ok || bad "calibrate $flag"
  "$bin" sweep --replot nonexistent.csv --png x.png $flag >/dev/null 2>&1; [ $? -eq 1 ] && ok || bad "sweep $flag"
done
out=$("$bin" run "$src/examples/heat1d.ini" -v --set scheme.steps=2 --set output.field=v.npy --set output.image= 2>&1 >/dev/null)
echo "$out" | grep -q "pyrgrid: plan: method" && echo "$out" | grep -q "wisdom" && ok || bad "run -v says nothing more: '$out'"
out=$("$bin" run "$src/examples/heat2d.ini" -q --set scheme.dt=1 --set output.field=v.npy 2>&1); rc=$?
[ $rc -eq 1 ] && echo "$out" | grep -q "error:" && ok || bad "-q hid an error: rc $rc '$out'"
# the "no usable GPU" notice only when the backend was left to choose
if "$bin" info | grep -q "compiled in; no usable GPU"; then
  "$bin" run "$src/examples/heat1d.ini" --set scheme.steps=2 --set output.field=v.npy --set output.image= 2>&1 >/dev/null | grep -q "no usable GPU" \
    && ok || bad "backend = auto without a GPU: no notice"
fi
out=$("$bin" run "$src/examples/heat1d.ini" --set run.backend=cpu --set scheme.steps=2 --set output.field=v.npy --set output.image= 2>&1 >/dev/null)
! echo "$out" | grep -q "no usable GPU" && ok || bad "backend = cpu, yet: '$out'"
rm -f v.npy

# The examples, shortened.
for ex in heat1d heat2d heat3d; do
  out=$("$bin" run "$src/examples/$ex.ini" --set scheme.steps=20 --set output.field=$ex.npy --set output.image=$ex.png 2>&1)
  [ $? -eq 0 ] && ok || bad "$ex: $out"
  echo "$out" | grep -q "Gcell/s=" && ok || bad "$ex summary line: $out"
  [ -s $ex.npy ] && [ -s $ex.png ] && ok || bad "$ex outputs missing"
  head -c 8 $ex.png | od -An -tx1 | grep -q "89 50 4e 47 0d 0a 1a 0a" && ok || bad "$ex.png is not a PNG"
done
if [ $have_numpy = 1 ]; then
  "$PY" - <<'PY' && ok || bad "numpy cannot read the results"
import numpy as np
a = np.load("heat2d.npy"); assert a.shape == (1025, 1025) and a.dtype == np.float64, (a.shape, a.dtype)
b = np.load("heat3d.npy"); assert b.shape == (129, 129, 129) and b.dtype == np.float32, (b.shape, b.dtype)
c = np.load("heat1d.npy"); assert c.shape == (1001,) and c.dtype == np.float64
assert np.isfinite(a).all() and a.max() > 0.5
PY
else
  echo "numpy not available: skipping the np.load check"
fi

# Methods agree bit for bit through the CLI too.
"$bin" run "$src/examples/heat2d.ini" --quiet --set grid.nx=301 --set grid.ny=203 --set scheme.steps=33 --set initial.kind=random \
  --set run.method=naive --set output.field=naive.npy --set output.image= >/dev/null && ok || bad "naive run"
"$bin" run "$src/examples/heat2d.ini" --quiet --set grid.nx=301 --set grid.ny=203 --set scheme.steps=33 --set initial.kind=random \
  --set run.method=pyramid --set run.decomposition=blocks --set run.height=7 --set run.memory=200KiB \
  --set output.field=pyr.npy --set output.image= >/dev/null && ok || bad "pyramid run"
cmp -s naive.npy pyr.npy && ok || bad "pyramid result differs from naive through the CLI"
"$bin" plan "$src/examples/heat2d.ini" --set run.method=pyramid --set run.memory=4MiB | grep -q "versus trivial" && ok || bad "plan output"

# Snapshots NAME_000010.npy.
"$bin" run "$src/examples/heat2d.ini" --quiet --set grid.nx=65 --set grid.ny=65 --set scheme.steps=30 --set output.every=10 \
  --set output.field=snap.npy --set output.image= >/dev/null && ok || bad "snapshot run"
[ -s snap_000010.npy ] && [ -s snap_000020.npy ] && [ -s snap_000030.npy ] && [ -s snap.npy ] && ok || bad "snapshots missing"
cmp -s snap_000030.npy snap.npy && ok || bad "last snapshot differs from the final field"

# Bad input: message, non-zero exit, no output file, no temporary left behind.
expect_error() { # name pattern args...
  local name=$1 pattern=$2
  shift 2
  rm -f out.npy out.png
  local msg
  # defaults for the outputs first, so that a case may override them
  msg=$("$bin" "$1" "$2" --set output.field=out.npy --set output.image=out.png "${@:3}" 2>&1 >/dev/null)
  local rc=$?
  [ $rc -ne 0 ] && ok || bad "$name: exit 0"
  echo "$msg" | grep -q "error:.*$pattern" && ok || bad "$name: message '$msg' lacks '$pattern'"
  [ ! -e out.npy ] && [ ! -e out.png ] && ok || bad "$name: left an output file"
  [ -z "$(ls -A | grep '^\.')" ] && ok || bad "$name: left a temporary file: $(ls -A)"
}
expect_error unstable "use dt <=" run "$src/examples/heat2d.ini" --set scheme.dt=1e-5
expect_error unknown-key "did you mean 'steps'" run "$src/examples/heat2d.ini" --set scheme.stepz=5
expect_error small-grid "nx >= 3" run "$src/examples/heat2d.ini" --set grid.nx=2
expect_error negative-alpha "alpha = -1" run "$src/examples/heat2d.ini" --set scheme.alpha=-1
expect_error nan-dt "NaN" run "$src/examples/heat2d.ini" --set scheme.dt=nan
expect_error alpha-overflow "overflows a double" run "$src/examples/heat2d.ini" --set scheme.alpha=1e200
expect_error missing-file "cannot read problem file" run nonexistent.ini
expect_error budget "use memory >=" run "$src/examples/heat2d.ini" --set run.method=pyramid --set run.decomposition=strips --set run.height=30 --set run.memory=100K
expect_error init-missing "initial.file" run "$src/examples/heat2d.ini" --set initial.kind=file --set initial.file=nope.npy
"$bin" run "$src/examples/heat2d.ini" --quiet --set grid.nx=65 --set grid.ny=33 --set scheme.steps=1 --set output.field=small.npy --set output.image= >/dev/null
expect_error init-shape "expected (1025, 1025)" run "$src/examples/heat2d.ini" --set initial.kind=file --set initial.file=small.npy
mkfifo init.fifo
expect_error init-fifo "not a regular file (it is a FIFO" run "$src/examples/heat2d.ini" --set initial.kind=file --set initial.file=init.fifo
rm -f init.fifo
if [ $have_numpy = 1 ]; then
  "$PY" -c "import numpy as np; a = np.zeros((33, 33)); a[4, 9] = np.nan; np.save('nan.npy', a)"
  expect_error init-nan "holds NaN at index \[4, 9\]" run "$src/examples/heat2d.ini" --set grid.nx=33 --set grid.ny=33 --set initial.kind=file --set initial.file=nan.npy
fi
printf 'not a numpy file at all' > junk.npy
expect_error init-junk "junk.npy" run "$src/examples/heat2d.ini" --set initial.kind=file --set initial.file=junk.npy
expect_error unwritable "output.field" run "$src/examples/heat2d.ini" --set output.field=/nonexistent/dir/x.npy
printf '[grid]\ndims = 2\nnx = 33\n[scheem]\nsteps = 3\n' > typo.ini
expect_error section-typo "did you mean \[scheme\]" run typo.ini
# issue 18: a directory or an empty file is no problem file (a directory ran the default problem)
mkdir -p adir
expect_error problem-dir "adir is a directory" run adir
: > empty.ini
expect_error problem-empty "empty.ini is empty" run empty.ini
printf '[scheme]\nsteps = 100\nsteps = 0\n' > dup.ini
expect_error duplicate-key "key 'steps' in \[scheme\] was already given on line 2" run dup.ini

# Progress: a bar with ETA on stderr when it is a terminal (a pseudo-terminal
# from script(1) here) and the run lasts over PYRGRID_PROGRESS_AFTER seconds
# (1 by default; 0 here, so that a short run shows it); nothing when it is not.
export PYRGRID_PROGRESS_AFTER=0
long=(--set grid.nx=257 --set grid.ny=257 --set scheme.steps=200 --set output.field=long.npy --set output.image=)
if command -v script >/dev/null 2>&1; then
  out=$(script -qec "$(printf '%q ' "$bin" run "$src/examples/heat2d.ini" "${long[@]}")" /dev/null 2>&1 | tr '\r' '\n')
  echo "$out" | grep -q "ETA" && echo "$out" | grep -q "100.0%" && ok || bad "no progress bar on a terminal: $(echo "$out" | tail -3)"
fi
"$bin" run "$src/examples/heat2d.ini" "${long[@]}" 2> long.err >/dev/null
! grep -q "ETA" long.err && ok || bad "progress bar drawn into a file: $(head -c 200 long.err)"
rm -f long.npy long.err
unset PYRGRID_PROGRESS_AFTER

# The model's commands: calibrate into a wisdom file of our own, plan with it,
# sweep heights (CSV and plot), replot the CSV; bad uses fail cleanly.
export PYRGRID_WISDOM=$work/wisdom
out=$("$bin" calibrate --backend cpu --precision float --dims 2 --effort 0.3 2>&1)
[ $? -eq 0 ] && [ -s wisdom ] && ok || bad "calibrate: $out"
small=(--set grid.nx=257 --set grid.ny=257 --set scheme.precision=float --set scheme.dt=1e-6 --set run.backend=cpu --set run.method=pyramid --set run.memory=256K)
out=$("$bin" plan "$src/examples/heat2d.ini" "${small[@]}" 2>&1)
echo "$out" | grep -q "calibrated" && echo "$out" | grep -q "predicted run time by height" && ok || bad "plan with wisdom: $out"
out=$("$bin" sweep "$src/examples/heat2d.ini" "${small[@]}" --heights 1,2,4 --passes 2 --csv s.csv --png s.png 2>&1)
[ $? -eq 0 ] && ok || bad "sweep: $out"
echo "$out" | grep -q "emax = " && ok || bad "sweep prints no accuracy: $out"
[ "$(head -1 s.csv)" = "backend,decomposition,height,steps,timed_steps,measured_s,predicted_s,measured_ns_per_node,predicted_ns_per_node,rel_error,auto" ] && [ "$(wc -l < s.csv)" -ge 7 ] && ok || bad "sweep CSV: $(cat s.csv)"
head -c 8 s.png | od -An -tx1 | grep -q "89 50 4e 47 0d 0a 1a 0a" && ok || bad "sweep plot is not a PNG"
"$bin" sweep --replot s.csv --png r.png >/dev/null 2>&1 && head -c 8 r.png | od -An -tx1 | grep -q "89 50 4e 47" && ok || bad "replot"
msg=$("$bin" sweep --replot typo.ini --png bad.png 2>&1); rc=$?
[ $rc -ne 0 ] && echo "$msg" | grep -q "not a sweep CSV" && [ ! -e bad.png ] && ok || bad "replot of a non-CSV: rc $rc, '$msg'"
mkfifo csv.fifo
msg=$(timeout 60 "$bin" sweep --replot csv.fifo --png bad.png 2>&1); rc=$?
[ $rc -eq 1 ] && echo "$msg" | grep -q "FIFO" && ok || bad "replot of a FIFO: rc $rc, '$msg'"
rm -f csv.fifo
msg=$("$bin" sweep "$src/examples/heat2d.ini" --heights 0:4 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$msg" | grep -q "use a list of heights" && ok || bad "sweep --heights 0:4: rc $rc, '$msg'"
# issue 18: the program imports the wisdom and saves a plan = measure choice in it
# (the library itself reads and writes no file)
out=$("$bin" run "$src/examples/heat2d.ini" "${small[@]}" --set scheme.steps=40 --set run.plan=measure --set output.field=m.npy --set output.image= 2>&1)
echo "$out" | grep -q "saved the measured choice in $PYRGRID_WISDOM" && "$bin" calibrate --show | grep -q "^choice" && ok \
  || bad "plan = measure did not save its choice: '$out'"
cp wisdom wisdom.good
echo "not wisdom" > wisdom
out=$("$bin" plan "$src/examples/heat2d.ini" "${small[@]}" 2>&1)
echo "$out" | grep -q "wisdom file $PYRGRID_WISDOM rejected, nothing of it used: it does not start with" && ok || bad "rejected wisdom not reported: '$out'"
out=$("$bin" run "$src/examples/heat2d.ini" "${small[@]}" --set scheme.steps=40 --set run.plan=measure --set output.field=m.npy --set output.image= 2>&1)
echo "$out" | grep -q "warning: the measured choice was not saved" && [ "$(cat wisdom)" = "not wisdom" ] && ok \
  || bad "a rejected wisdom file was replaced by a run: '$out'"
mv wisdom.good wisdom
# issue 18: a huge step overflowed (signed) and listed negative heights
out=$("$bin" sweep "$src/examples/heat2d.ini" "${small[@]}" --heights 1:10:9223372036854775807 --passes 1 --csv h.csv 2>&1); rc=$?
heights=$(tail -n +2 h.csv 2>/dev/null | cut -d, -f3 | sort -un | tr '\n' ' ')
[ $rc -eq 0 ] && ! echo "$out" | grep -q "does not fit" && [ "${heights%% *}" = 1 ] && ! echo "$heights" | grep -q -- - && ok \
  || bad "sweep --heights 1:10:9223372036854775807: rc $rc, heights '$heights', '$(echo "$out" | head -5)'"
unset PYRGRID_WISDOM

finish
