#!/usr/bin/env bash
# Build pyrgrid on the GPU machine (which has no package registry; pyrgrid
# needs nothing there beyond CMake, a C compiler, libpng and CUDA).
# Usage: bash bench/device-build.sh [build-dir]
set -euo pipefail
build=${1:-build-dev}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
cmake --build "$build" -j"$(nproc)" 2>&1 | grep -E "error|warning|Error" || true
test -x "$build/pyrgrid"
