#!/usr/bin/env bash
# The long-vector method through the program (issue 23): method = longvector
# in problem files and --set, its refusals (exit 1 with what works), sweep
# --sizes and its usage errors (exit 2).  With a usable GPU: the plan shows
# the seed's model, a run gives the naive method's file byte for byte, and a
# small size sweep writes its CSV and PNG.
# usage: test_longvector_cli.sh PYRGRID SOURCE_DIR
set -u
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
pyr_setup "$1"
bin=$pyr
src=$2
export PYRGRID_WISDOM=$work/wisdom

cat > lv.ini <<'INI'
[grid]
dims = 2
nx = 67
ny = 45
[scheme]
dt = 1e-5
steps = 17
precision = float
[initial]
kind = random
[run]
method = longvector
[output]
field = lv.npy
image =
INI

gpu=0
pyr_has_gpu && gpu=1
cuda=1
"$bin" info | grep -q "backend cuda: not compiled in" && cuda=0
if [ $cuda -eq 1 ]; then
  "$bin" info | grep -q "longvector" && ok || bad "info does not list the longvector variant"
fi

# refusals: exit 1, a message that names the case and what works
expect_fail() { # what, needle, args...
  local what=$1 needle=$2; shift 2
  out=$("$bin" plan lv.ini "$@" 2>&1); rc=$?
  [ $rc -eq 1 ] && echo "$out" | grep -q -- "$needle" && ok || bad "$what: rc $rc, '$out'"
}
expect_fail "cpu backend" "CUDA backend" --set run.backend=cpu
expect_fail "3D" "2D grids" --set grid.dims=3 --set grid.nz=9
expect_fail "1D" "this grid is 1D" --set grid.dims=1 --set grid.ny=1
expect_fail "other kernel" "leave run.kernel = auto" --set run.kernel=fused:3
expect_fail "decomposition" "no pieces" --set run.decomposition=blocks
expect_fail "Maxwell" "for equation = maxwell" --set scheme.equation=maxwell
expect_fail "several devices" "method = longvector runs on one GPU, and this run cuts the grid into 2 parts (run.devices = 0,1" \
  --set run.devices=0,1
expect_fail "variant without the method" "use method = longvector" --set run.method=pyramid --set run.kernel=longvector
out=$("$bin" plan lv.ini --set run.method=longvectr 2>&1); rc=$?
[ $rc -eq 1 ] && echo "$out" | grep -q "did you mean 'longvector'" && ok || bad "misspelt method: rc $rc, '$out'"

# sweep --sizes: usage errors exit 2
for args in "--sizes" "--sizes 0:10" "--sizes 10:5" "--sizes 1:x" "--sizes 10:20 --passes 2" "--sizes 10:20 --frobnicate"; do
  "$bin" sweep lv.ini $args >/dev/null 2>&1; rc=$?
  [ $rc -eq 2 ] && ok || bad "sweep lv.ini $args: rc $rc, expected 2"
done
"$bin" sweep lv.ini --sizes 10:20 --set run.method=naive >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && ok || bad "sweep --sizes with method = naive: rc $rc"
"$bin" sweep lv.ini --heights 1:4 >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && ok || bad "sweep --heights with method = longvector: rc $rc"
"$bin" sweep --sizes 10:20 --help | grep -q "^usage: pyrgrid sweep FILE --sizes" && ok || bad "sweep --sizes --help"

if [ $gpu -eq 0 ]; then
  out=$("$bin" plan lv.ini 2>&1); rc=$?
  [ $rc -eq 1 ] && echo "$out" | grep -Eq "no usable GPU|built without CUDA" && ok || bad "no GPU: rc $rc, '$out'"
  "$bin" sweep lv.ini --sizes 10:20 --csv s.csv >/dev/null 2>&1; rc=$?
  [ $rc -eq 1 ] && [ ! -e s.csv ] && ok || bad "no GPU: sweep --sizes rc $rc"
else
  out=$("$bin" plan lv.ini 2>&1); rc=$?
  [ $rc -eq 0 ] && echo "$out" | grep -q "^method       longvector on the cuda backend, kernel longvector" \
    && echo "$out" | grep -q "^long-vector  per step 10 library calls" && echo "$out" | grep -q "M = " && ok || bad "plan: rc $rc, '$out'"
  # the JSON plan (plan --json, run reports): the method, its kernel, the whole grid resident
  "$bin" plan lv.ini --json > plan.json 2>&1 && python3 -c '
import json, sys
p = json.load(open("plan.json"))["plan"]
sys.exit(0 if (p["method"], p["kernel"], p["decomposition"]) == ("longvector", "longvector", "whole grid") else 1)' \
    && ok || bad "plan --json: $(cat plan.json)"
  out=$("$bin" run lv.ini 2>&1); rc=$?
  [ $rc -eq 0 ] && echo "$out" | grep -q "method=longvector backend=cuda" && ok || bad "run: rc $rc, '$out'"
  "$bin" run lv.ini --set run.method=naive --set run.backend=cpu --set output.field=naive.npy >/dev/null 2>&1 && cmp -s lv.npy naive.npy \
    && ok || bad "the long-vector run's field differs from the CPU naive method's"
  out=$("$bin" sweep lv.ini --sizes 10:70:20 --csv s.csv --png s.png 2>&1); rc=$?
  [ $rc -eq 0 ] && [ "$(wc -l < s.csv)" -eq 5 ] && head -1 s.csv | grep -q "^N,nx,ny,pitch,vector_length,waves" && [ -s s.png ] \
    && echo "$out" | grep -q "emax = .*ebar = " && echo "$out" | grep -q "first staircase step" && ok || bad "sweep --sizes: rc $rc, '$out'"
fi

finish
