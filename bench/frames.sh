#!/usr/bin/env bash
# The frames pipeline on one GPU: the "frames" rows of docs/performance.md.
# Builds, runs the frames tests (CPU and CUDA agreement, the CLI tests on the GPU)
# and a memcheck pass, then bench_frames: pyrgrid GPU, pyrgrid CPU and skimage's
# phase_cross_correlation side by side on 512^2 frames (history 20), 4096^2 frames
# streamed from pinned host memory, and the CPU backend on 2 threads.
# About 3-5 minutes.  The Python-driven tests need python3-numpy, python3-skimage
# and python3-astropy; where those are missing they report "skipped" (exit 77).
#
#   bash bench/frames.sh OUT [BUILD_DIR]
set -uo pipefail
out=${1:?usage: bench/frames.sh OUT [BUILD_DIR]}
B=${2:-build-bench}
mkdir -p "$out"
{ nvidia-smi -L; nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,pcie.link.gen.max,pcie.link.width.max --format=csv; nproc;
  git log -1 --format='%h %s'; } >"$out/device.txt" 2>&1
echo "== build" | tee "$out/summary.txt"
bash bench/build.sh $B pyrgrid_cli test_frames_gpu test_frames_api bench_frames >"$out/build.log" 2>&1 ||
  { tail -30 "$out/build.log"; exit 1; }
root=$PWD/.deps/root
[ -d "$root" ] && export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
$B/pyrgrid info > "$out/info.txt" 2>&1

echo "== ctest -L frames (GPU tests included)" | tee -a "$out/summary.txt"
( cd $B && timeout 240 ctest -L frames --output-on-failure ) >"$out/ctest_frames.txt" 2>&1
echo "ctest rc=$?" >>"$out/ctest_frames.txt"
grep -E "tests passed|Failed|Skipped|\*\*\*|rc=" "$out/ctest_frames.txt" | tee -a "$out/summary.txt"
# the agreement test's figures
$B/tests/test_frames_gpu > "$out/test_frames_gpu.txt" 2>&1
grep -E "^(align|poly):" "$out/test_frames_gpu.txt" | tee -a "$out/summary.txt"

if command -v compute-sanitizer >/dev/null; then
  echo "== compute-sanitizer memcheck (test_frames_gpu)" | tee -a "$out/summary.txt"
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_frames_gpu >"$out/memcheck.txt" 2>&1
  echo "memcheck rc=$?" | tee -a "$out/memcheck.txt" "$out/summary.txt"
fi

echo "== bench_frames" | tee -a "$out/summary.txt"
timeout 200 $B/bench/bench_frames --size 512 --frames 400 --history 20 --stream 4096 --stream-frames 400 2>&1 | tee "$out/bench_frames.txt" >> "$out/summary.txt"
echo "== bench_frames, 2 CPU threads" | tee -a "$out/summary.txt"
timeout 60 $B/bench/bench_frames --size 512 --frames 100 --history 20 --stream 0 --backends cpu --threads 2 --no-skimage 2>&1 |
  tee -a "$out/bench_frames.txt" >> "$out/summary.txt"
cat "$out/summary.txt"
