#!/usr/bin/env bash
# The test suite: build (scripts/setup.sh), run every test, then build again
# with AddressSanitizer + UndefinedBehaviorSanitizer and run the suite there
# (less the tests labelled "timing").
# GPU tests (label gpu) skip themselves on machines without a GPU.
# usage: bash scripts/test.sh [--no-sanitize]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
if [ "${1:-}" != "--no-sanitize" ]; then
  cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DPYR_SANITIZE=ON -DPYR_BUILD_BENCH=OFF >/dev/null
  cmake --build build-sanitize -j"$(nproc)"
  # tests labelled "timing" compare measured speeds, which instrumented code does not have
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-sanitize --output-on-failure -j"$(nproc)" -LE timing
fi
