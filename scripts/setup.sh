#!/usr/bin/env bash
# Install what pyrgrid needs (Debian/Ubuntu packages), then configure and build
# it in ./build.  CUDA is used when nvcc is found (PATH or /usr/local/cuda).
# usage: bash scripts/setup.sh [extra cmake arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
# clang, its libFuzzer runtime and OpenMP: the fuzz harnesses (fuzz/run.sh); cfitsio, FFTW, wcslib
# (sky positions from a frame's WCS) and the Python modules: the frames pipeline and its tests; HDF5:
# results and inputs (.h5), h5py and pytest: the Python module's tests and an independent reader of
# the files, xarray with its netCDF engines: the check that results open with their coordinates;
# Open MPI: runs over MPI ranks
# (optional at build time: without it pyrgrid builds and says that MPI is not available)
pkgs=(cmake make gcc pkg-config libpng-dev liblapack-dev python3-numpy clang libclang-rt-dev libomp-dev
      libcfitsio-dev libfftw3-dev wcslib-dev python3-skimage python3-astropy libhdf5-dev python3-pytest python3-h5py
      python3-xarray python3-h5netcdf python3-netcdf4 libopenmpi-dev openmpi-bin)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build -j"$(nproc)"
