#!/usr/bin/env bash
# One device session's batch: build, GPU tests, the heat benchmark (issue 4)
# and the model sweeps (issue 5), with every log under OUT and one tarball of
# them (the device tool returns few files).  Each step has its own time limit
# so the whole stays within one device call (10 minutes).
#   bash bench/device-round.sh OUT [steps...]
# steps: test (all GPU tests), prop (the CUDA property test alone, PROP_CASES
# cases), proptime (the same, each case named and timed, from PROP_FIRST),
# lgs (the solver's GPU test, alone and while the GPU is busy), stages
# (bench_stages: stage times vs the model), host (the host's topology,
# xfer_probe cpu/replay, cubes and blocks with fewer band-writer threads),
# bench3, bench2, skewed, sweep, memcheck, cpu (bench_cpu on two host cores: CPU_DIMS,
# CPU_ROUNDS, CPU_STEPS, CPU_BUDGET, CPU_LIMIT), poisson (Poisson 3D float in
# and out of core), heat2f (heat 2D float in and out of core, one height),
# psweep (the seed's Poisson case: model vs measured over heights), incore
# (issue 20: heat in core, steady and end to end, at the widths 4096 to 32768
# by 16384 rows, the peer-shaped grids and 3D 768x352x2560, 640^3, 1024^3,
# float and double; INCORE_GRIDS, INCORE_STEPS, INCORE_KERNELS).
# Default: test bench3 bench2 sweep.
set -uo pipefail
out=${1:?usage: device-round.sh OUT [test] [bench3] [bench2] [sweep] [memcheck]}
shift
steps=${*:-test bench3 bench2 sweep}
mkdir -p "$out/logs"
log=$out/logs
start=$(date +%s)
stamp() { echo "[$(($(date +%s) - start)) s] $*"; }
has() { [[ " $steps " == *" $1 "* ]]; }

nvidia-smi > "$log/nvidia-smi.txt" 2>&1
stamp build
if ! bash bench/device-build.sh build-dev > "$log/build.txt" 2>&1; then
  stamp "build failed"; tail -30 "$log/build.txt"
  tar -C "$out" -czf "$out/logs.tgz" logs; exit 1
fi
root=$PWD/.deps/root
[ -d "$root" ] && export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}

# one calibration for the benchmarks' automatic choices, kept with the logs
export PYRGRID_WISDOM=$log/wisdom
if has skewed || has bench3 || has bench2 || has stages || has host || has poisson || has heat2f || has incore; then
  stamp calibrate
  timeout 90 build-dev/pyrgrid calibrate --backend cuda --precision ${CAL_PRECISION:-all} --dims ${CAL_DIMS:-2,3} --scheme ${CAL_SCHEME:-all} \
    > "$log/calibrate.txt" 2>&1
  tail -3 "$log/calibrate.txt"
fi
if has prop; then
  stamp "cuda property test (${PROP_CASES:-60} cases)"
  timeout ${PROP_LIMIT:-150} build-dev/tests/test_cuda_property ${PROP_CASES:-60} ${PROP_SEED:-1} > "$log/prop.txt" 2>&1; echo "rc=$?" >> "$log/prop.txt"
  tail -3 "$log/prop.txt"
fi
if has proptime; then
  # each case of the property test named and timed (stderr), from case PROP_FIRST on
  stamp "cuda property test, timed per case from case ${PROP_FIRST:-0}"
  PYR_TEST_VERBOSE=1 timeout ${PROP_LIMIT:-150} build-dev/tests/test_cuda_property ${PROP_CASES:-300} 1 ${PROP_FIRST:-0} \
    > "$log/proptime.txt" 2> "$log/proptime_cases.txt"; echo "rc=$?" >> "$log/proptime.txt"
  tail -3 "$log/proptime.txt"; paste - - < "$log/proptime_cases.txt" | sort -t$'\t' -k2 -g -r | head -5
