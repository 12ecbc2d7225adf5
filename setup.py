"""Builds the Python package pyrgrid together with its library, for pip:

    /usr/bin/python3 -m pip install --no-build-isolation .     (pip wheel --no-build-isolation . for a wheel)

The package is pure Python over libpyrgrid through ctypes; its build step
runs CMake (configure and build the shared library only, Release, no tests or
benchmarks) and puts the library, under its soname (libpyrgrid.so.0.2), into
the package folder, where pyrgrid._lib finds it.  The metadata is
pyproject.toml's; the version is include/pyrgrid.h's PYR_VERSION_STRING, the
one the library reports, so importlib.metadata.version("pyrgrid") is
pyrgrid.__version__.

Environment:
  PYRGRID_CMAKE_ARGS       more CMake arguments, split as a shell would, given last (so they win), e.g.
                           "-DPYR_ENABLE_CUDA=OFF" for a CPU-only library, "-DCMAKE_CUDA_ARCHITECTURES=80;90"
  PYRGRID_CMAKE_BUILD_DIR  a CMake build folder to keep between builds (incremental); by default a temporary
                           one, removed with the rest of the build's files
  CMAKE_BUILD_PARALLEL_LEVEL  compile jobs (default: the CPUs)
The CUDA backend is built when a CUDA compiler is found ($CUDACXX, nvcc on PATH or
/usr/local/cuda/bin/nvcc) and PYRGRID_CMAKE_ARGS does not set PYR_ENABLE_CUDA.

setuptools' own working files (build/, pyrgrid.egg-info) go to a temporary
folder rather than into the checkout, whose build/ is the CMake build that
scripts/setup.sh makes.
"""

import atexit
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from setuptools import setup
from setuptools.command.build import build as _build
from setuptools.command.build_py import build_py as _build_py
from setuptools.command.egg_info import egg_info as _egg_info
from setuptools.dist import Distribution

try:
    from wheel.bdist_wheel import bdist_wheel as _bdist_wheel
except ImportError:  # without the wheel package there is no bdist_wheel to adjust
    _bdist_wheel = None

ROOT = Path(__file__).resolve().parent


def library_version():
    """The library's version, from the header the library is built from."""
    header = ROOT / "include" / "pyrgrid.h"
    m = re.search(r'^#define PYR_VERSION_STRING "([^"]+)"', header.read_text(), re.M)
    if not m:
        sys.exit(f"pyrgrid setup.py: no '#define PYR_VERSION_STRING \"...\"' in {header}")
    return m.group(1)


_scratch = None


def scratch():
    """A temporary folder for this build's files, removed when the build ends."""
    global _scratch
    if _scratch is None:
        _scratch = Path(tempfile.mkdtemp(prefix="pyrgrid-setup-"))
        atexit.register(shutil.rmtree, _scratch, True)
    return _scratch


def cmake_args():
    extra = shlex.split(os.environ.get("PYRGRID_CMAKE_ARGS", ""))
    args = ["-DCMAKE_BUILD_TYPE=Release", "-DBUILD_SHARED_LIBS=ON", "-DPYR_BUILD_TESTS=OFF", "-DPYR_BUILD_BENCH=OFF",
            "-DPYR_BUILD_PROBES=OFF"]
    if not any(a.startswith("-DPYR_ENABLE_CUDA") for a in extra):
        nvcc = os.environ.get("CUDACXX") or shutil.which("nvcc")
        if not nvcc and os.access("/usr/local/cuda/bin/nvcc", os.X_OK):
            nvcc = "/usr/local/cuda/bin/nvcc"
        args += ["-DPYR_ENABLE_CUDA=ON", f"-DCMAKE_CUDA_COMPILER={nvcc}"] if nvcc else ["-DPYR_ENABLE_CUDA=OFF"]
    return args + extra


