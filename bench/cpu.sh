#!/usr/bin/env bash
# The CPU backend on two cores: the table of bench/results/cpu/summary.csv
# (docs/performance.md#cpu).  bench_cpu runs, on one grid and in one process,
# the naive method (the whole grid as a wavefront of cache-sized tiles), the
# naive method with one sweep per step (PYR_CPU_WAVE=off, the streaming
# reference), the trivial method and the pyramid method with a cache-sized
# budget, in interleaved rounds (BENCH_CPU_ROUNDS, 3 here): medians, Gcell/s.
# Cases: 2D double 8192^2, 3D double 384^3, 48 steps.  On a machine of more
# cores the runs are pinned to two of them (taskset), as on the 2-core VM the
# published figures come from.
#
#   bash bench/cpu.sh OUT [BUILD_DIR]
set -uo pipefail
out=${1:?usage: bench/cpu.sh OUT [BUILD_DIR]}
build=${2:-build-bench}
mkdir -p "$out"
bash bench/build.sh "$build" pyrgrid_cli bench_cpu > "$out/build.txt" 2>&1 || { tail -30 "$out/build.txt"; exit 1; }
{ lscpu; nproc; free -g; git log -1 --format='%h %s'; } > "$out/machine.txt" 2>&1
export PYRGRID_WISDOM=$out/wisdom
cores=$(lscpu -p=CPU,CORE | grep -v '^#' | sort -t, -k2,2n -u | head -2 | cut -d, -f1 | paste -sd,)
pin=(taskset -c "$cores")
command -v taskset >/dev/null || pin=()
"${pin[@]}" env OMP_NUM_THREADS=2 "$build/pyrgrid" calibrate --backend cpu --scheme heat --precision double --dims 2,3 > "$out/calibrate.txt" 2>&1
for d in 2d 3d; do
  echo "== bench_cpu $d on cores $cores" | tee -a "$out/summary.txt"
  "${pin[@]}" env OMP_NUM_THREADS=2 BENCH_CPU_ROUNDS=${BENCH_CPU_ROUNDS:-3} "$build/bench/bench_cpu" $d 48 > "$out/bench_cpu_$d.txt" 2>&1
  grep -v "too small" "$out/bench_cpu_$d.txt" | tee -a "$out/summary.txt"
done
