#!/usr/bin/env bash
# Issue 21's grid that does not fit: on the H100 machine (80 GB GPU, 128 GiB
# host), a 3D float Yee problem of >= 90 GB of fields and materials
# (1480^3 nodes: six components and the per-node cb of a dielectric sphere)
# run to completion by the pyramid method with the automatic budget, and the
# in-core rate of the same kernel on that H100 (1024^3, 30 GB) for the ratio.
#   bash bench/maxwell_h100.sh OUT [build-dir]    (env: BIG_GRID, BIG_STEPS, CORE_GRID)
set -uo pipefail
out=${1:?usage: maxwell_h100.sh OUT [build-dir]}
build=${2:-build-dev}
log=$out/logs
mkdir -p "$log"
start=$(date +%s)
stamp() { echo "[$(($(date +%s) - start)) s] $*"; }
stamp build
bash bench/device-build.sh "$build" > "$log/build.txt" 2>&1 || { stamp "build failed"; tail -30 "$log/build.txt"; exit 1; }
root=$PWD/.deps/root
[ -d "$root" ] && export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export PYRGRID_WISDOM=$log/wisdom
{ nvidia-smi; free -g; nproc; } > "$log/machine.txt" 2>&1
stamp calibrate
timeout 60 "$build/pyrgrid" calibrate --backend cuda --precision float --dims 3 --scheme maxwell > "$log/calibrate.txt" 2>&1
tail -2 "$log/calibrate.txt"
stamp "in core ${CORE_GRID:-1024}^3"
timeout 120 "$build/bench/bench_maxwell" --grid ${CORE_GRID:-1024} --steps 60 --methods naive > "$log/h100_incore.txt" 2>&1
cat "$log/h100_incore.txt"
stamp "out of core ${BIG_GRID:-1480}^3"
/usr/bin/time -v timeout ${BIG_LIMIT:-400} "$build/bench/bench_maxwell" --grid ${BIG_GRID:-1480} --steps ${BIG_STEPS:-60} --methods pyramid \
  --fractions 0 > "$log/h100_big.txt" 2> "$log/h100_big_time.txt"
echo "rc=$?" >> "$log/h100_big.txt"
cat "$log/h100_big.txt"; grep -E "Maximum resident|Elapsed" "$log/h100_big_time.txt"
stamp done
