#!/usr/bin/env bash
# Issue 21 on the GPU machine: the Maxwell (FDTD) GPU tests, compute-sanitizer
# on the CUDA kernel, a calibration, the in-core / out-of-core benchmark and
# the CPU figure on two host cores.  Logs under OUT/logs.
#   bash bench/maxwell_device.sh OUT [build-dir]     (env: MX_GRID, MX_STEPS, MX_HEIGHTS, MX_CPU_GRID, MX_SKIP_BUILD)
set -uo pipefail
out=${1:?usage: maxwell_device.sh OUT [build-dir]}
build=${2:-build-dev}
log=$out/logs
mkdir -p "$log"
start=$(date +%s)
stamp() { echo "[$(($(date +%s) - start)) s] $*"; }
if [ -z "${MX_SKIP_BUILD:-}" ]; then
  stamp build
  bash bench/device-build.sh "$build" > "$log/build.txt" 2>&1 || { stamp "build failed"; tail -30 "$log/build.txt"; exit 1; }
fi
root=$PWD/.deps/root
[ -d "$root" ] && export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export PYRGRID_WISDOM=$log/wisdom
stamp "maxwell gpu tests"
{
  timeout 200 "$build/tests/test_maxwell_property" ${MX_PROP_CASES:-150} 2 cuda; echo "rc=$?"
  timeout 120 "$build/tests/test_conformance"; echo "rc=$?"
  PYR_MAXWELL_BACKEND=cuda timeout 120 /usr/bin/python3 tests/test_maxwell_numpy.py "$PWD/$build/pyrgrid" "$out/numpy_cuda"; echo "rc=$?"
} > "$log/maxwell_tests.txt" 2>&1
grep -E "bit-identical|rc=|agree|DIFF|FAIL|failed" "$log/maxwell_tests.txt" | head -20
stamp memcheck
timeout 150 compute-sanitizer --tool memcheck "$build/tests/test_maxwell_property" 8 3 cuda > "$log/memcheck_maxwell.txt" 2>&1
tail -2 "$log/memcheck_maxwell.txt"
stamp calibrate
timeout 90 "$build/pyrgrid" calibrate --backend cuda --precision float --dims 3 --scheme maxwell > "$log/calibrate.txt" 2>&1
tail -3 "$log/calibrate.txt"
stamp "bench in core and out of core"
timeout ${MX_BENCH_LIMIT:-240} "$build/bench/bench_maxwell" --grid ${MX_GRID:-1024} --steps ${MX_STEPS:-120} --fractions 4 \
  --heights ${MX_HEIGHTS:-12,24,48} > "$log/bench_maxwell.txt" 2>&1
cat "$log/bench_maxwell.txt"
if [ -n "${MX_CPU_GRID:-}" ]; then
  cores=$(lscpu -p=CPU,CORE | grep -v '^#' | sort -t, -k2,2n -u | head -2 | cut -d, -f1 | paste -sd,)
  stamp "cpu on cores $cores"
  taskset -c "$cores" env OMP_NUM_THREADS=2 timeout 120 "$build/bench/bench_maxwell" --backend cpu --grid "$MX_CPU_GRID" \
    --steps ${MX_CPU_STEPS:-20} --methods naive > "$log/bench_maxwell_cpu.txt" 2>&1
  cat "$log/bench_maxwell_cpu.txt"
fi
stamp done
