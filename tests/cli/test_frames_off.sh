#!/usr/bin/env bash
# A build with -DPYR_WITH_FRAMES=OFF: the library builds without cfitsio,
# FFTW and wcslib, links none of them, and exports no pyr_frames_* symbol (the frames API is
# absent, not a stand-in that fails); the program builds, and `pyrgrid
# frames` says that this build has no frames pipeline and how to get one.
# usage: test_frames_off.sh SRCDIR [CMAKE]
set -u
src=$1
cmake=${2:-cmake}
command -v "$cmake" >/dev/null || { echo "cmake not found: skipped"; exit 77; }
command -v nm >/dev/null || { echo "nm not found: skipped"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$cmake" -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DPYR_WITH_FRAMES=OFF -DPYR_ENABLE_CUDA=OFF \
  -DPYR_ENABLE_MPI=OFF -DPYR_BUILD_TESTS=OFF -DPYR_BUILD_BENCH=OFF -DBUILD_SHARED_LIBS=ON >"$work/configure.log" 2>&1 ||
  { tail -20 "$work/configure.log"; fail "configure with PYR_WITH_FRAMES=OFF"; }
grep -q "building without the frames pipeline" "$work/configure.log" || fail "configure does not say that the frames pipeline is left out"
"$cmake" --build "$work/build" --target pyrgrid -j2 >"$work/build.log" 2>&1 || { tail -30 "$work/build.log"; fail "build of libpyrgrid"; }
lib=$(ls "$work"/build/libpyrgrid.so.* 2>/dev/null | head -1)
[ -n "$lib" ] || fail "no libpyrgrid.so in $work/build"
syms=$(nm -D --defined-only "$lib" | awk '{print $3}')
echo "$syms" | grep -q '^pyr_plan_create$' || fail "pyr_plan_create is not exported (nm read nothing?)"
if echo "$syms" | grep -q '^pyr_frames_'; then fail "frames symbols exported: $(echo "$syms" | grep '^pyr_frames_' | head -3)"; fi
if nm -D --undefined-only "$lib" | grep -E ' U (fftw|fits_|ffopen|ffclos|wcs)'; then fail "the library still calls cfitsio, FFTW or wcslib"; fi
if command -v readelf >/dev/null && readelf -d "$lib" | grep NEEDED | grep -Ei 'cfitsio|fftw|wcs'; then
  fail "the library still needs cfitsio, FFTW or wcslib"
fi
"$cmake" --build "$work/build" --target pyrgrid_cli -j2 >"$work/build_cli.log" 2>&1 || { tail -30 "$work/build_cli.log"; fail "build of the program"; }
"$work/build/pyrgrid" --version >/dev/null || fail "the program does not start"
msg=$("$work/build/pyrgrid" frames x.fits 2>&1)
st=$?
[ $st = 2 ] || fail "pyrgrid frames exits $st, not 2: $msg"
case "$msg" in
  *"no frames pipeline"*"-DPYR_WITH_FRAMES=ON"*"cfitsio"*"wcslib"*) ;;
  *) fail "pyrgrid frames does not say that the build has no frames pipeline and how to get it: $msg" ;;
esac
# the export check of the public headers holds without the frames headers (ranks.h: the one private export,
# the table libpyrgrid_mpi reaches the core through, as tests/api/api.cmake lists it)
bash "$src/tests/api/test_exports.sh" "$lib" "$src/include/pyrgrid.h" "$src/include/pyrgrid_lgs.h" "$src/src/multi/ranks.h" \
  >"$work/exports.log" 2>&1 ||
  { tail -5 "$work/exports.log"; fail "exports of a library without frames"; }
# the Python module imports on it and says what frames() needs
py=/usr/bin/python3
if [ -x "$py" ] && "$py" -c "import numpy" 2>/dev/null; then
  pm=$(cd "$work" && PYTHONPATH="$src/python" PYRGRID_LIBRARY="$lib" "$py" -c '
import numpy as np, pyrgrid
try:
    pyrgrid.frames(np.zeros((3, 8, 8), "f4"))
except pyrgrid.Error as e:
    print(e)' 2>&1) || fail "import pyrgrid on a library without frames: $pm"
  case "$pm" in *"without the frames pipeline"*"PYR_WITH_FRAMES=ON"*) ;; *) fail "pyrgrid.frames on a library without frames: $pm" ;; esac
fi
echo "PYR_WITH_FRAMES=OFF: libpyrgrid built without cfitsio, FFTW and wcslib, no pyr_frames_* exported; pyrgrid frames: $msg"
