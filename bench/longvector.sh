#!/usr/bin/env bash
# The long-vector method on one GPU: the "long-vector" rows of docs/performance.md
# and the model's figures of docs/methods.md#the-long-vector-method, in one run of
# about 4-6 minutes (every stage is cut to end by LV_LIMIT seconds, 560): build,
# calibrate the CUDA backend's 2D heat constants (the long-vector method's
# t_kernel, t_add, t_saxpy, t_scal and threads among them), the method's tests
# (bit-identity with the CPU naive method on the GPU), the sweep over grid sizes
# N = 10..7000 against the model (CSV, PNG, emax, ebar, the first staircase step
# measured and predicted), the long-vector rate beside the naive kernel's at
# N = 4096 and 16384, and compute-sanitizer's memcheck of the method's GPU cases.
#
#   bash bench/longvector.sh OUT [BUILD_DIR]
#
# Writes under OUT: summary.txt (the figures), device.txt, build.log, info.txt,
# calibrate.txt, wisdom, ctest.txt, test_longvector_gpu.txt, lv_sweep.ini,
# sweep_float.{txt,csv,png}, bench.txt, memcheck.txt, sweep_double.{txt,csv,png}
# (the last two when time is left).
set -uo pipefail
out=${1:?usage: bench/longvector.sh OUT [BUILD_DIR]}
B=${2:-build-bench}
mkdir -p "$out"
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }
stamp() { echo "[$(elapsed) s] $*" | tee -a "$out/summary.txt"; }
# every stage ends by LV_LIMIT seconds (default 560: the whole fits a 10-minute slot)
limit=${LV_LIMIT:-560}
budget() { # budget SECONDS: the stage's timeout, no more than the time left (0: skip it)
  local left=$(( limit - $(elapsed) ))
  if [ $left -lt 15 ]; then echo 0; elif [ $left -lt $1 ]; then echo $left; else echo $1; fi
}
run_stage() { # run_stage SECONDS NAME LOG COMMAND...: the command under its budget, its rc appended to LOG
  local t name=$2 log=$3
  t=$(budget "$1")
  shift 3
  if [ "$t" -eq 0 ]; then stamp "no time left for: $name"; echo "skipped: no time left" > "$log"; return 1; fi
  stamp "$name"
  timeout "$t" "$@" > "$log" 2>&1
  local rc=$?
  echo "rc=$rc" >> "$log"
  return $rc
}
: > "$out/summary.txt"

export PATH=/usr/local/cuda/bin:$PATH
{ nvidia-smi -L; nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv; nproc;
  git log --oneline -1 2>/dev/null; } > "$out/device.txt" 2>&1
cat "$out/device.txt" >> "$out/summary.txt"

stamp "build ($B)"
timeout 240 bash bench/build.sh "$B" pyrgrid_cli test_longvector_gpu test_longvector_model test_longvector_errors \
  bench_longvector > "$out/build.log" 2>&1
rc=$?
[ -f "$B/bench-build.log" ] && cat "$B/bench-build.log" >> "$out/build.log"
stamp "build rc=$rc"
if [ $rc -ne 0 ]; then tail -30 "$out/build.log" | tee -a "$out/summary.txt"; exit 1; fi
# libraries carried in .deps (bench/build.sh), at run time
root=$PWD/.deps/root
[ -d "$root" ] && export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
$B/pyrgrid info > "$out/info.txt" 2>&1

export PYRGRID_WISDOM=$out/wisdom
run_stage 90 "calibrate (CUDA, heat 2D, float and double)" "$out/calibrate.txt" \
  $B/pyrgrid calibrate --backend cuda --dims 2 --scheme heat --precision all
grep -E "heat (float|double) 2D|long-vector|calibration took|rc=" "$out/calibrate.txt" | tee -a "$out/summary.txt"

run_stage 120 "tests (ctest -L longvector: model, errors, GPU bit-identity, CLI)" "$out/ctest.txt" \
  ctest --test-dir $B -L longvector --output-on-failure
grep -E "Test +#|tests passed|tests failed|rc=" "$out/ctest.txt" | tee -a "$out/summary.txt"
# the GPU test's own figures (cases bit-identical or the measured difference; the quick calibration)
run_stage 60 "test_longvector_gpu 20" "$out/test_longvector_gpu.txt" $B/tests/test_longvector_gpu 20
grep -E "^longvector:|^calibrated|failed|rc=" "$out/test_longvector_gpu.txt" | head -20 | tee -a "$out/summary.txt"

# the sweep of the source paper: (N+2)^2 grids, r = alpha^2 dt / h^2 = 0.08 per axis (kept for every size); 200 sizes from 10 to 7000
cat > "$out/lv_sweep.ini" <<'INI'
[grid]
dims = 2
nx = 1002
ny = 1002
[scheme]
dt = 8e-8          ; r = dt / h^2 = 0.08 per axis here; the sweep keeps r for every size
steps = 10
precision = float
[initial]
kind = random
[run]
method = longvector
INI
run_stage 120 "sweep float, N = 10..7000 step 35 (200 sizes)" "$out/sweep_float.txt" \
  $B/pyrgrid sweep "$out/lv_sweep.ini" --sizes 10:7000:35 --csv "$out/sweep_float.csv" --png "$out/sweep_float.png"
grep -E "^long-vector method|^per step|^sizes:|^first staircase|rc=" "$out/sweep_float.txt" | tee -a "$out/summary.txt"

run_stage 60 "bench: long-vector beside naive at N = 4096 and 16384" "$out/bench.txt" \
  $B/bench/bench_longvector --sizes 4096,16384 --precision both
tee -a "$out/summary.txt" < "$out/bench.txt"

# the cuBLAS ranges reach one row before and after the interior: memcheck the method's GPU cases
if command -v compute-sanitizer >/dev/null; then
  run_stage 150 "compute-sanitizer memcheck (test_longvector_gpu 2 --no-calibration)" "$out/memcheck.txt" \
    compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_longvector_gpu 2 --no-calibration
  grep -E "ERROR SUMMARY|^longvector:|rc=" "$out/memcheck.txt" | tee -a "$out/summary.txt"
else
  stamp "no compute-sanitizer on this machine: memcheck skipped"
fi

run_stage 150 "sweep double, N = 10..7000 step 70 (100 sizes)" "$out/sweep_double.txt" \
  $B/pyrgrid sweep "$out/lv_sweep.ini" --set scheme.precision=double --sizes 10:7000:70 \
  --csv "$out/sweep_double.csv" --png "$out/sweep_double.png"
grep -E "^long-vector method|^per step|^sizes:|^first staircase|rc=|skipped" "$out/sweep_double.txt" | tee -a "$out/summary.txt"
stamp "done; logs in $out"
