#!/usr/bin/env bash
# `cmake --install` puts the library, header, pkg-config file and CMake
# package in place (and, built with MPI, libpyrgrid_mpi with its own; built with CUDA, the plug-in libpyrgrid_cuda.so); a program builds against them with pkg-config and with
# find_package(pyrgrid), and runs a small problem; the installed program runs
# from whatever prefix the tree is moved to.
# usage: test_install.sh BUILD_DIR [EXTRA_CFLAGS...]
# (EXTRA_CFLAGS: the sanitizer flags when the library was built with them)
set -eu
build=$1
shift
src=$(cd "$(dirname "$0")/../.." && pwd)
top=$(mktemp -d)
trap 'rm -rf "$top"' EXIT
prefix=$top/first
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(ls -d "$prefix"/lib*/pkgconfig | head -1)
libdir=${libdir%/pkgconfig}
export PKG_CONFIG_PATH=$libdir/pkgconfig:${PKG_CONFIG_PATH:-}
test -x "$prefix/bin/pyrgrid"
test -s "$prefix/share/doc/pyrgrid/LICENSE"
grep -q '^License: BSD-3-Clause' "$libdir/pkgconfig/pyrgrid.pc"
test -s "$libdir/cmake/pyrgrid/pyrgridConfig.cmake"
test -s "$libdir/cmake/pyrgrid/pyrgridConfigVersion.cmake"
cat > "$top/use.c" <<'C'
#include <pyrgrid.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
    pyr_problem_t p;
    pyr_problem_default(&p);
    p.n[0] = p.n[1] = 65;
    p.steps = 10;
    pyr_plan_t *plan = NULL;
    pyr_field_t *f = NULL;
    if (pyr_plan_create(&p, NULL, &plan) || pyr_field_create(&p, &f) || pyr_field_init(f, &p) ||
        pyr_execute(plan, f, NULL, NULL)) {
        fprintf(stderr, "%s\n", pyr_last_error());
        return 1;
    }
    if (strcmp(pyr_version(), PYR_VERSION_STRING) != 0) {
        fprintf(stderr, "run-time version %s, compiled against %s\n", pyr_version(), PYR_VERSION_STRING);
        return 1;
    }
    printf("installed pyrgrid %s ran a 65x65 problem: u[32][32] = %.6f\n", pyr_version(), ((double *)f->data)[32 * 65 + 32]);
    pyr_field_destroy(&f);
    pyr_plan_destroy(&plan);
    return 0;
}
C
# pkg-config
cc -std=c11 "$@" -o "$top/use" "$top/use.c" $(pkg-config --cflags --libs pyrgrid) -Wl,-rpath,"$(pkg-config --variable=libdir pyrgrid)"
"$top/use"

# The installed tree moved elsewhere: the program needs nothing from the
# build tree or the first prefix, and no LD_LIBRARY_PATH.
moved=$top/elsewhere/prefix
mkdir -p "$top/elsewhere"
mv "$prefix" "$moved"
unset LD_LIBRARY_PATH
if ldd "$moved/bin/pyrgrid" | grep -q "not found"; then
  echo "FAIL: the moved program misses libraries:"; ldd "$moved/bin/pyrgrid"; exit 1
fi
"$moved/bin/pyrgrid" --version | grep -q "^pyrgrid [0-9]"
(cd "$top" && "$moved/bin/pyrgrid" run "$src/examples/heat2d.ini" --quiet --set grid.nx=33 --set grid.ny=33 \
  --set scheme.steps=5 --set run.backend=cpu --set output.field=moved.npy --set output.image= >/dev/null)
test -s "$top/moved.npy"

# find_package(pyrgrid) from the moved prefix: the imported target pyrgrid::pyrgrid.
mkdir -p "$top/consumer"
cp "$top/use.c" "$top/consumer/use.c"
cat > "$top/consumer/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(pyrgrid_consumer C)
find_package(pyrgrid 0.1 REQUIRED)
add_executable(use use.c)
target_link_libraries(use PRIVATE pyrgrid::pyrgrid)
CM
flags="$*"
cmake -S "$top/consumer" -B "$top/consumer/build" -DCMAKE_PREFIX_PATH="$moved" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" >/dev/null
cmake --build "$top/consumer/build" >/dev/null
"$top/consumer/build/use"

