#!/usr/bin/env bash
# The line Gauss-Seidel solver on the GPU machine (issue 6): build, GPU tests,
# CPU tests, a memcheck pass and the benchmark, logs under OUTDIR.
#   bash bench/lgs_device.sh OUTDIR [bench_lgs arguments...]
# Builds the solver's targets with CMake; if the whole library does not build
# (other parts mid-edit), compiles the solver's own sources directly.
set -uo pipefail
out=${1:-/tmp/lgs}
shift || true
mkdir -p "$out"
root=$PWD/.deps/root
if ! pkg-config --exists inih 2>/dev/null && ls .deps/*.deb >/dev/null 2>&1; then
  mkdir -p "$root"
  for f in .deps/*.deb; do dpkg -x "$f" "$root"; done
  export PKG_CONFIG_PATH=$root/usr/lib/x86_64-linux-gnu/pkgconfig
  export PKG_CONFIG_SYSROOT_DIR=$root
  export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
fi
nvidia-smi -L > "$out/device.txt" 2>&1
B=build-dev-lgs
if cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DPYR_BUILD_BENCH=ON >"$out/build.log" 2>&1 &&
   cmake --build $B -j"$(nproc)" --target test_lgs_gpu test_lgs bench_lgs >>"$out/build.log" 2>&1; then
  T=$B/tests/test_lgs_gpu; TC=$B/tests/test_lgs; BE=$B/bench/bench_lgs
  echo "built with CMake" | tee -a "$out/build.log"
else
  echo "CMake build failed (see above); compiling the solver alone" | tee -a "$out/build.log"
  M=build-lgs-min
  mkdir -p $M
  CF="-std=c11 -O3 -fopenmp -ffp-contract=off -fno-fast-math -Wall -Wextra -D_POSIX_C_SOURCE=200809L -DPYR_HAVE_CUDA=1 -Iinclude -Isrc -Itests"
  objs=""
  for f in src/core/error.c src/core/suggest.c src/io/npy.c src/io/atomic.c src/solvers/lgs/lgs_cpu.c \
           src/solvers/lgs/lgs_expr.c src/solvers/lgs/lgs_solve.c src/solvers/lgs/lgs_system.c; do
    o=$M/$(basename "$f" .c).o
    gcc $CF -c "$f" -o "$o" >>"$out/build.log" 2>&1 || { echo "gcc $f failed" | tee -a "$out/build.log"; exit 1; }
    objs="$objs $o"
  done
  nvcc -O3 -arch=sm_90 --fmad=false -lineinfo -Iinclude -Isrc -DPYR_HAVE_CUDA=1 -c src/backend/cuda/lgs_cuda.cu \
    -o $M/lgs_cuda.o >>"$out/build.log" 2>&1 || { echo "nvcc failed" | tee -a "$out/build.log"; exit 1; }
  L="$M/lgs_cuda.o -L/usr/local/cuda/lib64 -lcudart -lstdc++ -lm"
  gcc $CF -DPYR_SOURCE_DIR=\"$PWD\" -DPYR_BINARY_DIR=\"$PWD/$M\" tests/test_lgs_gpu.c $objs $L -o $M/test_lgs_gpu >>"$out/build.log" 2>&1
  gcc $CF -DPYR_SOURCE_DIR=\"$PWD\" -DPYR_BINARY_DIR=\"$PWD/$M\" tests/test_lgs.c $objs $L -o $M/test_lgs >>"$out/build.log" 2>&1
  gcc $CF bench/bench_lgs.c $objs $L -o $M/bench_lgs >>"$out/build.log" 2>&1
  T=$M/test_lgs_gpu; TC=$M/test_lgs; BE=$M/bench_lgs
fi
echo "== test_lgs_gpu"; ( time $T ) >"$out/test_gpu.log" 2>&1; echo "rc=$?" >>"$out/test_gpu.log"; tail -3 "$out/test_gpu.log"
echo "== test_lgs (CPU)"; ( time $TC ) >"$out/test_cpu.log" 2>&1; echo "rc=$?" >>"$out/test_cpu.log"; tail -3 "$out/test_cpu.log"
if command -v compute-sanitizer >/dev/null; then
  echo "== memcheck"
  compute-sanitizer --tool memcheck $BE --sizes 100,300 --seconds 0.01 --max-iters 70 --no-seq --no-cpu >"$out/memcheck.log" 2>&1
  tail -4 "$out/memcheck.log"
fi
if [ -d "$B" ] && cmake --build $B -j"$(nproc)" --target test_lgs_cli pyrgrid_cli >>"$out/build.log" 2>&1; then
  echo "== test_lgs_cli"; $B/tests/test_lgs_cli >"$out/test_cli.log" 2>&1; echo "rc=$?" >>"$out/test_cli.log"; tail -2 "$out/test_cli.log"
  echo "== pyrgrid solve (examples, GPU)"
  ( mkdir -p /tmp/lgs-ex && cd /tmp/lgs-ex && P=$OLDPWD/$B/pyrgrid E=$OLDPWD/examples &&
    $P solve $E/solve_test1.ini --quiet --set system.N=1024 --set system.M=1024 --set run.backend=cuda &&
    $P solve $E/solve_test1.ini --quiet --set system.N=1024 --set system.M=1024 --set run.backend=cpu &&
    $P solve $E/solve_parabolic.ini --quiet --set run.backend=cuda &&
    $P solve $E/solve_parabolic.ini --quiet --set system.N=2048 --set system.M=2048 --set run.backend=cuda --set run.check_every=100 &&
    $P solve $E/solve_test1.ini --quiet --set system.ordering=lexicographic --set run.backend=cuda;
    echo "rc=$?"; ls ) 2>&1 | tee "$out/cli.log"
fi
echo "== bench_lgs $*"; $BE "$@" 2>&1 | tee "$out/bench.txt"
