#!/usr/bin/env bash
# Several GPUs of one host and MPI ranks: the two-GPU table of docs/performance.md
# (bench/results/h100x2/summary.csv).  Builds, runs the multi-device tests, then
# the scaling benchmark; logs and OUT/summary.txt under OUT.  About 5-7 minutes.
#
#   bash bench/multigpu.sh OUT [BUILD_DIR]
#
# 1. Tests (label parts): test_parts_cuda runs random problems over 2-5
#    contexts of GPU 0 (devices = 0,0,...: the whole multi-device path,
#    device-to-device halo copies included, on one GPU) against the CPU's
#    naive method bit for bit; test_parts_multigpu the same over every GPU
#    (devices = 0,1,..; skipped with one GPU); test_parts_cli_cuda through the
#    program.  With mpirun on the machine: 2 ranks x 1 GPU (and 2 ranks x 2
#    contexts) through the program, compared byte for byte with one CPU run.
# 2. Scaling: 2D float 32768^2 and 3D float 1024^3 per GPU, in core and out
#    of core (memory = 1 GiB per GPU, a quarter of one GPU's grid): one GPU,
#    two GPUs on the same grid (strong) and two GPUs on twice the grid (weak),
#    and with mpirun two ranks.  Each configuration runs twice, with S1 and S2
#    steps; the rate is interior x (S2 - S1) / (t2 - t1), which leaves out what
#    both runs share (making the initial field, copies in and out, pinning), and
#    the end-to-end rate of the longer run is printed beside it.  With one
#    GPU the "two GPU" rows run devices = 0,0 (two contexts of one GPU): they
#    check the path, they are not scaling figures.
set -uo pipefail
. "$(dirname "$0")/multigpu_common.sh"
out=${1:?usage: bench/multigpu.sh OUT [BUILD_DIR]}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
B=${2:-build-bench}
{ nvidia-smi -L; nvidia-smi --query-gpu=name,memory.total,pcie.link.gen.max,pcie.link.width.max --format=csv; nvidia-smi topo -m; nproc; free -g; } >"$out/device.txt" 2>&1
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
echo "GPUs: $ngpu; mpirun: $(command -v mpirun || echo none)" | tee "$out/summary.txt"

