#!/usr/bin/env bash
# Issue 20 on the H100 machine (80 GB GPU, 128 GiB host): heat grids that do
# not fit the GPU, every choice automatic, timed as a user feels them: the
# whole `pyrgrid run` process (allocating and filling the built-in initial
# field, pinning, the solve, unpinning) beside the solve alone, with the
# report's host-memory outcome; and the in-core rates of that H100 for the
# ratios (3D float 1024^3, 2D float 32768^2).
#   bash bench/heat_h100.sh OUT [build-dir]
#   env: BIG3 (nodes per axis, 2880), STEPS3 (2000), BIG2 (150000), STEPS2 (2000; 0 skips the 2D run),
#        DECOMP, HEIGHT (set in the runs' [run] section; default automatic)
set -uo pipefail
out=${1:?usage: heat_h100.sh OUT [build-dir]}
build=${2:-build-dev}
log=$out/logs
mkdir -p "$log"
start=$(date +%s)
stamp() { echo "[$(($(date +%s) - start)) s] $*"; }
stamp build
bash bench/device-build.sh "$build" pyrgrid_cli bench_heat > "$log/build.txt" 2>&1 || { stamp "build failed"; tail -30 "$log/build.txt"; exit 1; }
[ -x "$build/pyrgrid" ] || { stamp "no $build/pyrgrid after the build"; exit 1; }
root=$PWD/.deps/root
[ -d "$root" ] && export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export PYRGRID_WISDOM=$log/wisdom
{ nvidia-smi; free -g; nproc; cat /sys/kernel/mm/transparent_hugepage/enabled; } > "$log/machine.txt" 2>&1
stamp calibrate
timeout 90 "$build/pyrgrid" calibrate --backend cuda --precision float --dims 2,3 --scheme heat > "$log/calibrate.txt" 2>&1
tail -2 "$log/calibrate.txt"
stamp "in core on this H100"
timeout 120 "$build/bench/bench_heat" --methods naive --steps 240 --grids f:1024x1024x1024,f:32768x32768 > "$log/h100_incore.txt" 2>&1
grep -E "^[23]D|naive" "$log/h100_incore.txt"
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
  cat "$log/${name}_run.txt"
  grep -E "Elapsed|Maximum resident" "$log/${name}_time.txt"
  grep -E "notice|staged|pinn" "$log/${name}_time.txt" | head -5
  awk -v a=$t0 -v b=$t1 'BEGIN { printf "process wall %.1f s\n", b - a }'
  python3 - "$log/${name}_report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
def find(o, k):
    if isinstance(o, dict):
        if k in o: return o[k]
        for v in o.values():
            x = find(v, k)
            if x is not None: return x
    return None
for k in ("seconds", "host_memory", "pin_seconds", "unpin_seconds", "host_note", "gcells_per_second", "method", "height"):
    print(k, "=", find(r, k))
PY
}
big heat3d 3 ${BIG3:-2880} ${STEPS3:-2000}
[ "${STEPS2:-2000}" != 0 ] && big heat2d 2 ${BIG2:-150000} ${STEPS2:-2000}
stamp done
tar -C "$out" -czf "$out/logs.tgz" logs