fi
if has lgs; then
  stamp "lgs gpu test"
  timeout 60 build-dev/tests/test_lgs_gpu > "$log/lgs_native.txt" 2>&1; echo "rc=$?" >> "$log/lgs_native.txt"; tail -4 "$log/lgs_native.txt"
  # again while another process loads the GPU (the timing under which a race once showed)
  build-dev/bench/bench_heat --cases 3f --scale 2 --steps 400 --methods naive > /dev/null 2>&1 &
  sleep 1
  timeout 60 build-dev/tests/test_lgs_gpu > "$log/lgs_loaded.txt" 2>&1; echo "rc=$?" >> "$log/lgs_loaded.txt"; tail -4 "$log/lgs_loaded.txt"
  wait
  grep -m1 "model name" /proc/cpuinfo > "$log/cpu.txt"; grep -o "avx512[a-z]*" /proc/cpuinfo | sort -u | tr '\n' ' ' >> "$log/cpu.txt"
fi
if has stages; then
  stamp stages
  {
    # each engine's busy time in an overlapped pass (event timeline), cubes, blocks and strips
    PYR_TIMELINE=${STAGES_DETAIL:-12} timeout 60 build-dev/bench/bench_stages 3 1025 float blocks ${STAGES_H3:-48} 1024 3
    PYR_TIMELINE=${STAGES_DETAIL:-12} timeout 60 build-dev/bench/bench_stages 2 32769 float blocks ${STAGES_H2:-64} 512
    PYR_TIMELINE=${STAGES_DETAIL:-12} timeout 60 build-dev/bench/bench_stages 2 32769 float strips ${STAGES_H2:-64} 512
    [ -n "${STAGES_ALL:-}" ] && timeout 60 build-dev/bench/bench_stages 3 1025 float slabs 1,2,4,8 2048
    # transfer patterns in isolation (block vs strip rows, 3D boxes beside a kernel, both directions)
    if [ -n "${STAGES_PROBE:-}" ]; then timeout 60 build-dev/bench/xfer_probe 4; timeout 60 build-dev/bench/xfer_probe 3d; fi
  } > "$log/stages.txt" 2>&1
  cat "$log/stages.txt"
fi
if has host; then
  stamp host
  { lscpu; numactl -H; nvidia-smi topo -m; cat /sys/kernel/mm/transparent_hugepage/enabled; command -v nsys; } > "$log/host.txt" 2>&1
  {
    timeout 90 build-dev/bench/xfer_probe cpu
    timeout 60 build-dev/bench/xfer_probe replay
    # does the band writer's host memory traffic slow the copy engines?  (its copies use OpenMP's threads)
    for T in ${HOST_THREADS:-16 4 1}; do
      echo "== OMP_NUM_THREADS=$T"
      OMP_NUM_THREADS=$T PYR_TIMELINE=1 timeout 60 build-dev/bench/bench_stages 3 1025 float blocks 48 1024 3
      OMP_NUM_THREADS=$T PYR_TIMELINE=1 timeout 60 build-dev/bench/bench_stages 2 32769 float blocks 64 512
    done
  } > "$log/host_probe.txt" 2>&1
  cat "$log/host_probe.txt"
