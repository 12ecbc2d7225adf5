#!/usr/bin/env bash
# The test suite: build (scripts/setup.sh), run every test, then build again
# with AddressSanitizer + UndefinedBehaviorSanitizer and run the suite there
# (less the tests labelled "timing"), then build the libFuzzer harnesses with
# clang and run each for a short smoke time (fuzz/run.sh; longer: bash fuzz/run.sh 1200).
# GPU tests (label gpu) skip themselves on machines without a GPU.
# usage: bash scripts/test.sh [--no-sanitize] [--no-fuzz]
set -euo pipefail
cd "$(dirname "$0")/.."
sanitize=1
fuzz=1
for a in "$@"; do
  case "$a" in
    --no-sanitize) sanitize=0 ;;
    --no-fuzz) fuzz=0 ;;
    *) echo "usage: bash scripts/test.sh [--no-sanitize] [--no-fuzz]" >&2; exit 2 ;;
  esac
done
bash scripts/setup.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
if [ $sanitize = 1 ]; then
  cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DPYR_SANITIZE=ON -DPYR_BUILD_BENCH=OFF >/dev/null
  cmake --build build-sanitize -j"$(nproc)"
  # tests labelled "timing" compare measured speeds, which instrumented code does not have
  # scripts/lsan.supp: leaks inside third-party libraries (named there, with why)
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  LSAN_OPTIONS=suppressions=$PWD/scripts/lsan.supp:print_suppressions=0 \
    ctest --test-dir build-sanitize --output-on-failure -j"$(nproc)" -LE timing
fi
if [ $fuzz = 1 ]; then
  # every harness, ${PYR_FUZZ_SECONDS:-20} s each: a smoke test that the parsers hold up
  bash fuzz/run.sh "${PYR_FUZZ_SECONDS:-20}"
fi
