#!/usr/bin/env bash
# Line Gauss-Seidel on one GPU: the "line Gauss-Seidel" rows of docs/performance.md
# (docs/lgs.md).  Builds, runs the solver's GPU, CPU and CLI tests and a memcheck
# pass, `pyrgrid solve` on the examples, then bench_lgs: sequential lexicographic
# CPU, red-black CPU on all cores and red-black CUDA side by side on test system 1
# (double), N = M = 128, 512, 1024, 4096 by default.
#
#   bash bench/lgs.sh OUT [BUILD_DIR [bench_lgs arguments...]]
#   e.g. bash bench/lgs.sh OUT build-bench --seconds 1 --csv OUT/bench.csv
set -uo pipefail
out=${1:?usage: bench/lgs.sh OUT [BUILD_DIR [bench_lgs arguments...]]}
B=${2:-build-bench}
shift 2 2>/dev/null || shift $#
mkdir -p "$out"
{ nvidia-smi -L; nproc; git log -1 --format='%h %s'; } > "$out/device.txt" 2>&1
bash bench/build.sh $B pyrgrid_cli test_lgs_gpu test_lgs test_lgs_cli bench_lgs >"$out/build.log" 2>&1 ||
  { tail -30 "$out/build.log"; exit 1; }
root=$PWD/.deps/root
[ -d "$root" ] && export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
case $B in /*) ;; *) B=$PWD/$B ;; esac
echo "== test_lgs_gpu"; ( time $B/tests/test_lgs_gpu ) >"$out/test_gpu.log" 2>&1; echo "rc=$?" >>"$out/test_gpu.log"; tail -3 "$out/test_gpu.log"
echo "== test_lgs (CPU)"; ( time $B/tests/test_lgs ) >"$out/test_cpu.log" 2>&1; echo "rc=$?" >>"$out/test_cpu.log"; tail -3 "$out/test_cpu.log"
echo "== test_lgs_cli"; $B/tests/test_lgs_cli >"$out/test_cli.log" 2>&1; echo "rc=$?" >>"$out/test_cli.log"; tail -2 "$out/test_cli.log"
if command -v compute-sanitizer >/dev/null; then
  echo "== memcheck"
  compute-sanitizer --tool memcheck $B/bench/bench_lgs --sizes 100,300 --seconds 0.01 --max-iters 70 --no-seq --no-cpu >"$out/memcheck.log" 2>&1
  tail -4 "$out/memcheck.log"
fi
echo "== pyrgrid solve (examples, GPU)"
work=$(mktemp -d)
( cd "$work" && P=$B/pyrgrid E=$OLDPWD/examples &&
  $P solve $E/solve_test1.ini --quiet --set system.N=1024 --set system.M=1024 --set run.backend=cuda &&
  $P solve $E/solve_test1.ini --quiet --set system.N=1024 --set system.M=1024 --set run.backend=cpu &&
  $P solve $E/solve_parabolic.ini --quiet --set run.backend=cuda &&
  $P solve $E/solve_parabolic.ini --quiet --set system.N=2048 --set system.M=2048 --set run.backend=cuda --set run.check_every=100;
  echo "rc=$?" ) 2>&1 | tee "$out/cli.log"
rm -rf "$work"
echo "== bench_lgs $*"; $B/bench/bench_lgs "$@" 2>&1 | tee "$out/bench.txt"
