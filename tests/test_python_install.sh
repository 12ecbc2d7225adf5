#!/usr/bin/env bash
# `cmake --install` puts the Python package in PREFIX/lib/python3/dist-packages
# (the Debian layout) and it uses the library installed with it: from
# another directory, without PYRGRID_LIBRARY or LD_LIBRARY_PATH, and after the
# prefix is moved.  usage: test_python_install.sh BUILD_DIR   (77: no numpy)
set -eu
build=$1
py=/usr/bin/python3
$py -c "import numpy" 2>/dev/null || { echo "numpy missing for $py: skipped"; exit 77; }
top=$(mktemp -d)
trap 'rm -rf "$top"' EXIT
cmake --install "$build" --prefix "$top/first" >/dev/null
unset PYRGRID_LIBRARY PYRGRID_BUILD_DIR LD_LIBRARY_PATH
export PYTHONDONTWRITEBYTECODE=1
check() { # prefix
  local site=$1/lib/python3/dist-packages
  test -s "$site/pyrgrid/_install.py"
  (cd "$top" && PYTHONPATH=$site $py -c "
import numpy as np, pyrgrid, os, sys
lib = os.path.realpath(pyrgrid.library_path)
assert lib.startswith(os.path.realpath('$1')), ('not the installed library', lib)
u = pyrgrid.heat(np.eye(9), dt=1e-3, steps=3, backend='cpu')
assert u.shape == (9, 9) and pyrgrid.version() == pyrgrid.__version__
print('installed module at', '$site', 'uses', lib)
")
}
# from the source tree: PYTHONPATH=python finds BUILD/libpyrgrid.so (./build, or PYRGRID_BUILD_DIR)
src=$(cd "$(dirname "$0")/.." && pwd)
(cd "$top" && PYRGRID_BUILD_DIR=$build PYTHONPATH=$src/python $py -c "
import os, pyrgrid
assert os.path.samefile(pyrgrid.library_path, '$build/libpyrgrid.so'), pyrgrid.library_path
print('source tree module uses', pyrgrid.library_path)")
check "$top/first"
mv "$top/first" "$top/moved"
check "$top/moved"
echo "python install test passed"
