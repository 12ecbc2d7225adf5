#!/usr/bin/env bash
# Build pyrgrid with its benchmark programs for the scripts of bench/ (a Release
# build, CUDA when nvcc is found, for the GPU architectures in CUDA_ARCH,
# default 90: H100 and H200).  Every benchmark script builds through this one,
# so they share one configuration and one build folder.  With targets, only
# those are built.
#
# On a machine without a package registry, put Debian's packages the build
# needs beyond CMake, a C compiler, libpng and CUDA (the frames pipeline's
# cfitsio, FFTW and wcslib) as .deb files in .deps/ (fetched where there is one:
#   mkdir -p .deps && cd .deps && apt-get download libcfitsio10 libcfitsio-dev \
#       libfftw3-single3 libfftw3-dev libcurl3-gnutls libwcs7 wcslib-dev
# ); they are unpacked into .deps/root (dpkg -x; nothing is installed) and the
# build looks there.  HDF5 is left out then (a machine's own hdf5.pc read under
# that root names paths that do not exist; no benchmark needs HDF5).
#
# usage: bash bench/build.sh [BUILD_DIR [target...]]      (default BUILD_DIR: build-bench)
set -euo pipefail
build=${1:-build-bench}
shift || true
extra=()
root=$PWD/.deps/root
if ls .deps/*.deb >/dev/null 2>&1; then
  mkdir -p "$root"
  for f in .deps/*.deb; do dpkg -x "$f" "$root"; done
  export PKG_CONFIG_PATH=$root/usr/lib/x86_64-linux-gnu/pkgconfig:${PKG_CONFIG_PATH:-}
  export PKG_CONFIG_SYSROOT_DIR=$root
  export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
  extra+=(-DPYR_WITH_HDF5=OFF)
fi
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" -DPYR_BUILD_BENCH=ON -DPYR_NATIVE=ON \
  ${extra[@]+"${extra[@]}"} >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
# the compiler's errors and warnings are printed; a failed build fails this script
rc=0
cmake --build "$build" -j"$(nproc)" ${targets[@]+"${targets[@]}"} > "$build/bench-build.log" 2>&1 || rc=$?
grep -E "error:|warning:|Error [0-9]" "$build/bench-build.log" || true
[ $rc -eq 0 ] || { echo "bench/build.sh: the build failed (rc $rc); the end of $build/bench-build.log:"; tail -30 "$build/bench-build.log"; exit 1; }
[ ${#targets[@]} -gt 0 ] || test -x "$build/pyrgrid"
# with CUDA, the program reaches the GPU through the plug-in beside its library (built with the library)
if [ ${#targets[@]} -eq 0 ] && grep -q '^PYR_CUDA_PLUGIN_BUILT:INTERNAL=ON' "$build/CMakeCache.txt"; then
  test -s "$build/libpyrgrid_cuda.so" || { echo "bench/build.sh: the build made no $build/libpyrgrid_cuda.so"; exit 1; }
fi
