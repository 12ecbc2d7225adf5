#!/usr/bin/env bash
# Build pyrgrid on the GPU machine, which has no package registry: Debian's
# packages the build needs beyond CMake, a C compiler, libpng and CUDA (the
# frames pipeline's cfitsio and FFTW) are carried as .deb files in .deps/
# (not in git; see README, "On the GPU machine") and unpacked into
# .deps/root (dpkg -x; nothing is installed).  Every device script builds
# through this one (the same configuration; one build directory, build-dev,
# serves them all on a warm machine).  With targets, only those are built
# (a device script that needs a few; what is built already is kept).
# Usage: bash bench/device-build.sh [build-dir [target...]]
set -euo pipefail
build=${1:-build-dev}
shift || true
root=$PWD/.deps/root
if ls .deps/*.deb >/dev/null 2>&1; then
  mkdir -p "$root"
  for f in .deps/*.deb; do dpkg -x "$f" "$root"; done
  export PKG_CONFIG_PATH=$root/usr/lib/x86_64-linux-gnu/pkgconfig:${PKG_CONFIG_PATH:-}
  export PKG_CONFIG_SYSROOT_DIR=$root
  export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
fi
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi
# HDF5 off: pkg-config would take the machine's own hdf5.pc under the carried
# packages' sysroot (a path that does not exist); the HDF5 formats have no GPU
# part, and their tests skip in a build without them
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DPYR_WITH_HDF5=OFF >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
# the compiler's errors and warnings are printed; a failed build fails this script
rc=0
cmake --build "$build" -j"$(nproc)" ${targets[@]+"${targets[@]}"} > "$build/device-build.log" 2>&1 || rc=$?
grep -E "error:|warning:|Error [0-9]" "$build/device-build.log" || true
[ $rc -eq 0 ] || { echo "device-build: the build failed (rc $rc); the end of $build/device-build.log:"; tail -30 "$build/device-build.log"; exit 1; }
[ ${#targets[@]} -gt 0 ] || test -x "$build/pyrgrid"
