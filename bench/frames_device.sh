#!/usr/bin/env bash
# The frames pipeline (issue 22) on the GPU machine: build, the GPU frames
# tests (CPU vs CUDA agreement, the CLI tests on the GPU), a memcheck pass,
# and the benchmark; logs under OUTDIR (default $OUT).  About 3-5 minutes.
#
#   bash bench/frames_device.sh [OUTDIR]
#
# The GPU machine has no package registry.  Carry Debian's packages in .deps/
# (not in git), fetched on a machine that has one, in the repository root:
#
#   mkdir -p .deps && cd .deps && apt-get download \
#       libcfitsio10 libcfitsio-dev libfftw3-single3 libfftw3-dev libcurl3-gnutls && cd ..
#
# They are unpacked into .deps/root (dpkg -x; nothing is installed).  Python
# tests need python3-numpy, python3-skimage and python3-astropy; where those
# are missing they report "skipped" (exit 77), not failed.
set -uo pipefail
out=${1:-${OUT:-/tmp/frames-device}}
mkdir -p "$out"
root=$PWD/.deps/root
if ls .deps/*.deb >/dev/null 2>&1; then
  mkdir -p "$root"
  for f in .deps/*.deb; do dpkg -x "$f" "$root"; done
  export PKG_CONFIG_PATH=$root/usr/lib/x86_64-linux-gnu/pkgconfig:${PKG_CONFIG_PATH:-}
  export PKG_CONFIG_SYSROOT_DIR=$root
  export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
fi
for m in cfitsio fftw3f; do
  pkg-config --exists $m || echo "frames_device: pkg-config finds no $m: put its .deb files in .deps/ (see the header)" | tee -a "$out/build.log"
done
{ nvidia-smi -L; nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,pcie.link.gen.max,pcie.link.width.max --format=csv; nproc; } >"$out/device.txt" 2>&1
export PATH=/usr/local/cuda/bin:$PATH
B=build-frames
echo "== build" | tee -a "$out/build.log"
start=$(date +%s)
cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >>"$out/build.log" 2>&1
cmake --build $B -j"$(nproc)" --target pyrgrid_cli test_frames_gpu test_frames_api bench_frames >>"$out/build.log" 2>&1
rc=$?
echo "build rc=$rc ($(( $(date +%s) - start )) s)" | tee -a "$out/build.log"
ldd $B/libpyrgrid.so | grep "not found" | tee -a "$out/build.log"
[ $rc -eq 0 ] || { tail -30 "$out/build.log"; exit 1; }
$B/pyrgrid info | tee "$out/info.txt"

echo "== ctest -L frames (GPU tests included)"
( cd $B && timeout 240 ctest -L frames --output-on-failure ) >"$out/ctest_frames.txt" 2>&1
echo "ctest rc=$?" >>"$out/ctest_frames.txt"
grep -E "tests passed|Failed|Skipped|\*\*\*|rc=" "$out/ctest_frames.txt"
# the agreement test's figures
grep -E "^(align|poly):" "$out/ctest_frames.txt" || $B/tests/test_frames_gpu 2>&1 | tee "$out/test_frames_gpu.txt"

if command -v compute-sanitizer >/dev/null; then
  echo "== compute-sanitizer memcheck (test_frames_gpu)"
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B/tests/test_frames_gpu >"$out/memcheck.txt" 2>&1
  echo "memcheck rc=$?" | tee -a "$out/memcheck.txt"
  tail -3 "$out/memcheck.txt"
fi

echo "== bench_frames"
timeout 200 $B/bench/bench_frames --size 512 --frames 400 --history 20 --stream 4096 --stream-frames 400 2>&1 | tee "$out/bench_frames.txt"
echo "== bench_frames, 2 CPU threads (as on the development VM)"
timeout 60 $B/bench/bench_frames --size 512 --frames 100 --history 20 --stream 0 --backends cpu --threads 2 --no-skimage 2>&1 | tee -a "$out/bench_frames.txt"
echo "logs in $out"
