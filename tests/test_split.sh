#!/usr/bin/env bash
# A CPU install needs no MPI and no CUDA at run time (issue 49, item 3): MPI is in libpyrgrid_mpi of
# its own (as FFTW's libfftw3_mpi), which the program loads only when an MPI launcher started it.
#  - libpyrgrid.so and the program name no libmpi and no CUDA library to load at start (readelf);
#  - pyrgrid --version, a CPU run and Python's `import pyrgrid` with a CPU run, with an
#    LD_LIBRARY_PATH that names no CUDA folder, load none of libmpi, Open MPI's libraries,
#    libcuda, libcudart, cuBLAS or cuFFT (LD_DEBUG=libs, which lists dlopen'ed ones too, and the
#    process's own /proc/self/maps);
#  - in builds with MPI: libpyrgrid_mpi exports exactly pyrgrid_mpi.h's functions and links
#    libpyrgrid and libmpi; a program started by a launcher without its MPI module says which file
#    it could not load.
# The CUDA backend is a plug-in, libpyrgrid_cuda.so beside libpyrgrid (as ggml's backends):
#  - libpyrgrid.so and the program hold no GPU code (no .nv_fatbin section);
#  - pyrgrid --version, a CPU run (run.backend = cpu; and auto where no GPU driver is) and Python's
#    CPU run map no libpyrgrid_cuda.so;
#  - in builds with CUDA ($PYR_TEST_CUDA_PLUGIN, the plug-in): it lies beside libpyrgrid, exports its
#    one entry and names no CUDA library to load; a process that asks for CUDA several times loads
#    it once, the one beside libpyrgrid; with libpyrgrid away from it, backend = cuda fails naming
#    the file and where it was looked for (the program and Python), and backend = cpu still works.
# usage: test_split.sh PYRGRID LIBPYRGRID SOURCE_DIR HAVE_MPI(ON/OFF) [LIBPYRGRID_MPI]
set -u
. "$(dirname "${BASH_SOURCE[0]}")/cli/common.sh"
pyr_setup "$1"
bin=$pyr
lib=$2
src=$3
mpi=$4
libmpi=${5:-}
case "$lib" in *.so | *.so.*) ;; *) echo "skipped: libpyrgrid is not a shared library ($lib)"; exit 77 ;; esac
command -v readelf >/dev/null || { echo "skipped: readelf not found"; exit 77; }

# what must not load in one process on the CPU
unwanted='libmpi[._]|libopen-pal|libopen-rte|libpmix|libmpich|libcuda\.so|libcudart|libcublas|libcufft|libpyrgrid_cuda'
plugin=${PYR_TEST_CUDA_PLUGIN:-}
# a GPU driver's device node: where one is, backend = auto may load the plug-in
gpu_node=0
for n in /dev/nvidiactl /dev/nvidia0 /dev/dxg; do [ -e "$n" ] && gpu_node=1; done

needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' '; }
for f in "$lib" "$bin"; do
  n=$(needed "$f")
  echo "$(basename "$f") needs: $n"
  echo " $n" | tr ' ' '\n' | grep -E "^($unwanted)" >/dev/null && bad "$(basename "$f") names $(echo " $n" | tr ' ' '\n' | grep -E "^($unwanted)" | tr '\n' ' ')to load at start"
  readelf -S -W "$f" | grep -q '\.nv_fatbin' && bad "$(basename "$f") holds GPU code (.nv_fatbin): the CUDA objects belong in libpyrgrid_cuda.so"
done

# the libraries a command loads, dlopen'ed ones included
loaded() { LD_DEBUG=libs LD_LIBRARY_PATH= "$@" 2>&1 >/dev/null | sed -n 's/.*calling init: //p' | xargs -r -n1 basename | sort -u; }
check_loaded() {
  local what=$1; shift
  local libs
  libs=$(loaded "$@")
  echo "$what loads $(echo "$libs" | wc -l) libraries"
  local hits
  hits=$(echo "$libs" | grep -E "^($unwanted)" | tr '\n' ' ')
  [ -z "$hits" ] || bad "$what loads $hits"
}
check_loaded "pyrgrid --version" "$bin" --version
check_loaded "pyrgrid run (CPU)" "$bin" run "$src/examples/heat2d.ini" --quiet --set run.backend=cpu --set grid.nx=65 --set grid.ny=65 \
  --set scheme.steps=20 --set output.field=h.npy
