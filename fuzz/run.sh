#!/usr/bin/env bash
# Build the libFuzzer harnesses with clang (in build-fuzz/) and run each for
# SECONDS seconds (default 20: the smoke run of scripts/test.sh).  A longer
# hunt:  bash fuzz/run.sh 1200
# New inputs the fuzzers find go to build-fuzz/corpus/<harness>/ (kept
# between runs, not in git); the seeds in fuzz/corpus/<harness>/ are only
# read.  A crash, leak, sanitizer report or timeout fails the run and leaves
# the input in build-fuzz/artifacts/; add it to the harness's seeds and a
# regression test once fixed.
# usage: bash fuzz/run.sh [SECONDS] [HARNESS...]   (default: every fuzz/fuzz_NAME.c)
# fuzz_hdf5 checks pyrgrid's judgement of HDF5 files (pyr_h5_check); with
# PYR_FUZZ_HDF5_LIBRARY=1 it also feeds whole files to the reader, that is to
# libhdf5, which is not built with coverage and which the fuzzer breaks in
# seconds (Debian's 1.10.8: a 64-byte file makes it allocate 2 GB; leaks on
# crafted files) - a hunt for libhdf5's bugs, not a smoke test.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-20}
shift || true
harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
  for f in fuzz/fuzz_*.c; do h=${f#fuzz/fuzz_}; harnesses+=("${h%.c}"); done
fi
command -v clang >/dev/null || { echo "fuzz: clang not found (bash scripts/setup.sh installs it)"; exit 1; }
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DPYR_FUZZ=ON -DPYR_BUILD_TESTS=OFF \
  -DPYR_BUILD_BENCH=OFF -DPYR_ENABLE_CUDA=OFF >/dev/null
targets=()
for h in "${harnesses[@]}"; do targets+=(--target "fuzz_$h"); done
cmake --build build-fuzz -j"$(nproc)" "${targets[@]}" >/dev/null
mkdir -p build-fuzz/artifacts
export OMP_NUM_THREADS=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
failed=()
for h in "${harnesses[@]}"; do
  mkdir -p "build-fuzz/corpus/$h"
  opts=(-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1
        -artifact_prefix="build-fuzz/artifacts/$h-")
  [ -f "fuzz/$h.dict" ] && opts+=(-dict="fuzz/$h.dict")
  log=build-fuzz/fuzz_$h.log
  if ./build-fuzz/fuzz/fuzz_"$h" "${opts[@]}" "build-fuzz/corpus/$h" "fuzz/corpus/$h" > "$log" 2>&1; then
    echo "fuzz_$h: $(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}') runs in ${secs}s, nothing found"
  else
    echo "fuzz_$h: FOUND A PROBLEM (log $log, input in build-fuzz/artifacts/):"
    grep -E "ERROR|runtime error|SUMMARY|Test unit written" "$log" | head -20
    failed+=("$h")
  fi
done
[ ${#failed[@]} -eq 0 ] || { echo "fuzz: failed: ${failed[*]}"; exit 1; }
