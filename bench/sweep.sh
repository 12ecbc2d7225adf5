#!/usr/bin/env bash
# The model's accuracy on one GPU (docs/model-and-wisdom.md#how-good-the-model-is):
# calibrate the CUDA backend, then sweep the pyramid height with `pyrgrid sweep`,
# measured against predicted time per height, for
#   heat: 2D float 32768^2 (32769 nodes per axis), strips and blocks, budget 1/8 of
#         the grid (512 MiB); 3D float 1024^3 (1025 nodes per axis), slabs at 2 GiB
#         (1/2: 1/8 would leave slabs too thin for heights past 8), cubes and skewed
#         pieces at 1 GiB (1/4);
#   poisson: the source paper's case, Jacobi sweeps of -laplace(u) = f on an 800^3
#         float grid in slabs, heights 2 to 48 (the paper: optimum h = 20, its model
#         within 5% for h <= 80), the budget half of u and f (a quarter fits heights
#         to 24 only).
# Each height runs 4 passes (the last 3 timed), SWEEP_REPEAT times (3; the best
# kept: one run's time varies by ~10% on a shared machine).  CSV, PNG and the
# printed tables (emax, ebar, auto/best) under OUT; about 3 minutes for heat and 2
# for poisson.
#
#   bash bench/sweep.sh OUT [BUILD_DIR [heat|poisson|all]]      (default: all)
set -uo pipefail
out=${1:?usage: bench/sweep.sh OUT [BUILD_DIR [heat|poisson|all]]}
build=${2:-build-bench}
which=${3:-all}
mkdir -p "$out"
bash bench/build.sh "$build" pyrgrid_cli > "$out/build.txt" 2>&1 || { tail -30 "$out/build.txt"; exit 1; }
root=$PWD/.deps/root
[ -d "$root" ] && export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
pyrgrid=$build/pyrgrid
# this run's wisdom next to its results (and out of the user's cache)
export PYRGRID_WISDOM=${PYRGRID_WISDOM:-$out/wisdom}
start=$(date +%s)

if [ "$which" = heat ] || [ "$which" = all ]; then
heights=1,2,4,8,16,32,48,64,96,128
heights3d=1,2,3,4,6,8,12,16,24

cat > "$out/heat2d_32k.ini" <<'EOF'
; 2D float 32768^2 (interior), as the paper's largest grid
[grid]
dims = 2
nx = 32769
ny = 32769
[scheme]
dt = 1e-10          ; r = alpha^2 dt / h^2 ~ 0.107 per axis
steps = 256
precision = float
[initial]
kind = gauss
[run]
backend = cuda
method = pyramid
memory = 512MiB     ; 1/8 of the 4 GiB grid
EOF

cat > "$out/heat3d_1k.ini" <<'EOF'
; 3D float 1024^3 (interior)
[grid]
dims = 3
nx = 1025
ny = 1025
nz = 1025
[scheme]
dt = 5e-8           ; r ~ 0.052 per axis
steps = 64
precision = float
[initial]
kind = gauss
[run]
backend = cuda
method = pyramid
memory = 2GiB
EOF

echo "== calibrate (cuda, heat float)"
"$pyrgrid" calibrate --backend cuda --scheme heat --precision float --dims 2,3 | tee "$out/calibrate_cuda.txt"
"$pyrgrid" plan "$out/heat2d_32k.ini" | tee "$out/plan_2d_32k.txt"

for d in strips blocks; do
    echo "== sweep 2D float 32768^2 $d, budget 512 MiB"
    timeout 240 "$pyrgrid" sweep "$out/heat2d_32k.ini" --decomposition $d --heights $heights --passes 4 --repeat ${SWEEP_REPEAT:-3} \
        --csv "$out/sweep_2d_32k_$d.csv" --png "$out/sweep_2d_32k_$d.png" | tee "$out/sweep_2d_32k_$d.txt"
done

echo "== sweep 3D float 1024^3 slabs, budget 2 GiB"
timeout 200 "$pyrgrid" sweep "$out/heat3d_1k.ini" --decomposition slabs --heights $heights3d --passes 4 --repeat ${SWEEP_REPEAT:-3} \
    --csv "$out/sweep_3d_1k_slabs.csv" --png "$out/sweep_3d_1k_slabs.png" | tee "$out/sweep_3d_1k_slabs.txt"

echo "== sweep 3D float 1024^3 cubes (blocks), budget 1 GiB (1/4), for information"
timeout 200 "$pyrgrid" sweep "$out/heat3d_1k.ini" --set run.memory=1GiB --decomposition blocks --heights 8,16,24,32,48,64 --passes 4 --repeat ${SWEEP_REPEAT:-3} \
    --csv "$out/sweep_3d_1k_cubes.csv" --png "$out/sweep_3d_1k_cubes.png" | tee "$out/sweep_3d_1k_cubes.txt"

echo "== sweep 3D float 1024^3 skewed, budget 1 GiB (1/4)"
timeout 200 "$pyrgrid" sweep "$out/heat3d_1k.ini" --set run.memory=1GiB --decomposition skewed --heights 16,24,32,40,48,64 --passes 4 --repeat ${SWEEP_REPEAT:-3} \
    --csv "$out/sweep_3d_1k_skewed.csv" --png "$out/sweep_3d_1k_skewed.png" | tee "$out/sweep_3d_1k_skewed.txt"
fi

if [ "$which" = poisson ] || [ "$which" = all ]; then
cat > "$out/poisson3d_800.ini" <<'INI'
; the paper's case: 800^3 nodes, slabs, f and u on the device (4 GiB of fields)
[grid]
dims = 3
nx = 800
ny = 800
nz = 800
[scheme]
equation = poisson
iterations = 240
precision = float
[rhs]
kind = sine
[initial]
kind = random
[run]
backend = cuda
method = pyramid
decomposition = slabs
memory = 2GiB       ; half of u and f: heights to 48 fit (a quarter allows only 24)
INI
echo "== calibrate (cuda, poisson float 3D)"
"$pyrgrid" calibrate --backend cuda --scheme poisson --precision float --dims 3 | tee "$out/calibrate_poisson.txt"
"$pyrgrid" plan "$out/poisson3d_800.ini" | tee "$out/plan_poisson3d_800.txt"
echo "== sweep Poisson 3D float 800^3 slabs, budget 2 GiB"
timeout 240 "$pyrgrid" sweep "$out/poisson3d_800.ini" --decomposition slabs --heights ${PSWEEP_HEIGHTS:-2,4,8,12,16,20,24,32,40,48} \
    --passes 4 --repeat ${SWEEP_REPEAT:-2} --csv "$out/sweep_poisson3d_800_slabs.csv" --png "$out/sweep_poisson3d_800_slabs.png" \
    | tee "$out/sweep_poisson3d_800_slabs.txt"
fi

echo "== summary ($(($(date +%s) - start)) s)"
grep -H -E "emax|overall" "$out"/sweep_*.txt