echo "== build" | tee -a "$out/summary.txt"
start=$(date +%s)
# (the carried .debs of cfitsio and FFTW unpacked, as for every device build)
bash bench/build.sh $B >"$out/build.log" 2>&1
rc=$?
root=$PWD/.deps/root
[ -d "$root" ] && export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
echo "build rc=$rc ($(( $(date +%s) - start )) s)" | tee -a "$out/summary.txt"
[ $rc -eq 0 ] || { tail -30 "$out/build.log"; exit 1; }
case $B in /*) pyr=$B/pyrgrid ;; *) pyr=$PWD/$B/pyrgrid ;; esac
$pyr info | tee "$out/info.txt"

echo "== tests (label parts, GPU ones included)" | tee -a "$out/summary.txt"
( cd $B && timeout 300 ctest -L parts -E "test_mpi" --output-on-failure ) >"$out/ctest_parts.txt" 2>&1
echo "ctest rc=$?" >>"$out/ctest_parts.txt"
grep -E "random problems|tests passed|Failed|\*\*\*|rc=" "$out/ctest_parts.txt" | tee -a "$out/summary.txt"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpi=()
if command -v mpirun >/dev/null && $pyr info | grep -q "^mpi: compiled in"; then
  mpi=(mpirun -np 2 --bind-to none)
  [ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)
  mpirun --version 2>&1 | grep -q "Open MPI" && mpi+=(--oversubscribe)
  echo "== MPI on the GPU: 2 ranks x 1 GPU, 2 ranks x 2 contexts, against one CPU run" | tee -a "$out/summary.txt"
  cat >"$work/m.ini" <<'EOF'
[grid]
dims = 3
nx = 130
ny = 97
nz = 211
[scheme]
equation = heat
dt = 2e-6
steps = 45
precision = float
[initial]
kind = random
[output]
field = m.npy
EOF
  (
    cd "$work" || exit 1
    $pyr run m.ini -q --set run.backend=cpu --set output.field=ref.npy >/dev/null
    for devs in "" 0,0; do
      rm -f m.*.npy m.parts.json
      "${mpi[@]}" $pyr run m.ini --set run.backend=cuda ${devs:+--set run.devices=$devs} 2>&1 | grep -v "^pyrgrid: wrote"
      $pyr assemble m.parts.json all.npy -q && cmp -s all.npy ref.npy && echo "mpirun -np 2 (devices ${devs:-one per rank}): equal to one CPU run" ||
        echo "FAIL: mpirun -np 2 (devices ${devs:-one per rank}) differs from one CPU run"
    done
  ) 2>&1 | tee -a "$out/summary.txt"
else
  echo "== MPI: no mpirun or a build without MPI (install Open MPI: libopenmpi-dev, openmpi-bin); MPI runs skipped" | tee -a "$out/summary.txt"
fi

echo "== scaling" | tee -a "$out/summary.txt"
two=0,1
[ "$ngpu" -lt 2 ] && two=0,0
# the problem files and run() (bench/multigpu_common.sh): each row the steady and end-to-end Gcell/s
run_limit=150
run_opts=(-q)
run_row() {
  awk -v n="$1" -v m="$2" -v e="$3" -v a="$4" -v b="$5" 'BEGIN {
    printf "%-44s %10.1f %10.1f   (t %.3f / %.3f s)\n", n, m, e, a, b }' | tee -a "$out/scaling.txt"
}
problems "$work"
printf "%-44s %10s %10s\n" "configuration (devices $two)" "Gcell/s" "end-to-end" | tee -a "$out/scaling.txt"
# 2D float 32768^2 per GPU; weak: 32768 x 65536 interior (ny = 65538)
run "2D in core, 1 GPU" one "$work/s2.ini" 200 2200
run "2D in core, 2 GPUs, same grid (strong)" one "$work/s2.ini" 200 2200 --set run.devices=$two
run "2D in core, 2 GPUs, twice the grid (weak)" one "$work/s2.ini" 200 2200 --set run.devices=$two --set grid.ny=65536
run "2D out of core 1 GiB, 1 GPU" one "$work/s2.ini" 256 2304 --set run.method=pyramid --set run.memory=1GiB
run "2D out of core 1 GiB/GPU, 2 GPUs (strong)" one "$work/s2.ini" 256 2304 --set run.method=pyramid --set run.memory=1GiB --set run.devices=$two
run "2D out of core 1 GiB/GPU, 2 GPUs (weak)" one "$work/s2.ini" 256 2304 --set run.method=pyramid --set run.memory=1GiB --set run.devices=$two --set grid.ny=65536
[ ${#mpi[@]} -gt 0 ] && run "2D in core, 2 ranks x 1 GPU (strong)" mpi "$work/s2.ini" 200 2200
# 3D float 1024^3 per GPU; weak: 1024 x 1024 x 2048 interior (nz = 2050)
run "3D in core, 1 GPU" one "$work/s3.ini" 50 1050
run "3D in core, 2 GPUs, same grid (strong)" one "$work/s3.ini" 50 1050 --set run.devices=$two
run "3D in core, 2 GPUs, twice the grid (weak)" one "$work/s3.ini" 50 1050 --set run.devices=$two --set grid.nz=2050
run "3D out of core 1 GiB, 1 GPU" one "$work/s3.ini" 64 576 --set run.method=pyramid --set run.memory=1GiB
run "3D out of core 1 GiB/GPU, 2 GPUs (strong)" one "$work/s3.ini" 64 576 --set run.method=pyramid --set run.memory=1GiB --set run.devices=$two
run "3D out of core 1 GiB/GPU, 2 GPUs (weak)" one "$work/s3.ini" 64 576 --set run.method=pyramid --set run.memory=1GiB --set run.devices=$two --set grid.nz=2050
[ ${#mpi[@]} -gt 0 ] && run "3D in core, 2 ranks x 1 GPU (strong)" mpi "$work/s3.ini" 50 1050
# how each multi-GPU run was cut (parts, H)
for f in s2 s3; do $pyr plan "$work/$f.ini" --set run.devices=$two | grep "^parts:" | sed "s/^/$f: /"; done | tee -a "$out/scaling.txt"
grep -c . "$out/scaling.err" >/dev/null 2>&1 && { echo "stderr of the runs:"; tail -5 "$out/scaling.err"; } | tee -a "$out/summary.txt"
cat "$out/scaling.txt" >>"$out/summary.txt"
echo "logs in $out"
