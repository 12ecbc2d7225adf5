#!/usr/bin/env bash
# Build pyrgrid on the GPU machine, which has no package registry: Debian's
# packages the build needs beyond CMake, a C compiler, libpng and CUDA (the
# frames pipeline's cfitsio and FFTW) are carried as .deb files in .deps/
# (not in git; see README, "On the GPU machine") and unpacked into
# .deps/root (dpkg -x; nothing is installed).
# Usage: bash bench/device-build.sh [build-dir]
set -euo pipefail
build=${1:-build-dev}
root=$PWD/.deps/root
if ls .deps/*.deb >/dev/null 2>&1; then
  mkdir -p "$root"
  for f in .deps/*.deb; do dpkg -x "$f" "$root"; done
  export PKG_CONFIG_PATH=$root/usr/lib/x86_64-linux-gnu/pkgconfig:${PKG_CONFIG_PATH:-}
  export PKG_CONFIG_SYSROOT_DIR=$root
  export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
cmake --build "$build" -j"$(nproc)" 2>&1 | grep -E "error|warning|Error" || true
test -x "$build/pyrgrid"
