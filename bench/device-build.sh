#!/usr/bin/env bash
# Build pyrgrid on the GPU machine (which has no package registry): Debian's
# libinih is carried in .deps/ as .deb files (see README, "GPU machine") and
# unpacked into .deps/root.  Usage: bash bench/device-build.sh [build-dir]
set -euo pipefail
build=${1:-build-dev}
root=$PWD/.deps/root
if ! pkg-config --exists inih 2>/dev/null; then
  mkdir -p "$root"
  for f in .deps/*.deb; do dpkg -x "$f" "$root"; done
  export PKG_CONFIG_PATH=$root/usr/lib/x86_64-linux-gnu/pkgconfig
  export PKG_CONFIG_SYSROOT_DIR=$root
  export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
cmake --build "$build" -j"$(nproc)" 2>&1 | grep -E "error|warning|Error" || true
test -x "$build/pyrgrid"
