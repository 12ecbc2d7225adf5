#!/usr/bin/env bash
# The Maxwell (FDTD, Yee) benchmark: the rows "Maxwell ..." of docs/performance.md
# and bench/results/<gpu>/summary.csv.
#
#   1. calibrate the CUDA backend's Maxwell kernel (float, 3D);
#   2. 3D float MX_GRID^3 (1024: 30 GB of fields and materials), vacuum with a
#      dielectric sphere (a per-node coefficient field), in core and out of core
#      with a quarter of the fields as the budget at the planner's height and at
#      MX_HEIGHTS (24,48), MX_STEPS steps (192): steady and end-to-end rates;
#   3. with BIG=1, a grid that does not fit the GPU: BIG_GRID^3 (1480: 90.77 GB),
#      BIG_STEPS steps (240), the automatic budget and height;
#   4. with MX_CPU_GRID=N, the CPU backend on two cores (N^3, MX_CPU_STEPS steps), and
#      MEEP's rate on the same cells (bench/meep_compare.py) where python3-meep is installed.
#
#   bash bench/maxwell.sh OUT [BUILD_DIR]
#   env: MX_GRID, MX_STEPS, MX_HEIGHTS, MX_KERNELS (V1/V2/..: the naive run again per kernel variant),
#        BIG, BIG_GRID, BIG_STEPS, BIG_LIMIT, MX_CPU_GRID, MX_CPU_STEPS
# Logs under OUT/logs, the figures in OUT/summary.txt.
set -uo pipefail
out=${1:?usage: bench/maxwell.sh OUT [BUILD_DIR]}
build=${2:-build-bench}
log=$out/logs
mkdir -p "$log"
start=$(date +%s)
stamp() { echo "[$(($(date +%s) - start)) s] $*" | tee -a "$out/summary.txt"; }
stamp build
bash bench/build.sh "$build" pyrgrid_cli bench_maxwell > "$log/build.txt" 2>&1 || { stamp "build failed"; tail -30 "$log/build.txt"; exit 1; }
root=$PWD/.deps/root
[ -d "$root" ] && export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export PYRGRID_WISDOM=$log/wisdom
{ nvidia-smi; free -g; nproc; git log -1 --format='%h %s'; } > "$log/machine.txt" 2>&1
bm=$build/bench/bench_maxwell

stamp calibrate
timeout 90 "$build/pyrgrid" calibrate --backend cuda --precision float --dims 3 --scheme maxwell > "$log/calibrate.txt" 2>&1
tail -1 "$log/calibrate.txt"

stamp "in core and out of core at a quarter"
timeout ${MX_BENCH_LIMIT:-300} "$bm" --grid ${MX_GRID:-1024} --steps ${MX_STEPS:-192} --fractions 4 \
  --heights ${MX_HEIGHTS:-24,48} ${MX_KERNELS:+--kernel $MX_KERNELS} > "$log/bench_maxwell.txt" 2>&1
tee -a "$out/summary.txt" < "$log/bench_maxwell.txt"

if [ "${BIG:-0}" = 1 ]; then
  stamp "a grid larger than the GPU: ${BIG_GRID:-1480}^3"
  /usr/bin/time -v timeout ${BIG_LIMIT:-400} "$bm" --grid ${BIG_GRID:-1480} --steps ${BIG_STEPS:-240} --methods pyramid \
    --fractions 0 > "$log/big.txt" 2> "$log/big_time.txt"
  echo "rc=$?" >> "$log/big.txt"
  tee -a "$out/summary.txt" < "$log/big.txt"
  grep -E "Maximum resident|Elapsed" "$log/big_time.txt"
fi

if [ -n "${MX_CPU_GRID:-}" ]; then
  cores=$(lscpu -p=CPU,CORE | grep -v '^#' | sort -t, -k2,2n -u | head -2 | cut -d, -f1 | paste -sd,)
  stamp "CPU backend on cores $cores, ${MX_CPU_GRID}^3"
  for p in float double; do
    taskset -c "$cores" env OMP_NUM_THREADS=2 timeout 120 "$bm" --backend cpu --grid "$MX_CPU_GRID" \
      --steps ${MX_CPU_STEPS:-80} --methods naive --precision $p > "$log/cpu_$p.txt" 2>&1
    grep -E "^naive" "$log/cpu_$p.txt" | sed "s/^/pyrgrid $p: /" | tee -a "$out/summary.txt"
  done
  if /usr/bin/python3 -c 'import meep' 2>/dev/null; then
    taskset -c "$cores" env OMP_NUM_THREADS=2 timeout 300 /usr/bin/python3 bench/meep_compare.py "$MX_CPU_GRID" ${MX_CPU_STEPS:-80} \
      2>&1 | tail -1 | tee -a "$out/summary.txt"
  else
    echo "MEEP: not installed (python3-meep), not measured" | tee -a "$out/summary.txt"
  fi
fi
stamp "done"
