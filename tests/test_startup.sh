#!/usr/bin/env bash
# Reliability review L9: the program starts, and runs on the CPU, under an
# address-space limit of a few hundred MB (cluster jobs set one: ulimit -v),
# because the GPU libraries that only some methods need (cuBLAS, cuFFT) are
# loaded when first used instead of at start.  In a CUDA build the program
# must also not name them (nor the CUDA runtime, linked statically) as
# libraries to load at start.
# usage: test_startup.sh PYRGRID SOURCE_DIR HAVE_CUDA(ON/OFF) [LIBPYRGRID]
set -u
. "$(dirname "${BASH_SOURCE[0]}")/cli/common.sh"
bin=$1
src=$2
cuda=$3
lib=${4:-}
if [ -n "${PYR_SANITIZE:-}" ]; then
  echo "skipped: AddressSanitizer reserves terabytes of address space, so ulimit -v cannot be tested"
  exit 77
fi
pyr_setup "$bin"
bin=$pyr
limit=400000 # KiB

out=$(bash -c "ulimit -v $limit; '$bin' --version" 2>&1); rc=$?
echo "ulimit -v $limit; pyrgrid --version -> rc $rc: $out"
[ $rc -eq 0 ] && echo "$out" | grep -q "^pyrgrid [0-9]" || bad "--version under ulimit -v $limit: rc $rc, $out"

out=$(OMP_NUM_THREADS=2 bash -c "ulimit -v $limit; '$bin' run '$src/examples/heat2d.ini' --quiet --set run.backend=cpu \
  --set grid.nx=129 --set grid.ny=129 --set scheme.steps=50 --set output.field=h.npy --set output.image=h.png" 2>&1); rc=$?
echo "ulimit -v $limit; pyrgrid run heat2d.ini (CPU, 129^2) -> rc $rc"
[ $rc -eq 0 ] && [ -s h.npy ] && [ -s h.png ] || bad "a CPU run under ulimit -v $limit: rc $rc, $out"

if [ "$cuda" = ON ]; then
  if command -v readelf >/dev/null; then
    for f in "$bin" $lib; do
      case "$f" in *.so*) ;; *) [ "$f" = "$bin" ] || continue ;; esac
      needed=$(readelf -d "$f" | grep NEEDED)
      for l in libcublas libcublasLt libcufft libcudart; do
        echo "$needed" | grep -q "\[$l\.so" && bad "$(basename "$f") loads $l at start: $(echo "$needed" | grep "$l")"
      done
      echo "$(basename "$f") loads at start: $(echo "$needed" | sed 's/.*\[\(.*\)\]/\1/' | tr '\n' ' ')"
    done
  else
    echo "readelf not found: the libraries loaded at start are not checked"
  fi
fi
finish "passed"
