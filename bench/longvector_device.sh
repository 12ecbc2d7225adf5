#!/usr/bin/env bash
# The long-vector method (issue 23) on the GPU machine, in one device call of
# under 5 minutes: build, calibrate the CUDA backend's 2D heat constants (the
# long-vector method's t_kernel, t_add, t_saxpy, t_scal and threads among
# them), the method's tests (bit-identity with the CPU naive method on the
# GPU), the sweep over grid sizes N = 10..7000 against the seed's model (CSV,
# PNG, emax, ebar, the first staircase step measured and predicted), and the
# long-vector rate beside the naive kernel's at N = 4096 and 16384.
#
#   bash bench/longvector_device.sh [OUTDIR]        (default $OUT)
#
# Writes under OUTDIR: summary.txt (the figures to report), device.txt,
# build.log, calibrate.txt, wisdom, ctest.txt, test_longvector_gpu.txt,
# sweep_float.{txt,csv,png}, sweep_double.{txt,csv,png} (when time is left),
# bench.txt.
#
# The GPU machine has no package registry; the frames pipeline's libraries
# (cfitsio, FFTW, which CMake requires) come as Debian packages in .deps/
# (not in git: carry it, or copy /work/main/.deps), unpacked here with dpkg -x.
set -uo pipefail
out=${1:-${OUT:?usage: longvector_device.sh OUTDIR (or set OUT)}}
mkdir -p "$out"
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }
stamp() { echo "[$(elapsed) s] $*" | tee -a "$out/summary.txt"; }
: > "$out/summary.txt"

root=$PWD/.deps/root
if ls .deps/*.deb >/dev/null 2>&1; then
  mkdir -p "$root"
  for f in .deps/*.deb; do dpkg -x "$f" "$root"; done
  export PKG_CONFIG_PATH=$root/usr/lib/x86_64-linux-gnu/pkgconfig:${PKG_CONFIG_PATH:-}
  export PKG_CONFIG_SYSROOT_DIR=$root
  export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
fi
export PATH=/usr/local/cuda/bin:$PATH
{ nvidia-smi -L; nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv; nproc;
  git log --oneline -1 2>/dev/null; } > "$out/device.txt" 2>&1
cat "$out/device.txt" >> "$out/summary.txt"

B=${LV_BUILD:-build-lv}  # LV_BUILD: another build directory
stamp build
cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/build.log" 2>&1
timeout 200 cmake --build $B -j"$(nproc)" --target pyrgrid_cli test_longvector_gpu test_longvector_model test_longvector_errors \
  bench_longvector >> "$out/build.log" 2>&1
rc=$?
stamp "build rc=$rc"
if [ $rc -ne 0 ]; then tail -30 "$out/build.log" | tee -a "$out/summary.txt"; exit 1; fi
$B/pyrgrid info > "$out/info.txt" 2>&1

export PYRGRID_WISDOM=$out/wisdom
stamp "calibrate (CUDA, heat 2D, float and double)"
timeout 90 $B/pyrgrid calibrate --backend cuda --dims 2 --scheme heat --precision all > "$out/calibrate.txt" 2>&1
echo "calibrate rc=$?" >> "$out/calibrate.txt"
grep -E "heat (float|double) 2D|long-vector|calibration took|rc=" "$out/calibrate.txt" | tee -a "$out/summary.txt"

stamp "tests (ctest -L longvector: model, errors, GPU bit-identity, CLI)"
( cd $B && timeout 120 ctest -L longvector --output-on-failure ) > "$out/ctest.txt" 2>&1
echo "ctest rc=$?" >> "$out/ctest.txt"
grep -E "Test +#|tests passed|tests failed|rc=" "$out/ctest.txt" | tee -a "$out/summary.txt"
# the GPU test's own figures (cases bit-identical or the measured difference; the quick calibration)
timeout 60 $B/tests/test_longvector_gpu 20 > "$out/test_longvector_gpu.txt" 2>&1
echo "rc=$?" >> "$out/test_longvector_gpu.txt"
grep -E "^longvector:|^calibrated|failed|rc=" "$out/test_longvector_gpu.txt" | head -20 | tee -a "$out/summary.txt"

# the seed's sweep: (N+2)^2 grids, r = 0.2 per axis, float; 200 sizes from 10 to 7000
cat > "$out/lv_sweep.ini" <<'EOF'
[grid]
dims = 2
nx = 1002
ny = 1002
[scheme]
dt = 8e-8          ; r = dt / h^2 = 0.08 per axis here; the sweep keeps r for every size
steps = 10
precision = float
[initial]
kind = random
[run]
method = longvector
EOF
stamp "sweep float, N = 10..7000 step 35"
timeout 120 $B/pyrgrid sweep "$out/lv_sweep.ini" --sizes 10:7000:35 --csv "$out/sweep_float.csv" --png "$out/sweep_float.png" \
  > "$out/sweep_float.txt" 2>&1
echo "sweep rc=$?" >> "$out/sweep_float.txt"
grep -E "^long-vector method|^per step|^sizes:|^first staircase|rc=" "$out/sweep_float.txt" | tee -a "$out/summary.txt"

stamp "bench: long-vector beside naive at N = 4096 and 16384"
timeout 60 $B/bench/bench_longvector --sizes 4096,16384 --precision both > "$out/bench.txt" 2>&1
echo "bench rc=$?" >> "$out/bench.txt"
cat "$out/bench.txt" | tee -a "$out/summary.txt"

if [ "$(elapsed)" -lt 220 ]; then
  stamp "sweep double, N = 10..7000 step 70"
  timeout $(( 280 - $(elapsed) )) $B/pyrgrid sweep "$out/lv_sweep.ini" --set scheme.precision=double --sizes 10:7000:70 \
    --csv "$out/sweep_double.csv" --png "$out/sweep_double.png" > "$out/sweep_double.txt" 2>&1
  echo "sweep rc=$?" >> "$out/sweep_double.txt"
  grep -E "^long-vector method|^per step|^sizes:|^first staircase|rc=" "$out/sweep_double.txt" | tee -a "$out/summary.txt"
else
  stamp "no time left for the double sweep"
fi
stamp "done; logs in $out"
