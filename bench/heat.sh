#!/usr/bin/env bash
# The heat (and Poisson) benchmark on one GPU: the rows "heat ..." and "Poisson ..."
# of docs/performance.md and bench/results/<gpu>/summary.csv.
#
#   1. calibrate the CUDA backend (heat float and double, 2D and 3D; Poisson float 3D);
#   2. in core (the naive method): 2D float and double at widths 4096 .. 32768 by 16384
#      rows and the peer-shaped widths, 3D 768x352x2560, 640^3, 1024^3, 400 steps,
#      steady and end to end;
#   3. out of core with a quarter of the grid as the budget: 3D float 1024^3 (skewed
#      pieces, the planner's height), 2D float 32768^2 (skewed pieces, height 256);
#   4. Poisson 3D float 1024^3 (240 sweeps) in core and at a quarter;
#   5. with BIG=1, grids that do not fit the GPU, every choice automatic, timed as
#      a user feels them (the whole `pyrgrid run` process beside the solve, the
#      report's host-memory outcome): 3D float BIG3^3 (2880: 89 GiB of host fields)
#      and 2D float BIG2^2 (150000: 84 GiB).  They need a host with more RAM than
#      the grid (128 GiB for the defaults) and take minutes each.
#
#   bash bench/heat.sh OUT [BUILD_DIR]
#   env: BIG=1 (step 5), BIG3 (2880), STEPS3 (2000), BIG2 (150000), STEPS2 (2000; 0 skips the 2D run),
#        BIG_LIMIT (seconds per big run, 400), DECOMP, HEIGHT (for the big runs; default automatic)
# Logs under OUT/logs, the figures in OUT/summary.txt.  About 10 minutes without BIG.
set -uo pipefail
out=${1:?usage: bench/heat.sh OUT [BUILD_DIR]}
build=${2:-build-bench}
log=$out/logs
mkdir -p "$log"
start=$(date +%s)
stamp() { echo "[$(($(date +%s) - start)) s] $*" | tee -a "$out/summary.txt"; }
stamp build
bash bench/build.sh "$build" pyrgrid_cli bench_heat > "$log/build.txt" 2>&1 || { stamp "build failed"; tail -30 "$log/build.txt"; exit 1; }
root=$PWD/.deps/root
[ -d "$root" ] && export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export PYRGRID_WISDOM=$log/wisdom
{ nvidia-smi; free -g; nproc; cat /sys/kernel/mm/transparent_hugepage/enabled; git log -1 --format='%h %s'; } > "$log/machine.txt" 2>&1
bh=$build/bench/bench_heat

stamp calibrate
timeout 90 "$build/pyrgrid" calibrate --backend cuda --precision all --dims 2,3 --scheme heat > "$log/calibrate.txt" 2>&1
timeout 60 "$build/pyrgrid" calibrate --backend cuda --precision float --dims 3 --scheme poisson >> "$log/calibrate.txt" 2>&1
tail -1 "$log/calibrate.txt"

stamp "in core"
G=f:4096x16384,f:8192x16384,f:16384x16384,f:32768x16384,f:15708x16384,f:31416x16384
G=$G,d:4096x16384,d:8192x16384,d:16384x16384,d:32768x16384,d:15312x16384,d:30624x16384
G=$G,f:768x352x2560,f:640x640x640,f:1024x1024x1024,d:768x352x2560,d:640x640x640,d:1024x1024x1024
timeout 240 "$bh" --methods naive --steps 400 --grids "$G" > "$log/incore.txt" 2>&1
grep -E "^[23]D|naive" "$log/incore.txt" | tee -a "$out/summary.txt"

stamp "out of core at a quarter"
timeout 120 "$bh" --cases 3f --steps 384 --decomp skewed --heights3 48 --fractions 4 --methods naive,pyramid > "$log/ooc3f.txt" 2>&1
timeout 120 "$bh" --cases 2f --steps 1000 --heights 256 --fractions 4 --methods naive,pyramid > "$log/ooc2f.txt" 2>&1
grep -hE "^[23]D|naive in-core|pyramid 1/4" "$log/ooc3f.txt" "$log/ooc2f.txt" | tee -a "$out/summary.txt"

stamp "Poisson 3D"
timeout 200 "$bh" --equation poisson --cases 3f --steps 240 --heights3 10,20,40 --fractions 4 --methods naive,pyramid \
  > "$log/poisson.txt" 2>&1
grep -E "^3D|naive in-core|best 1/4" "$log/poisson.txt" | tee -a "$out/summary.txt"

big() { # name dims n steps
  local name=$1 dims=$2 n=$3 steps=$4 h
  h=$(awk -v n=$n 'BEGIN { printf "%.6g", 0.1 / ((n - 1) * (n - 1)) }')
  { echo "[grid]"; echo "dims = $dims"; echo "nx = $n"; echo "ny = $n"; [ $dims = 3 ] && echo "nz = $n"
    echo "[scheme]"; echo "dt = $h"; echo "steps = $steps"; echo "precision = float"
    echo "[initial]"; echo "kind = sine"; echo "[run]"; echo "backend = cuda"
    [ -n "${DECOMP:-}" ] && echo "decomposition = $DECOMP"; [ -n "${HEIGHT:-}" ] && echo "height = $HEIGHT"; } > "$log/$name.ini"
  "$build/pyrgrid" plan "$log/$name.ini" > "$log/${name}_plan.txt" 2>&1
  grep -E "host memory|method|decomposition|height|notice" "$log/${name}_plan.txt"
  stamp "run $name ($n^$dims, $steps steps)"
  local t0 t1
  t0=$(date +%s.%N)
  /usr/bin/time -v timeout ${BIG_LIMIT:-400} "$build/pyrgrid" run "$log/$name.ini" --report "$log/${name}_report.json" \
    > "$log/${name}_run.txt" 2> "$log/${name}_time.txt"
  echo "rc=$?" >> "$log/${name}_run.txt"
  t1=$(date +%s.%N)
  cat "$log/${name}_run.txt" | tee -a "$out/summary.txt"
  grep -E "Elapsed|Maximum resident" "$log/${name}_time.txt"
  grep -E "notice|staged|pinn" "$log/${name}_time.txt" | head -5
  awk -v a=$t0 -v b=$t1 'BEGIN { printf "process wall %.1f s\n", b - a }' | tee -a "$out/summary.txt"
}
if [ "${BIG:-0}" = 1 ]; then
  big heat3d 3 ${BIG3:-2880} ${STEPS3:-2000}
  [ "${STEPS2:-2000}" != 0 ] && big heat2d 2 ${BIG2:-150000} ${STEPS2:-2000}
fi
stamp "done"