# A build with CUDA installs its backend's plug-in beside the library; the moved program loads that one
# (from the folder of the libpyrgrid it runs with), once.
mlibdir=${libdir/#$prefix/$moved}
if [ -e "$build/libpyrgrid_cuda.so" ]; then
  test -s "$mlibdir/libpyrgrid_cuda.so"
  inits=$(LD_DEBUG=libs "$moved/bin/pyrgrid" info 2>&1 >/dev/null | grep -cF "calling init: $mlibdir/libpyrgrid_cuda.so" || true)
  [ "$inits" = 1 ] || { echo "FAIL: the moved program loads $mlibdir/libpyrgrid_cuda.so $inits times (pyrgrid info)"; exit 1; }
  echo "installed CUDA plug-in: the moved program loads it from $mlibdir"
fi

# A build with MPI installs it as a library of its own (libpyrgrid_mpi, pyrgrid_mpi.h, pyrgrid_mpi.pc,
# pyrgrid::pyrgrid_mpi) and the program's MPI module under LIBDIR/pyrgrid; the moved program runs under
# mpirun, and so does a program built against the installed pyrgrid_mpi.h.
if [ -e "$mlibdir/libpyrgrid_mpi.so" ]; then
  test -s "$moved/include/pyrgrid_mpi.h"
  test -s "$mlibdir/pkgconfig/pyrgrid_mpi.pc"
  test -s "$mlibdir/pyrgrid/pyrgrid_mpi_cli.so"
  if ldd "$mlibdir/pyrgrid/pyrgrid_mpi_cli.so" | grep -q "not found"; then
    echo "FAIL: the moved program's MPI module misses libraries:"; ldd "$mlibdir/pyrgrid/pyrgrid_mpi_cli.so"; exit 1
  fi
  if command -v mpirun >/dev/null; then
    # as tests/mpi.cmake: Open MPI's allocations are not leak-checked in sanitizer builds (last: a later
    # option wins, and the suite's ASAN_OPTIONS asks for leak checks)
    mpi=(env OMP_NUM_THREADS=1 ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 mpirun -np 2)
    mpirun --version 2>&1 | grep -q "Open MPI" && mpi+=(--oversubscribe --allow-run-as-root --bind-to none)
    (cd "$top" && "${mpi[@]}" "$moved/bin/pyrgrid" run "$src/examples/heat2d.ini" --quiet --set grid.nx=33 \
      --set grid.ny=33 --set scheme.steps=5 --set run.backend=cpu --set output.field=ranks.npy --set output.image= >/dev/null)
    # one file from the ranks (the installed module hands libpyrgrid_mpi's MPI-IO writer to the core)
    test -s "$top/ranks.npy"
    cat > "$top/consumer/use_mpi.c" <<'C'
#include <pyrgrid_mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    pyr_problem_t p;
    pyr_problem_default(&p);
    p.n[0] = p.n[1] = 33;
    p.steps = 5;
    pyr_field_t *part = NULL;
    pyr_mpi_info_t info;
    const pyr_status_t st = pyr_execute_mpi(&p, NULL, MPI_COMM_WORLD, NULL, &part, &info);
    if (st != PYR_OK) fprintf(stderr, "%s\n", pyr_last_error());
    else if (info.rank == 0) printf("installed pyrgrid_mpi: %d ranks, %s\n", info.ranks, info.partition);
    pyr_field_destroy(&part);
    MPI_Finalize();
    return st != PYR_OK;
}
C
    cat >> "$top/consumer/CMakeLists.txt" <<'CM'
add_executable(use_mpi use_mpi.c)
target_link_libraries(use_mpi PRIVATE pyrgrid::pyrgrid_mpi)
CM
    cmake -S "$top/consumer" -B "$top/consumer/build" >/dev/null
    cmake --build "$top/consumer/build" >/dev/null
    "${mpi[@]}" "$top/consumer/build/use_mpi" | grep -q "installed pyrgrid_mpi: 2 ranks"
    echo "installed libpyrgrid_mpi: the moved program and a program on pyrgrid_mpi.h ran under mpirun -np 2"
  fi
fi
echo "install test passed: pkg-config, find_package, moved prefix"