[ -s h.npy ] || bad "the CPU run wrote no h.npy"
if [ $gpu_node = 0 ]; then
  check_loaded "pyrgrid run (auto, no GPU driver here)" "$bin" run "$src/examples/heat2d.ini" --quiet --set run.backend=auto \
    --set grid.nx=33 --set grid.ny=33 --set scheme.steps=2 --set output.field=a.npy
  [ -s a.npy ] || bad "the auto run wrote no a.npy"
fi

# Python: the module over this libpyrgrid, a CPU run, then the process's own maps (Debian's
# interpreter; PYR_TEST_PYTHON names another, e.g. where /usr/bin/python3 has no NumPy)
py=${PYR_TEST_PYTHON:-/usr/bin/python3}
pyok=0
[ -z "${PYR_SANITIZE:-}" ] && command -v "$py" >/dev/null && pyok=1
if [ $pyok = 1 ]; then
  out=$(LD_LIBRARY_PATH= PYRGRID_LIBRARY="$lib" PYTHONPATH="$src/python" "$py" -c "
import re, numpy, pyrgrid
u = numpy.zeros((33, 33)); u[16, 16] = 1
v = pyrgrid.heat(u, dt=1e-4, steps=5, backend='cpu')
assert v[16, 16] < 1
maps = open('/proc/self/maps').read()
libs = sorted({l.split()[-1] for l in maps.splitlines() if '.so' in l})
hits = [l for l in libs if re.search(r'$unwanted', l.rsplit('/', 1)[-1])]
print(len(libs), 'libraries mapped; unwanted:', ' '.join(hits) or 'none')
" 2>&1); rc=$?
  echo "python: import pyrgrid and a CPU run -> rc $rc: $out"
  [ $rc -eq 0 ] || bad "python: rc $rc: $out"
  echo "$out" | grep -q "unwanted: none$" || bad "python maps: $out"
else
  echo "python: skipped (sanitizer build or no $py)"
fi

if [ "$mpi" = ON ]; then
  [ -n "$libmpi" ] || { bad "a build with MPI passed no libpyrgrid_mpi"; libmpi=/nonexistent; }
  n=$(needed "$libmpi")
  echo "$(basename "$libmpi") needs: $n"
  case " $n" in *" libpyrgrid.so"*) ;; *) bad "libpyrgrid_mpi does not link libpyrgrid: $n" ;; esac
  case " $n" in *" libmpi"*) ;; *) bad "libpyrgrid_mpi does not link libmpi: $n" ;; esac
  # its dynamic symbols: exactly the functions pyrgrid_mpi.h declares with PYR_API
  grep -h '^PYR_API' "$src/include/pyrgrid_mpi.h" | sed -E 's/\(.*//; s/.*[ *]//' | sort -u > declared
  nm -D --defined-only "$libmpi" | awk '{print $NF}' | sed 's/@.*//' | grep -vxE '_init|_fini|_edata|_end|__bss_start' | sort -u > exported
  [ "$(wc -l < declared)" -ge 3 ] || bad "only $(wc -l < declared) declarations found in pyrgrid_mpi.h: the pattern no longer matches"
  d=$(comm -3 declared exported | tr '\n' ' ')
  [ -z "$d" ] && echo "libpyrgrid_mpi exports: $(tr '\n' ' ' < exported)" || bad "libpyrgrid_mpi's exports differ from pyrgrid_mpi.h's PYR_API functions: $d"
  # the program away from its MPI module, started as if by mpirun -np 2
  mkdir alone && cp "$bin" alone/pyrgrid
  out=$(OMPI_COMM_WORLD_SIZE=2 ./alone/pyrgrid run "$src/examples/heat2d.ini" --quiet --set scheme.steps=2 2>&1); rc=$?
  echo "started by a launcher without the MPI module -> rc $rc: $out"
  [ $rc -ne 0 ] && echo "$out" | grep -q "pyrgrid_mpi_cli.so: not found" || bad "without its MPI module: rc $rc, $out"
  # one process as mpirun -np 1 starts it: the ordinary run, module or not
  out=$(OMPI_COMM_WORLD_SIZE=1 ./alone/pyrgrid run "$src/examples/heat2d.ini" --quiet --set grid.nx=33 --set grid.ny=33 --set scheme.steps=2 \
    --set output.field=one.npy 2>&1); rc=$?
  [ $rc -eq 0 ] && [ -s one.npy ] || bad "one process under a launcher, without the MPI module: rc $rc, $out"