fi
if has diag; then
  # Why do 3D pieces compute at ~300 G updates/s where the same kernel does ~400 in core, and why do 2D
  # kernels run 8-15% faster inside the pipeline than alone?  SM clock and power every 50 ms during the
  # stage runs (serial phase, then overlapped), and Nsight Compute on one fused 3D launch of each kind.
  stamp diag
  {
    nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv,noheader -lms 50 > "$log/clocks.csv" 2>&1 &
    smi=$!
    echo "== $(date +%T.%N) strips h128"; timeout 60 build-dev/bench/bench_stages 2 32769 float strips 128 512 3
    echo "== $(date +%T.%N) cubes h48"; timeout 60 build-dev/bench/bench_stages 3 1025 float blocks 48 1024 3
    echo "== $(date +%T.%N) end"
    kill $smi
  } > "$log/diag_stages.txt" 2>&1
  grep -v "^      " "$log/diag_stages.txt"  # the per-operation timeline lines are indented 6
  ncu_sec="--section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis"
  timeout 150 ncu --clock-control none -k regex:k_fused3d --launch-skip 40 --launch-count 2 $ncu_sec \
    build-dev/bench/bench_stages 3 1025 float blocks 48 1024 3 2 > "$log/ncu_piece.txt" 2>&1
  timeout 120 ncu --clock-control none -k regex:k_fused3d --launch-skip 4 --launch-count 1 $ncu_sec \
    build-dev/bench/bench_heat --cases 3f --steps 30 --methods naive > "$log/ncu_core.txt" 2>&1
  grep -E "k_fused3d|Duration|DRAM Throughput|Compute \(SM\)|Achieved Occupancy|Grid Size|Block Size|Waves Per SM|Registers|Theoretical Occ|L2 Hit|L1/TEX Hit|SM Frequency" "$log/ncu_piece.txt" "$log/ncu_core.txt"
fi
if has test; then
  stamp "gpu tests"
  timeout 240 ctest --test-dir build-dev -L gpu --output-on-failure -j2 > "$log/ctest_gpu.txt" 2>&1
  tail -15 "$log/ctest_gpu.txt"
fi
if has memcheck; then
  stamp memcheck
  for t in test_cuda_small "test_poisson_property 12 5 cuda" "test_cuda_property ${SAN_CASES:-24} 7"; do
    n=${t%% *}
    timeout 120 compute-sanitizer --tool memcheck build-dev/tests/$t > "$log/memcheck_$n.txt" 2>&1; tail -2 "$log/memcheck_$n.txt"
    timeout ${SAN_LIMIT:-200} compute-sanitizer --tool racecheck build-dev/tests/$t > "$log/racecheck_$n.txt" 2>&1; echo "rc=$?" >> "$log/racecheck_$n.txt"; tail -3 "$log/racecheck_$n.txt"
  done
fi
if has incore; then
  grids=${INCORE_GRIDS:-f:4096x16384,f:8192x16384,f:16384x16384,f:32768x16384,f:15708x16384,f:31416x16384,d:4096x16384,d:8192x16384,d:16384x16384,d:32768x16384,d:15312x16384,d:30624x16384,f:768x352x2560,f:640x640x640,f:1024x1024x1024,d:768x352x2560,d:640x640x640,d:1024x1024x1024}
  stamp "in core: $grids"
  timeout ${INCORE_LIMIT:-300} build-dev/bench/bench_heat --methods naive --steps ${INCORE_STEPS:-800} --grids "$grids" \
    ${INCORE_KERNELS:+--kernel $INCORE_KERNELS} > "$log/incore.txt" 2>&1
  grep -E "^[23]D|naive" "$log/incore.txt"
fi
if has bench3; then
  stamp "bench 3D"
  timeout ${BENCH3_LIMIT:-150} build-dev/bench/bench_heat --cases 3f --steps ${BENCH3_STEPS:-192} --decomp ${BENCH3_DECOMP:-blocks} \
    --heights3 ${BENCH3_HEIGHTS:-24,32,48,64} --slots ${BENCH3_SLOTS:-2,3} > "$log/bench_3f.txt" 2>&1
  cat "$log/bench_3f.txt"
