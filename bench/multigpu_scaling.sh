#!/usr/bin/env bash
# One, two and four GPUs of one host (docs/performance.md, "1, 2 and 4 GPUs of one host"): the parts
# tests, then heat 2D/3D float and Maxwell 3D float in core (strong; weak on four), heat out of core
# with 1 GiB per GPU, and two GPUs with the host grid pinned (run.host_memory = pin) beside the
# automatic choice.  Each configuration runs twice, with S1 and S2 steps: steady = interior x
# (S2 - S1) / (t2 - t1), end to end = interior x S2 / t2 (the runs' own seconds).  Needs 4 GPUs.
#
#   bash bench/multigpu_scaling.sh OUT [BUILD_DIR]
set -u
. "$(dirname "$0")/multigpu_common.sh"
out=${1:?usage: bench/multigpu_scaling.sh OUT [BUILD_DIR]}; mkdir -p $out
root=$PWD/.deps/root
start=$(date +%s); st(){ echo "[$(( $(date +%s)-start )) s] $*" | tee -a $out/summary.txt; }
nvidia-smi -L | tee -a $out/summary.txt
st build
B=${2:-build-bench}
bash bench/build.sh $B > $out/build.txt 2>&1; echo "build rc=$?" | tee -a $out/summary.txt
export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
case $B in /*) pyr=$B/pyrgrid ;; *) pyr=$PWD/$B/pyrgrid ;; esac
st "tests: label parts (GPU ones on every GPU)"
( cd $B && timeout 200 ctest -L parts -E "test_mpi" --timeout 190 --output-on-failure > $out/ctest_parts.txt 2>&1 )
grep -E "random problems|tests passed|Failed|\*\*\*" $out/ctest_parts.txt | head -12 | tee -a $out/summary.txt
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# the problem files and run() (bench/multigpu_common.sh)
problems "$work"
run_limit=120
run_opts=()
run_row() {
  awk -v n="$1" -v m="$2" -v e="$3" -v a="$4" -v b="$5" -v h="$6" 'BEGIN {
    printf "%-46s %9.1f %9.1f  e2e/steady %.2f (t %.3f / %.3f s) %s\n", n, m, e, (m > 0 ? e / m : 0), a, b, h }' | tee -a "$out/scaling.txt"
}
st scaling
printf "%-46s %9s %9s\n" "configuration" "steady" "e2e" | tee -a "$out/scaling.txt"
run "2D in core, 1 GPU" one "$work/s2.ini" 200 1200
run "2D in core, 2 GPUs (strong)" one "$work/s2.ini" 200 1200 --set run.devices=0,1
run "2D in core, 2 GPUs (strong), pinned" one "$work/s2.ini" 200 1200 --set run.devices=0,1 --set run.host_memory=pin
run "2D in core, 4 GPUs (strong)" one "$work/s2.ini" 200 1200 --set run.devices=0,1,2,3
run "2D in core, 4 GPUs (weak, 4x the grid)" one "$work/s2.ini" 200 1200 --set run.devices=0,1,2,3 --set grid.ny=131074 --set scheme.dt=1e-11
run "3D in core, 1 GPU" one "$work/s3.ini" 50 1050
run "3D in core, 2 GPUs (strong)" one "$work/s3.ini" 50 1050 --set run.devices=0,1
run "3D in core, 2 GPUs (strong), pinned" one "$work/s3.ini" 50 1050 --set run.devices=0,1 --set run.host_memory=pin
run "3D in core, 4 GPUs (strong)" one "$work/s3.ini" 50 1050 --set run.devices=0,1,2,3
run "3D in core, 4 GPUs (weak, 4x the grid)" one "$work/s3.ini" 50 1050 --set run.devices=0,1,2,3 --set grid.nz=4098 --set scheme.dt=2e-8
mx=(--set grid.nx=641 --set grid.ny=641 --set grid.nz=641 --set scheme.precision=float --set output.every=0 --set output.probes=)
run "Maxwell 3D 641^3 in core, 1 GPU" one examples/maxwell_cavity.ini 40 440 "${mx[@]}" --set run.backend=cuda
run "Maxwell 3D 641^3 in core, 2 GPUs" one examples/maxwell_cavity.ini 40 440 "${mx[@]}" --set run.devices=0,1 --set run.backend=cuda
run "Maxwell 3D 641^3 in core, 4 GPUs" one examples/maxwell_cavity.ini 40 440 "${mx[@]}" --set run.devices=0,1,2,3 --set run.backend=cuda
st "out of core"
run "2D out of core 1 GiB/GPU, 1 GPU" one "$work/s2.ini" 256 2304 --set run.method=pyramid --set run.memory=1GiB
run "2D out of core 1 GiB/GPU, 2 GPUs" one "$work/s2.ini" 256 2304 --set run.method=pyramid --set run.memory=1GiB --set run.devices=0,1
run "2D out of core 1 GiB/GPU, 4 GPUs" one "$work/s2.ini" 256 2304 --set run.method=pyramid --set run.memory=1GiB --set run.devices=0,1,2,3
run "3D out of core 1 GiB/GPU, 1 GPU" one "$work/s3.ini" 64 576 --set run.method=pyramid --set run.memory=1GiB
run "3D out of core 1 GiB/GPU, 2 GPUs" one "$work/s3.ini" 64 576 --set run.method=pyramid --set run.memory=1GiB --set run.devices=0,1
run "3D out of core 1 GiB/GPU, 4 GPUs" one "$work/s3.ini" 64 576 --set run.method=pyramid --set run.memory=1GiB --set run.devices=0,1,2,3
for f in s2 s3; do for d in 0,1 0,1,2,3; do $pyr plan "$work/$f.ini" --set run.devices=$d | grep -E "^parts:|host" | sed "s/^/$f $d: /"; done; done | tee -a "$out/scaling.txt"
tail -5 $out/scaling.err | tee -a $out/summary.txt
st done
