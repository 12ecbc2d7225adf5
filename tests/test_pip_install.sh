#!/usr/bin/env bash
# pip builds a wheel of the checkout offline with Debian's tools (pip wheel --no-build-isolation: setup.py runs
# CMake for the library, CPU only here to keep it short), it installs into a venv with the system's site packages,
# and the installed module runs from another directory on the library inside the package, with the version of
# its dist-info equal to the library's and py.typed present; pip uninstall then leaves none of its files.  The
# build writes nothing into the checkout (setuptools' build/ and egg-info go to a temporary folder).
# usage: test_pip_install.sh   (77: /usr/bin/python3 lacks pip, setuptools, wheel, venv or numpy)
set -eu
py=/usr/bin/python3
src=$(cd "$(dirname "$0")/.." && pwd)
$py -m pip --version >/dev/null 2>&1 || { echo "pip missing for $py (apt-get install python3-pip): skipped"; exit 77; }
$py -c "import setuptools, wheel" 2>/dev/null ||
  { echo "setuptools or wheel missing for $py (apt-get install python3-setuptools python3-wheel): skipped"; exit 77; }
$py -c "import venv, numpy" 2>/dev/null || { echo "venv or numpy missing for $py: skipped"; exit 77; }
top=$(mktemp -d)
trap 'rm -rf "$top"' EXIT
unset PYRGRID_LIBRARY PYRGRID_BUILD_DIR PYRGRID_CMAKE_BUILD_DIR LD_LIBRARY_PATH PYTHONPATH PIP_REQUIRE_VIRTUALENV
export PYRGRID_CMAKE_ARGS="-DPYR_ENABLE_CUDA=OFF" PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1
export TMPDIR=$top # setup.py's temporary folder too: gone with $top whatever happens

# what a build could leave in the checkout, before and after
leftovers() { ls -d "$src"/python/*.egg-info "$src"/*.egg-info "$src"/build/lib "$src"/build/bdist.* "$src"/dist \
                     "$src"/python/pyrgrid/libpyrgrid.so* 2>/dev/null || true; }
before=$(leftovers)
start=$SECONDS
(cd "$top" && $py -m pip wheel --no-index --no-deps --no-build-isolation -w "$top/wheels" "$src" >"$top/wheel.log" 2>&1) ||
  { tail -40 "$top/wheel.log"; echo "FAIL: pip wheel --no-build-isolation $src"; exit 1; }
echo "wheel built in $((SECONDS - start)) s: $(cd "$top/wheels" && ls)"
after=$(leftovers)
[ "$before" = "$after" ] || { echo "FAIL: the build left files in the checkout:"; echo "$after"; exit 1; }
whl=$(ls "$top"/wheels/pyrgrid-*.whl)
case $whl in *-py3-none-linux_*.whl) ;; *) echo "FAIL: $whl is not tagged py3-none-<this platform>"; exit 1;; esac

$py -m venv --system-site-packages --without-pip "$top/venv"
vpy=$top/venv/bin/python
$vpy -m pip install --no-index --no-deps "$whl" >"$top/install.log" 2>&1 || { cat "$top/install.log"; exit 1; }
site=$($vpy -c "import sysconfig; print(sysconfig.get_paths()['platlib'])")
mkdir "$top/elsewhere"
(cd "$top/elsewhere" && $vpy - "$site" <<'EOF'
import importlib.metadata as md, os, sys
import numpy as np
import pyrgrid
site = os.path.realpath(sys.argv[1])
pkg = os.path.dirname(os.path.realpath(pyrgrid.__file__))
assert pkg == os.path.join(site, "pyrgrid"), ("not the installed package", pkg)
lib = os.path.realpath(pyrgrid.library_path)
assert os.path.dirname(lib) == pkg, ("not the library inside the package", lib)
assert md.version("pyrgrid") == pyrgrid.__version__ == pyrgrid.version(), (md.version("pyrgrid"), pyrgrid.__version__)
assert os.path.isfile(os.path.join(pkg, "py.typed")), "no py.typed (PEP 561)"
files = {str(f) for f in md.files("pyrgrid")}
assert "pyrgrid/py.typed" in files and "pyrgrid/" + os.path.basename(lib) in files, sorted(files)
u0 = np.zeros((33, 33)); u0[16, 16] = 1.0
u = pyrgrid.heat(u0, dt=1e-4, steps=20, backend="cpu")
assert u.shape == u0.shape and 0 < u[16, 16] < 1 and abs(u.sum() - 1) < 1e-2, (u[16, 16], u.sum())
print("installed", md.version("pyrgrid"), "at", pkg, "runs on", lib)
EOF
)
# an example script from elsewhere, on the installed module
(cd "$top/elsewhere" && $vpy "$src/examples/heat.py" 33 20 >"$top/example.log" 2>&1) || { cat "$top/example.log"; exit 1; }

installed=$(cd "$top" && $vpy -c "
import importlib.metadata as md, os
d = md.distribution('pyrgrid')
print('\n'.join(str(d.locate_file(f)) for f in d.files))")
$vpy -m pip uninstall -y pyrgrid >"$top/uninstall.log" 2>&1 || { cat "$top/uninstall.log"; exit 1; }
for f in $installed; do
  [ ! -e "$f" ] || { echo "FAIL: pip uninstall left $f"; exit 1; }
done
left=$(ls -d "$site"/pyrgrid "$site"/pyrgrid-* 2>/dev/null || true)
[ -z "$left" ] || { echo "FAIL: pip uninstall left $left"; exit 1; }
if (cd "$top/elsewhere" && $vpy -c "import pyrgrid, os, sys; sys.exit(0 if os.path.realpath(pyrgrid.__file__).startswith(os.path.realpath(sys.argv[1])) else 1)" "$site") 2>/dev/null; then
  echo "FAIL: pyrgrid still imports from $site after pip uninstall"; exit 1
fi
echo "pip install test passed ($((SECONDS - start)) s)"