fi
if has skewed; then
  # issue 20: out of core with a quarter of the grid, skewed pieces (plan/skewed.h) beside in core, in one run each
  stamp "skewed 3D float 1/4"
  timeout ${SKEW_LIMIT:-200} build-dev/bench/bench_heat --cases 3f --steps ${SKEW_STEPS3:-384} --decomp skewed \
    --heights3 ${SKEW_HEIGHTS3:-32,48,64,96} --fractions 4 --methods naive,pyramid --slots 2 > "$log/skewed_3f.txt" 2>&1
  cat "$log/skewed_3f.txt"
  stamp "skewed 2D float 1/4"
  timeout ${SKEW_LIMIT:-200} build-dev/bench/bench_heat --cases 2f --steps ${SKEW_STEPS2:-1000} --decomp skewed \
    --heights ${SKEW_HEIGHTS2:-128,256,512} --fractions 4 --methods naive,pyramid --slots 2 > "$log/skewed_2f.txt" 2>&1
  cat "$log/skewed_2f.txt"
fi
if has bench2; then
  stamp "bench 2D"
  timeout ${BENCH2_LIMIT:-120} build-dev/bench/bench_heat --cases 2f --steps 1000 --heights 64,128,256 > "$log/bench_2f.txt" 2>&1
  cat "$log/bench_2f.txt"
  timeout ${BENCH2_LIMIT:-120} build-dev/bench/bench_heat --cases 2d --steps 500 --heights 64,128,256 > "$log/bench_2d.txt" 2>&1
  cat "$log/bench_2d.txt"
fi
if has cpu; then
  # issue 3's CPU benchmark on two of the host's cores (two distinct physical
  # cores, OMP_NUM_THREADS=2): a quieter 2-core machine than the shared VM
  cores=$(lscpu -p=CPU,CORE | grep -v '^#' | sort -t, -k2,2n -u | head -2 | cut -d, -f1 | paste -sd,)
  lscpu > "$log/lscpu.txt"
  for d in ${CPU_DIMS:-3d 2d}; do
    stamp "bench_cpu $d on cores $cores"
    taskset -c "$cores" env OMP_NUM_THREADS=2 BENCH_CPU_ROUNDS=${CPU_ROUNDS:-3} timeout ${CPU_LIMIT:-200} \
      build-dev/bench/bench_cpu $d ${CPU_STEPS:-48} ${CPU_BUDGET:-} > "$log/bench_cpu_$d.txt" 2>&1
    grep -v "too small" "$log/bench_cpu_$d.txt"
  done
fi
if has poisson; then
  # issue 19: Poisson 3D float 1024^3 (u and f: 8 GiB), in core and out of core with a quarter of the fields
  stamp "bench poisson 3D"
  timeout ${POISSON_LIMIT:-200} build-dev/bench/bench_heat --equation poisson --cases ${POISSON_CASES:-3f} --steps ${POISSON_STEPS:-240} \
    --heights3 ${POISSON_HEIGHTS:-10,20,40} --fractions 4 --methods naive,pyramid --slots ${POISSON_SLOTS:-auto} ${POISSON_KERNELS:+--kernel $POISSON_KERNELS} > "$log/bench_poisson.txt" 2>&1
  cat "$log/bench_poisson.txt"
fi
if has heat2f; then
  # the heat figures the schemes refactor must keep: 2D float 32768^2 in core, and out of core with a quarter of the grid
  stamp "bench heat 2D float"
  timeout ${HEAT_LIMIT:-150} build-dev/bench/bench_heat --cases 2f --steps 1000 --heights 256 --fractions 4 --methods naive,pyramid \
    > "$log/bench_heat_2f.txt" 2>&1
  cat "$log/bench_heat_2f.txt"
fi
if has psweep; then
  stamp "poisson sweep (seed's case)"
  bash bench/sweep_poisson.sh build-dev "$out/psweep" > "$log/psweep.txt" 2>&1
  tail -25 "$log/psweep.txt"
  cp -r "$out/psweep" "$log/"
fi
if has sweep; then
  stamp sweep
  bash bench/sweep_gpu.sh build-dev "$out/sweep" > "$log/sweep.txt" 2>&1
  tail -12 "$log/sweep.txt"
  cp -r "$out/sweep" "$log/"
fi
stamp done
tar -C "$out" -czf "$out/logs.tgz" logs