fi
if [ -n "$plugin" ]; then
  libdir=$(dirname "$(readlink -f "$lib")")
  [ "$(dirname "$(readlink -f "$plugin")")" = "$libdir" ] || bad "the plug-in $plugin is not beside libpyrgrid ($libdir)"
  n=$(needed "$plugin")
  echo "$(basename "$plugin") needs: $n"
  echo " $n" | tr ' ' '\n' | grep -E "^(libcuda\.so|libcudart|libcublas|libcufft|libpyrgrid)" >/dev/null &&
    bad "the plug-in names a CUDA library or libpyrgrid to load: $n"
  e=$(nm -D --defined-only "$plugin" | awk '{print $NF}' | grep -vxE '_init|_fini|_edata|_end|__bss_start' | tr '\n' ' ')
  [ "$e" = "pyr_cuda_plugin_entry " ] && echo "the plug-in exports: $e" || bad "the plug-in exports '$e', not its one entry"
  # asked for twice (info describes the GPUs and lists the kernels): loaded once, the one beside libpyrgrid
  inits=$(LD_DEBUG=libs "$bin" info 2>&1 >/dev/null | grep -c 'calling init: .*libpyrgrid_cuda\.so')
  [ "$inits" = 1 ] && echo "pyrgrid info loads the plug-in once" || bad "pyrgrid info loads the plug-in $inits times"
  if [ $pyok = 1 ]; then
    out=$(PYRGRID_LIBRARY="$lib" PYTHONPATH="$src/python" "$py" -c "
import numpy, pyrgrid
u = numpy.zeros((33, 33)); u[16, 16] = 1
for i in range(2):
    try:
        pyrgrid.heat(u, dt=1e-4, steps=5, backend='cuda')
    except Exception as e:
        print('cuda:', e)
maps = open('/proc/self/maps').read()
print('mapped:', ' '.join(sorted({l.split()[-1] for l in maps.splitlines() if 'libpyrgrid_cuda' in l})))
" 2>&1)
    echo "python, backend='cuda' twice: $out"
    echo "$out" | grep -qx "mapped: $libdir/libpyrgrid_cuda.so" || bad "python did not map the plug-in beside libpyrgrid once: $out"
  fi
  # a file named by PYRGRID_CUDA_PLUGIN that is no plug-in: refused, naming it and why
  echo "not a library" > notplugin.so
  out=$(PYRGRID_CUDA_PLUGIN=$PWD/notplugin.so "$bin" run "$src/examples/heat2d.ini" --quiet --set run.backend=cuda --set grid.nx=33 \
    --set grid.ny=33 --set scheme.steps=2 2>&1); rc=$?
  echo "PYRGRID_CUDA_PLUGIN=notplugin.so -> rc $rc: $out"
  [ $rc -ne 0 ] && echo "$out" | grep -q "plug-in $PWD/notplugin.so could not be loaded" || bad "a file that is no plug-in: rc $rc, $out"
  # libpyrgrid away from the plug-in
  mkdir away
  soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
  cp -L "$lib" "away/$soname"
  ln -s "$soname" away/libpyrgrid.so
  away=$(cd away && pwd -P)
  out=$(LD_LIBRARY_PATH=$away "$bin" run "$src/examples/heat2d.ini" --quiet --set run.backend=cuda --set grid.nx=33 --set grid.ny=33 \
    --set scheme.steps=2 2>&1); rc=$?
  echo "backend = cuda without the plug-in -> rc $rc: $out"
  [ $rc -ne 0 ] && echo "$out" | grep -q "libpyrgrid_cuda.so was not found (looked in $away" || bad "backend = cuda without the plug-in: rc $rc, $out"
  out=$(LD_LIBRARY_PATH=$away "$bin" run "$src/examples/heat2d.ini" --quiet --set run.backend=cpu --set grid.nx=33 --set grid.ny=33 \
    --set scheme.steps=2 --set output.field=away.npy 2>&1); rc=$?
  [ $rc -eq 0 ] && [ -s away.npy ] || bad "backend = cpu without the plug-in: rc $rc, $out"
  if [ $pyok = 1 ]; then
    out=$(PYRGRID_LIBRARY="$away/libpyrgrid.so" PYTHONPATH="$src/python" "$py" -c "
import numpy, pyrgrid
u = numpy.zeros((33, 33)); u[16, 16] = 1
assert pyrgrid.heat(u, dt=1e-4, steps=5, backend='cpu')[16, 16] < 1
try:
    pyrgrid.heat(u, dt=1e-4, steps=5, backend='cuda')
    print('cuda ran')
except Exception as e:
    print('cuda:', e)
" 2>&1); rc=$?
    echo "python without the plug-in -> rc $rc: $out"
    [ $rc -eq 0 ] && echo "$out" | grep -q "libpyrgrid_cuda.so was not found (looked in $away" || bad "python without the plug-in: rc $rc, $out"
  fi
fi
finish "passed"
