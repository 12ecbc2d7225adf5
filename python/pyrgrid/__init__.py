"""pyrgrid: grid equations of difference schemes on GPUs and CPUs, including
grids larger than the GPU's memory (the pyramid method), from Python.

A thin layer over libpyrgrid through ctypes (NumPy only, no compiled
extension).  Arrays of the right dtype that are C-contiguous are used in
place, without a copy::

    import numpy as np, pyrgrid
    u0 = np.zeros((257, 257)); u0[128, 128] = 1.0
    u = pyrgrid.heat(u0, alpha=1.0, dt=1e-6, steps=500, memory="256MiB")
    u, info = pyrgrid.poisson(np.zeros((129, 129)), f=np.ones((129, 129)), tolerance=1e-8)
    r = pyrgrid.maxwell((201, 301), steps=400, courant=0.5, boundary="cpml",
                        sources=["Ez point 150 100 ricker frequency=2 delay=0.6"], probes=["Ez 250 100"])
    ez, series = r["Ez"], r.probes      # the fields of the TM mode, the probe's values per step

    problem = pyrgrid.Problem("heat", shape=(1025, 1025), dt=2e-7, steps=1000)
    with pyrgrid.Plan(problem, pyrgrid.Options(memory="64MiB")) as plan:
        print(plan.info["method"], plan.info["height"])
        u = problem.initial()
        plan.execute(u)            # u updated in place

Errors of the library are raised as :class:`pyrgrid.Error` subclasses
carrying its message.  The library is found as ``pyrgrid._lib`` describes
($PYRGRID_LIBRARY, the installed copy, ./build of a checkout, the loader).
"""

from __future__ import annotations

from ._errors import (ArgumentError, BudgetError, CancelledError, ConfigError, CopyWarning, DeviceArrayError, DeviceError,
                      DeviceMemoryError, DivergedError, Error, FileError, FormatError, InternalError, NoDeviceError,
                      NotConvergedWarning, NumericError, OutOfMemoryError, SizeError, UnstableError, UnsupportedError)
from ._core import FarField, MaxwellResult, Monitor, Options, Plan, Problem, ProgressBar, RunInfo, heat, maxwell, poisson
from ._extra import (DftRegion, FluxRegion, FramesResult, LgsInfo, PlaneWave, Probe, Source, backends, calibrate, cpu_threads, frames, gpus, lgs_omega_laplace, lgs_system, solve_lgs,
                     version, wisdom_export, wisdom_forget, wisdom_import, wisdom_path)
from ._lib import path as library_path

__version__: str = version()  # the library's: one version for the header, CMake and Python

__all__ = ["Error", "ArgumentError", "ConfigError", "SizeError", "UnstableError", "FileError", "FormatError",
           "OutOfMemoryError", "BudgetError", "NoDeviceError", "DeviceError", "DeviceMemoryError", "UnsupportedError", "DeviceArrayError",
           "NumericError", "DivergedError", "CancelledError", "InternalError", "CopyWarning", "NotConvergedWarning",
           "Problem", "Options", "Plan", "RunInfo", "ProgressBar", "heat", "poisson", "maxwell", "MaxwellResult", "Monitor", "FarField",
           "Source", "Probe", "PlaneWave", "DftRegion", "FluxRegion", "solve_lgs", "lgs_system", "lgs_omega_laplace", "LgsInfo", "frames",
           "FramesResult", "calibrate", "wisdom_import", "wisdom_export", "wisdom_forget", "wisdom_path", "gpus",
           "backends", "cpu_threads", "version", "library_path", "__version__"]