def run(cmd):
    print("pyrgrid setup.py:", shlex.join(cmd), flush=True)
    try:
        subprocess.run(cmd, check=True)
    except FileNotFoundError:
        sys.exit(f"pyrgrid setup.py: {cmd[0]} was not found; building libpyrgrid needs CMake 3.25 or later and a C "
                 "compiler (Debian: apt install cmake gcc; bash scripts/setup.sh installs every dependency)")
    except subprocess.CalledProcessError as e:
        sys.exit(f"pyrgrid setup.py: '{shlex.join(cmd)}' failed (exit status {e.returncode}); its output is above "
                 "(pip install -v shows it). PYRGRID_CMAKE_ARGS passes CMake options, e.g. "
                 "PYRGRID_CMAKE_ARGS=-DPYR_ENABLE_CUDA=OFF for a library without the CUDA backend")


def build_library():
    """Configure and build the target pyrgrid; return (the library file, the name to ship it under, the CUDA
    plug-in built beside it or None)."""
    folder = Path(os.environ.get("PYRGRID_CMAKE_BUILD_DIR") or scratch() / "cmake").resolve()
    run(["cmake", "-S", str(ROOT), "-B", str(folder)] + cmake_args())
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
    run(["cmake", "--build", str(folder), "--target", "pyrgrid", "--parallel", jobs])
    dev = folder / "libpyrgrid.so"
    if not dev.exists():
        sys.exit(f"pyrgrid setup.py: the build made no {dev} (a shared library is needed: BUILD_SHARED_LIBS=ON)")
    # libpyrgrid.so -> libpyrgrid.so.MAJOR.MINOR (the soname) -> libpyrgrid.so.MAJOR.MINOR.PATCH
    name = os.readlink(dev) if dev.is_symlink() else dev.name
    # the CUDA backend, a plug-in that libpyrgrid loads from its own folder when a GPU is asked for
    plugin = folder / "libpyrgrid_cuda.so"
    return dev.resolve(), Path(name).name, plugin if plugin.exists() else None


class build(_build):
    def initialize_options(self):
        super().initialize_options()
        self.build_base = str(scratch() / "build")  # not the checkout's build/ (CMake's)


class egg_info(_egg_info):
    def finalize_options(self):
        # an sdist packs the egg-info it writes, so only it keeps the default place
        if self.egg_base is None and "sdist" not in self.distribution.commands:
            self.egg_base = str(scratch())
        super().finalize_options()


class build_py(_build_py):
    """The Python files, and the library built by CMake beside them."""

    def find_package_modules(self, package, package_dir):
        # _install.py is written by `cmake --install` for the copy it installs; a wheel has its own library
        return [m for m in super().find_package_modules(package, package_dir) if m[1] != "_install"]

    def run(self):
        super().run()
        lib, name, plugin = build_library()
        target = Path(self.build_lib) / "pyrgrid" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        self.copy_file(str(lib), str(target), preserve_mode=True)
        self._library = [str(target)]
        if plugin:
            self.copy_file(str(plugin), str(target.parent / plugin.name), preserve_mode=True)
            self._library.append(str(target.parent / plugin.name))

    def get_outputs(self, include_bytecode=1):
        outputs = super().get_outputs(include_bytecode)
        return outputs + getattr(self, "_library", [])


cmdclass = {"build": build, "build_py": build_py, "egg_info": egg_info}


class BinaryDistribution(Distribution):
    """The package holds a compiled library: it belongs in platlib, and its wheel is for this platform."""

    def has_ext_modules(self):
        return True


if _bdist_wheel is not None:
    class bdist_wheel(_bdist_wheel):
        """A wheel for this platform but for any Python 3: the library is loaded through ctypes, not as an
        extension module, so it depends on no Python version or ABI."""

        def get_tag(self):
            _, _, plat = super().get_tag()
            return "py3", "none", plat

    cmdclass["bdist_wheel"] = bdist_wheel
elif {"bdist_wheel", "dist_info"} & set(sys.argv[1:]):
    sys.exit(f"pyrgrid setup.py: {sys.executable} has no 'wheel' package, which pip needs to build pyrgrid without "
             "build isolation (--no-build-isolation); install it (Debian: apt install python3-wheel) or use a Python "
             "that has it (a venv made with --system-site-packages sees the system's)")

setup(version=library_version(), cmdclass=cmdclass, distclass=BinaryDistribution)
