"""The line Gauss-Seidel solver, the frames pipeline, wisdom, calibration
and discovery."""

from __future__ import annotations

import ctypes
import json
import os
from dataclasses import dataclass, field as dc_field
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from . import _lib
from ._core import Options, ProgressBar, _OPTION_KEYWORDS, _text, _unknown, check
from ._errors import ArgumentError, CancelledError, NotConvergedWarning, warn_copy
from ._interrupt import Interrupts
from ._lib import lib

_BACKENDS = {"auto": 0, "cpu": 1, "cuda": 2}
_BACKEND_NAMES = {v: k for k, v in _BACKENDS.items()}

# progress= of calibrate: a callable(done, total, text), True (print the text) or None
CalibrateProgress = Union[Callable[[int, int, str], Optional[bool]], bool, None]
# progress= of solve_lgs: a callable(iteration, rel_residual), True (a bar of the iterations), or None/False
LgsProgress = Union[Callable[[int, float], Optional[bool]], bool, None]
# progress= of frames: a callable(frame, frames), True (a bar of the frames), or None/False
FramesProgress = Union[Callable[[int, int], Optional[bool]], bool, None]

# ---------------------------------------------------------------- discovery


def version() -> str:
    """The library's version ("0.2.0")."""
    return _lib.text(lib.pyr_version())


def gpus() -> List[Dict[str, Any]]:
    """The usable GPUs: [{"index": 0, "description": "NVIDIA <name>, 79.1 GiB, compute capability 9.0"}, ...]."""
    out: List[Dict[str, Any]] = []
    for i in range(lib.pyr_gpu_count()):
        buf = ctypes.create_string_buffer(256)
        check(lib.pyr_gpu_describe(i, buf, len(buf)))
        out.append({"index": i, "description": buf.value.decode()})
    return out


def backends() -> Dict[str, bool]:
    """{"cpu": True, "cuda": whether a GPU is usable}."""
    return {name: bool(lib.pyr_backend_available(code)) for name, code in _BACKENDS.items() if name != "auto"}


def cpu_threads() -> int:
    """The CPU threads a run uses by default (run.threads = 0)."""
    return int(lib.pyr_cpu_threads())


# ---------------------------------------------------------------- wisdom


def wisdom_path() -> str:
    """Where programs keep wisdom: $PYRGRID_WISDOM, else $XDG_CACHE_HOME/pyrgrid/wisdom, else ~/.cache/pyrgrid/wisdom."""
    buf = ctypes.create_string_buffer(4096)
    check(lib.pyr_wisdom_default_path(buf, len(buf)))
    return buf.value.decode()


def wisdom_import(path: Optional[Union[str, "os.PathLike[str]"]] = None) -> None:
    """Merge a wisdom file (default: wisdom_path()) into this process's store; a missing file is fine."""
    check(lib.pyr_wisdom_import_file(os.fsencode(path or wisdom_path())))


def wisdom_export(path: Optional[Union[str, "os.PathLike[str]"]] = None) -> None:
    """Write the store to a file (default: wisdom_path()), merged with it under its lock."""
    check(lib.pyr_wisdom_export_file(os.fsencode(path or wisdom_path())))


def wisdom_forget() -> None:
    """Empty this process's store."""
    lib.pyr_wisdom_forget()


# pyr_calibrate_fn: (user, sets done, sets in all, text) -> non-zero to stop
_CALIBRATE_REPORT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_char_p)


def calibrate(backend: str = "auto", *, schemes: Union[str, Iterable[Any], None] = None,
              precisions: Union[str, Iterable[Any], None] = None, dims: Union[str, Iterable[Any], None] = None,
              effort: float = 1.0, kernel: Optional[str] = None, device: int = 0, threads: int = 0, save: bool = True,
              progress: CalibrateProgress = None) -> Optional[str]:
    """Measure the performance model's constants here (as ``pyrgrid
    calibrate``, through the same library call) for each scheme ("heat",
    "poisson", "maxwell": every registered one), precision and dimension
    (lists or comma-separated text; None: all; sets a scheme does not have,
    such as Maxwell in 1D, are left out), about ``effort`` seconds each, and
    keep them in the store; ``save`` merges them into the wisdom file
    (wisdom_path()), as the program does.  Returns the file's path, or None.

    ``progress(done, total, text)`` is called before the first set (done =
    0, the backend and device in text) and after each set (what it measured,
    in the lines the program prints); returning False stops before the next
    set with CancelledError.  ``progress=True`` prints the text.  Ctrl-C
    stops between sets and is raised.  A stopped or failed calibration
    leaves the sets measured so far in the store and saves nothing."""
    def joined(x: Union[str, Iterable[Any], None]) -> Optional[bytes]:
        if x is None:
            return None
        return (x if isinstance(x, str) else ",".join(str(v) for v in x)).encode()

    def printed(done: int, total: int, text: str) -> None:
        print(text, end="", flush=True)
    call: Optional[Callable[[int, int, str], Optional[bool]]]
    if progress is True:
        call = printed
    elif progress is None or progress is False:
        call = None
    elif callable(progress):
        call = progress
    else:
        raise ArgumentError(f"progress = {progress!r}: give a function progress(done, total, text), True (print) or None")
    opts = Options(backend=backend, device=device, threads=threads, kernel=kernel)
    if save:
        try:
            wisdom_import()
        except Exception:  # a rejected file is replaced, as `pyrgrid calibrate` does
            pass
    state: Dict[str, Any] = {"error": None, "done": 0, "total": 0}

    def report(user: Any, done: int, total: int, text: bytes) -> int:
        try:
            state["done"], state["total"] = done, total
            stop = call is not None and not interrupts.stop and call(done, total, _lib.text(text)) is False
            return 1 if stop or interrupts.stop else 0  # a Ctrl-C during progress too
        except BaseException as e:  # noqa: B902 (an exception here would be lost in ctypes)
            state["error"] = e
            return 1
    fn = _CALIBRATE_REPORT(report)
    with Interrupts() as interrupts:
        status = lib.pyr_wisdom_calibrate(opts._h, joined(schemes), joined(precisions), joined(dims), float(effort),
                                          ctypes.cast(fn, ctypes.c_void_p), None)
    if state["error"] is not None:
        raise state["error"]
    interrupts.reraise(f"pyrgrid: the calibration stopped after {state['done']} of {state['total']} sets "
                       f"(those are in the store; nothing was saved)")
    check(status)  # stopped by progress: CancelledError
    if save:
        wisdom_export()
        return wisdom_path()
    return None


# ---------------------------------------------------------------- line Gauss-Seidel

_ORDERINGS = {"lexicographic": 0, "redblack": 1}
_PRECONDITIONS = {"none": 0, "jacobi": 1}
_LGS_ARRAYS = ("cC", "aC", "bC", "cA", "cB", "F")


@dataclass
class LgsInfo:
    """What a line Gauss-Seidel solve did."""
    stop: str                  # converged | max_iterations | diverged | stagnated | cancelled
    iterations: int
    rel_residual: float
    history: npt.NDArray[np.float64] = dc_field(default_factory=lambda: np.empty((0, 2)), repr=False)  # (checks, 2): iteration, relative residual
    backend: str = "cpu"
    threads: int = 0
    seconds: float = 0.0
    warning: str = ""

    @property
    def converged(self) -> bool:
        return self.stop == "converged"


def _system_arrays(sysp: Any) -> Dict[str, npt.NDArray[np.float64]]:
    s = sysp.contents
    n, m = s.n, s.m
    return {k: np.ctypeslib.as_array(getattr(s, k), shape=(n, m)) for k in _LGS_ARRAYS}


def lgs_omega_laplace(n: int, m: int) -> float:
    """The optimal line-SOR factor of the N x M Dirichlet Laplacian."""
    return float(lib.pyr_lgs_omega_laplace(int(n), int(m)))


def lgs_system(kind: str, n: int, m: int) -> Dict[str, npt.NDArray[np.float64]]:
    """The built-in systems of ``pyrgrid solve`` as arrays: kind "test1",
    "test2" or "laplace" (exact solution all ones); a dict of the six N x M
    arrays cC, aC, bC, cA, cB, F."""
    makers = {"test1": lib.pyr_lgs_system_test1, "test2": lib.pyr_lgs_system_test2, "laplace": lib.pyr_lgs_system_laplace}
    if kind not in makers:
        raise _unknown(kind, list(makers), "kinds")
    _lib.check_struct("pyr_lgs_system_t")
    sysp = ctypes.POINTER(_lib.LgsSystem)()
    check(makers[kind](int(n), int(m), ctypes.byref(sysp)))
    try:
        return {k: v.copy() for k, v in _system_arrays(sysp).items()}
    finally:
        lib.pyr_lgs_system_destroy(ctypes.byref(sysp))


def solve_lgs(cC: npt.ArrayLike, aC: npt.ArrayLike, bC: npt.ArrayLike, cA: npt.ArrayLike, cB: npt.ArrayLike, F: npt.ArrayLike,
              y0: Optional[npt.ArrayLike] = None, *, ordering: str = "redblack", omega: float = 1.0, precondition: str = "none",
              tolerance: float = 1e-10, max_iterations: int = 100000, check_every: int = 10, backend: str = "auto",
              threads: int = 0, divergence_limit: float = 1e8, stagnation_window: int = 20000,
              progress: LgsProgress = None) -> Tuple[npt.NDArray[np.float64], LgsInfo]:
    """Line Gauss-Seidel with the Thomas algorithm for the block-tridiagonal
    system cA*y[i-1,k] + aC*y[i,k-1] + cC*y[i,k] + bC*y[i,k+1] + cB*y[i+1,k] = F
    (include/pyrgrid_lgs.h): six N x M float64 arrays, ``y0`` the initial
    guess (default 0).  Returns ``(y, info)``; reaching max_iterations above
    the tolerance is no error (``info.stop``, and a NotConvergedWarning).
    ``progress(iteration, rel_residual)`` is called every ``check_every``
    iterations; returning False cancels.  ``progress=True`` draws a
    :class:`ProgressBar` of the iterations (of max_iterations) on stderr,
    ended when the solve ends, converged early or not.  Ctrl-C stops the
    solve at its next check (KeyboardInterrupt; the arrays given are not
    changed)."""
    bar: Optional[ProgressBar] = None
    hook: Optional[Callable[[int, float], Optional[bool]]]
    if progress is True:
        bar = ProgressBar("iterations")
        shown = bar

        def hook(iteration: int, rel: float) -> None:
            shown(iteration, int(max_iterations))
    elif progress is None or progress is False:
        hook = None
    elif callable(progress):
        hook = progress
    else:
        raise ArgumentError(f"progress = {progress!r}: give a function progress(iteration, rel_residual), True (a progress "
                            f"bar on stderr), or None")
    try:
        return _solve_lgs(cC, aC, bC, cA, cB, F, y0, ordering, omega, precondition, tolerance, max_iterations, check_every,
                          backend, threads, divergence_limit, stagnation_window, hook)
    finally:
        if bar is not None:
            bar.close()


def _solve_lgs(cC: npt.ArrayLike, aC: npt.ArrayLike, bC: npt.ArrayLike, cA: npt.ArrayLike, cB: npt.ArrayLike, F: npt.ArrayLike,
               y0: Optional[npt.ArrayLike], ordering: str, omega: float, precondition: str, tolerance: float,
               max_iterations: int, check_every: int, backend: str, threads: int, divergence_limit: float,
               stagnation_window: int,
               progress: Optional[Callable[[int, float], Optional[bool]]]) -> Tuple[npt.NDArray[np.float64], LgsInfo]:
    arrays = [cC, aC, bC, cA, cB, F]
    first = np.asarray(F)
    if first.ndim != 2:
        raise ArgumentError(f"F has shape {first.shape}; the system's arrays are N x M (2 dimensions)")
    n, m = first.shape
    checked = []
    for name, a in zip(_LGS_ARRAYS, arrays):
        a = np.asarray(a)
        if a.shape != (n, m):
            raise ArgumentError(f"{name} has shape {a.shape}; every array of the system is {(n, m)} like F")
        if a.dtype != np.float64:
            if not np.issubdtype(a.dtype, np.number):
                raise ArgumentError(f"{name} has dtype {a.dtype}; the solver takes float64")
            warn_copy(f"{name} has dtype {a.dtype}; converted to float64")
        checked.append(a)
    if y0 is None:
        y = np.zeros((n, m), dtype=np.float64)
    else:
        y = np.array(y0, dtype=np.float64, order="C", copy=True)
        if y.shape != (n, m):
            raise ArgumentError(f"y0 has shape {y.shape}; it must be {(n, m)} like F")
    for name, table, v in (("ordering", _ORDERINGS, ordering), ("precondition", _PRECONDITIONS, precondition),
                           ("backend", _BACKENDS, backend)):
        if v not in table:
            raise _unknown(v, list(table), name + "s")
    for name in ("pyr_lgs_system_t", "pyr_lgs_options_t", "pyr_lgs_result_t"):
        _lib.check_struct(name)
    sysp = ctypes.POINTER(_lib.LgsSystem)()
    check(lib.pyr_lgs_system_create(n, m, ctypes.byref(sysp)))
    resp = ctypes.POINTER(_lib.LgsResult)()
    try:
        for (name, dst), a in zip(_system_arrays(sysp).items(), checked):
            dst[...] = a  # the system owns its arrays (one copy; the solver may scale them)
        opt = _lib.LgsOptions()
        lib.pyr_lgs_options_default(ctypes.byref(opt))
        opt.ordering, opt.omega, opt.precondition = _ORDERINGS[ordering], float(omega), _PRECONDITIONS[precondition]
        opt.tolerance, opt.max_iterations, opt.check_every = float(tolerance), int(max_iterations), int(check_every)
        opt.backend, opt.threads = _BACKENDS[backend], int(threads)
        opt.divergence_limit, opt.stagnation_window = float(divergence_limit), int(stagnation_window)
        state: Dict[str, Any] = {"error": None, "cancelled": False, "at": None}

        def call(user: Any, iteration: int, rel: float) -> int:
            try:
                if not interrupts.stop and (progress is None or progress(iteration, rel) is not False):
                    return 0
                state["cancelled"] = not interrupts.stop
                state["at"] = iteration
                return 1
            except BaseException as e:  # noqa: B902
                state["error"] = e
                return 1
        fn = _lib.LGS_PROGRESS(call)
        with Interrupts() as interrupts:
            # Ctrl-C is seen at the checks (every check_every iterations), through the progress hook
            if progress is not None or interrupts.active:
                opt.progress = ctypes.cast(fn, ctypes.c_void_p)
                opt.report_every = int(check_every)
            status = lib.pyr_lgs_solve(sysp, ctypes.byref(opt), y.ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
                                       ctypes.byref(resp))
        if state["error"] is not None:
            raise state["error"]
        interrupts.reraise(f"pyrgrid: the solve stopped at iteration {state['at']}" if state["at"] is not None else "")
        if state["cancelled"]:
            raise CancelledError(_lib.last_error(), "PYR_ERR_CANCELLED")
        check(status)
        r = resp.contents
        k = r.history_len
        hist = np.empty((k, 2))
        if k:
            hist[:, 0] = np.ctypeslib.as_array(r.history_iteration, shape=(k,))
            hist[:, 1] = np.ctypeslib.as_array(r.history_residual, shape=(k,))
        info = LgsInfo(stop=_lib.text(lib.pyr_lgs_stop_name(r.stop)), iterations=r.iterations,
                       rel_residual=r.rel_residual, history=hist, backend=_BACKEND_NAMES.get(r.backend, "cpu"),
                       threads=r.threads, seconds=r.seconds, warning=r.warning.decode(errors="replace"))
    finally:
        lib.pyr_lgs_result_destroy(ctypes.byref(resp))
        lib.pyr_lgs_system_destroy(ctypes.byref(sysp))
    if info.stop == "max_iterations" and tolerance > 0:
        import warnings
        warnings.warn(f"line Gauss-Seidel stopped at max_iterations = {max_iterations} with relative residual "
                      f"{info.rel_residual:.3e} above tolerance = {tolerance}", NotConvergedWarning, stacklevel=2)
    return y, info


# ---------------------------------------------------------------- frames

_FRAME_TYPES = {np.dtype(np.float32): 0, np.dtype(np.uint16): 1, np.dtype(np.int16): 2}


@dataclass
class FramesResult:
    """What the frames pipeline gave for a sequence."""
    residual: npt.NDArray[np.float32]    # (T, ny, nx) float32, whitened residuals
    shifts: npt.NDArray[np.float64]      # (T, 2): dx, dy against the reference, pixels
    iterations: npt.NDArray[np.int32]    # (T,) gradient iterations per frame
    flags: npt.NDArray[np.int32]         # (T,) PYR_FRAMES_FLAG_* bits
    candidates: npt.NDArray[np.void]     # structured: frame, x, y, flux, snr
    max_snr: npt.NDArray[np.float32]     # (ny, nx) float32
    stats: Dict[str, Any] = dc_field(default_factory=dict)
    notice: str = ""
    # with tracks=True: one row per track (id, n, first_frame, last_frame, first_mjd, last_mjd, x0, y0, vx, vy,
    # vx_day, vy_day, ra, dec, rate, pa, rms, snr_mean; docs/frames.md#tracks), and candidates gain a
    # track column (-1: in none)
    tracks: Optional[npt.NDArray[np.void]] = None


def frames(stack: npt.ArrayLike, *, progress: FramesProgress = None, mask: Optional[npt.ArrayLike] = None,
           variance: Optional[npt.ArrayLike] = None, tracks: bool = False, mjd: Optional[npt.ArrayLike] = None,
           **options: Any) -> FramesResult:
    """Shifts, temporal whitening and detection of faint movers over a
    sequence of frames (include/pyrgrid_frames.h): ``stack`` is (T, ny, nx)
    of float32, uint16 or int16 (others are converted to float32 with a
    CopyWarning).  Keywords are the keys of the [frames] section (history,
    weights, threshold, psf_fwhm, clean, backend, threads, ...).
    ``mask`` (ny, nx), nonzero = bad pixel: left out of the shifts, the
    whitening and detection in every frame (with frames.badpixels = auto,
    frames.saturation and NaN pixels; docs/frames.md#masks).
    ``variance`` (T, ny, nx), one plane per frame, or (ny, nx) for every
    frame: each pixel's variance in the stack's units squared (a calibrated
    exposure's VARIANCE plane), the detection's noise model with
    noise = auto (the default) or variance; pixels whose variance is not
    positive and finite are masked (docs/frames.md#noise).
    ``tracks=True`` links the candidates into tracks (straight lines at
    constant velocity, docs/frames.md#tracks) with the link_* keys
    (link_min_detections, link_max_gap, link_max_speed, link_min_speed,
    link_max_residual): ``result.tracks``, positions in frame 0's pixel grid,
    and a track column in ``result.candidates``; ``mjd`` (T,) gives the
    frames' times for the velocities per day.
    ``progress(frame, frames)`` is called per frame; returning False cancels;
    ``progress=True`` draws a :class:`ProgressBar` of the frames on stderr.
    Ctrl-C stops the sequence after the frame in hand (KeyboardInterrupt;
    ``stack`` is not changed)."""
    bar: Optional[ProgressBar] = None
    hook: Optional[Callable[[int, int], Optional[bool]]]
    if progress is True:
        hook = bar = ProgressBar("frames")
    elif progress is None or progress is False:
        hook = None
    elif callable(progress):
        hook = progress
    else:
        raise ArgumentError(f"progress = {progress!r}: give a function progress(frame, frames), True (a progress bar on "
                            f"stderr), or None")
    link = {k: v for k, v in options.items() if k.lower().removeprefix("frames.").startswith("link_")}
    if link and not tracks:
        raise ArgumentError(f"{', '.join(sorted(link))}: the link_* keys set how candidates are linked into tracks; "
                            f"give tracks=True with them")
    for k in link:
        del options[k]
    lo = _link_options(link) if tracks else None  # refused before the run, not after it
    if mjd is not None:
        if not tracks:
            raise ArgumentError("mjd= gives the frames' times for the tracks' velocities per day: give tracks=True with it")
        m = np.asarray(mjd, dtype=np.float64)
        if m.ndim != 1 or m.shape[0] != np.shape(stack)[0]:
            raise ArgumentError(f"mjd has shape {m.shape}; it must be one time per frame, ({np.shape(stack)[0]},)")
    try:
        result = _frames(stack, hook, mask, variance, options)
    finally:
        if bar is not None:
            bar.close()
    if lo is not None:
        _link(result, lo, mjd, str(options.get("weights", "align")))
    return result


def _link_options(link: Dict[str, Any]) -> Any:
    """The link_* keys, checked as the program checks them."""
    if not hasattr(lib, "pyr_frames_link"):
        from ._errors import Error
        raise Error(f"{_lib.path} was built without the frames pipeline (PYR_WITH_FRAMES=OFF): it cannot link tracks")
    for name in ("pyr_frames_table_row_t", "pyr_frames_link_options_t", "pyr_frames_track_t"):
        _lib.check_struct(name)
    lo = _lib.FramesLinkOptions()
    lib.pyr_frames_link_options_default(ctypes.byref(lo))
    for k, v in link.items():
        if isinstance(v, (bool, np.bool_)):
            v = "yes" if v else "no"
        check(lib.pyr_frames_link_options_set(ctypes.byref(lo), k.encode(), _text(v).encode()))
    check(lib.pyr_frames_link_options_validate(ctypes.byref(lo)))
    return lo


def _link(result: FramesResult, lo: Any, mjd: Optional[npt.ArrayLike], weights: str) -> None:
    """The candidates linked into tracks (pyr_frames_link), in place."""
    t = len(result.shifts)
    times = np.full(t, np.nan)
    if mjd is not None:
        times = np.asarray(mjd, dtype=np.float64)
    c = result.candidates
    n = len(c)
    rows = (_lib.FramesTableRow * max(n, 1))()
    # positions in frame 0's grid: align gives them so; poly and plain in each frame's own, moved back by
    # the frame's shift (frame_t(x) = reference(x - s_t))
    own = weights.lower() != "align"
    for i in range(n):
        f = int(c["frame"][i])
        x, y = float(c["x"][i]), float(c["y"][i])
        if own:
            x -= result.shifts[f, 0]
            y -= result.shifts[f, 1]
        rows[i] = _lib.FramesTableRow(f, times[f], x, y, np.nan, np.nan, float(c["flux"][i]), float(c["snr"][i]), -1)
    track_of = np.full(max(n, 1), -1, dtype=np.int64)
    out = ctypes.POINTER(_lib.FramesTrack)()
    ntr = ctypes.c_int64(0)
    check(lib.pyr_frames_link(rows, n, ctypes.byref(lo), None, track_of.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)),
                              ctypes.byref(out), ctypes.byref(ntr)))
    try:
        names = [nm for nm, _ in _lib.FramesTrack._fields_]
        dt = [(nm, np.int64 if ty is ctypes.c_int64 else np.float64) for nm, ty in _lib.FramesTrack._fields_]
        result.tracks = np.array([tuple(getattr(out[i], nm) for nm in names) for i in range(ntr.value)], dtype=dt)
    finally:
        lib.pyr_frames_tracks_free(ctypes.byref(out))
    cand = np.zeros(n, dtype=c.dtype.descr + [("track", np.int64)])
    for col in c.dtype.names or ():
        cand[col] = c[col]
    cand["track"] = track_of[:n]
    result.candidates = cand


def _frames(stack: npt.ArrayLike, progress: Optional[Callable[[int, int], Optional[bool]]], mask: Optional[npt.ArrayLike],
            variance: Optional[npt.ArrayLike], options: Dict[str, Any]) -> FramesResult:
    if not hasattr(lib, "pyr_frames_create"):
        from ._errors import Error
        raise Error(f"{_lib.path} was built without the frames pipeline (PYR_WITH_FRAMES=OFF): rebuild it with "
                    f"cmake -DPYR_WITH_FRAMES=ON (it needs cfitsio, FFTW and wcslib: apt install libcfitsio-dev libfftw3-dev wcslib-dev)")
    a = np.asarray(stack)
    if a.ndim != 3:
        raise ArgumentError(f"stack has shape {a.shape}; frames are a (T, ny, nx) array")
    if a.dtype not in _FRAME_TYPES:
        if not np.issubdtype(a.dtype, np.number):
            raise ArgumentError(f"stack has dtype {a.dtype}; frames are numbers")
        warn_copy(f"stack has dtype {a.dtype}; frames travel as float32, uint16 or int16: converted to float32")
        a = a.astype(np.float32)
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    t, ny, nx = a.shape
    mask_u8: Optional[npt.NDArray[np.uint8]] = None
    if mask is not None:
        m = np.asarray(mask)
        if m.shape != (ny, nx):
            raise ArgumentError(f"mask has shape {m.shape}; it must be one frame's, ({ny}, {nx}), nonzero for bad pixels")
        mask_u8 = np.ascontiguousarray(m != 0, dtype=np.uint8)
    var_f32: Optional[npt.NDArray[np.float32]] = None
    if variance is not None:
        v = np.asarray(variance)
        if v.shape not in ((t, ny, nx), (ny, nx)):
            raise ArgumentError(f"variance has shape {v.shape}; it must be the stack's, ({t}, {ny}, {nx}), or one frame's, "
                                f"({ny}, {nx}), in the stack's units squared")
        if not np.issubdtype(v.dtype, np.number) or np.iscomplexobj(v):
            raise ArgumentError(f"variance has dtype {v.dtype}; it must be real numbers")
        var_f32 = np.ascontiguousarray(v, dtype=np.float32)
    for name in ("pyr_frames_result_t", "pyr_frames_candidate_t", "pyr_frames_stats_t"):
        _lib.check_struct(name)
    opts = ctypes.c_void_p()
    check(lib.pyr_frames_options_create(ctypes.byref(opts)))
    handle = ctypes.c_void_p()
    try:
        for k, v in options.items():
            if v is None:
                continue
            if isinstance(v, (bool, np.bool_)):
                v = "yes" if v else "no"
            check(lib.pyr_frames_options_set(opts, k.encode(), _text(v).encode()))
        check(lib.pyr_frames_options_validate(opts))
        residual = np.zeros((t, ny, nx), dtype=np.float32)
        shifts = np.zeros((t, 2))
        iterations = np.zeros(t, dtype=np.int32)
        flags = np.zeros(t, dtype=np.int32)
        cands: List[Tuple[int, float, float, float, float]] = []
        state: Dict[str, Any] = {"error": None, "cancelled": False}

        def sink(user: Any, rp: Any) -> int:
            try:
                r = rp.contents
                i = r.frame
                shifts[i] = (r.dx, r.dy)
                iterations[i] = r.iterations
                flags[i] = r.flags
                for c in range(r.ncandidates):
                    cd = r.candidates[c]
                    cands.append((i, cd.x, cd.y, cd.flux, cd.snr))
                if interrupts.stop:
                    return 15  # PYR_ERR_CANCELLED
                if progress is not None and progress(i + 1, t) is False:
                    state["cancelled"] = True
                    return 15
                return 0
            except BaseException as e:  # noqa: B902
                state["error"] = e
                return 15
        fn = _lib.FRAMES_SINK(sink)
        check(lib.pyr_frames_create(nx, ny, opts, fn, None, ctypes.byref(handle)))
        if mask_u8 is not None:
            set_mask = lib.pyr_frames_set_mask
            set_mask.restype, set_mask.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p]
            check(set_mask(handle, ctypes.c_void_p(mask_u8.ctypes.data)))
        set_variance = None
        if var_f32 is not None:
            set_variance = lib.pyr_frames_set_variance
            set_variance.restype, set_variance.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p]
            if var_f32.ndim == 2:
                check(set_variance(handle, ctypes.c_void_p(var_f32.ctypes.data)))
        status = 0
        pushed = 0
        # Ctrl-C stops the sequence between frames (seen by the sink, or between pushes)
        with Interrupts() as interrupts:
            for i in range(t):
                if interrupts.stop:
                    break
                if set_variance is not None and var_f32 is not None and var_f32.ndim == 3:
                    check(set_variance(handle, ctypes.c_void_p(var_f32[i].ctypes.data)))
                # the residual goes straight into its slice of the result (no copy)
                status = lib.pyr_frames_push(handle, ctypes.c_void_p(a[i].ctypes.data), _FRAME_TYPES[a.dtype],
                                             ctypes.c_void_p(residual[i].ctypes.data))
                pushed = i + 1
                if status:
                    break
            if not status and not interrupts.stop:
                status = lib.pyr_frames_finish(handle)
        if state["error"] is not None:
            raise state["error"]
        interrupts.reraise(f"pyrgrid: frames stopped after {pushed} of {t} frames")
        if state["cancelled"]:
            raise CancelledError("frames cancelled by the progress callback", "PYR_ERR_CANCELLED")
        check(status)
        max_snr = np.zeros((ny, nx), dtype=np.float32)
        check(lib.pyr_frames_max_snr(handle, ctypes.c_void_p(max_snr.ctypes.data)))
        st = _lib.FramesStats()
        lib.pyr_frames_get_stats(handle, ctypes.byref(st))
        stats = {name: (getattr(st, name).decode() if isinstance(getattr(st, name), bytes) else getattr(st, name))
                 for name, _ in _lib.FramesStats._fields_}
        notice = _lib.text(lib.pyr_frames_notice(handle))
    finally:
        lib.pyr_frames_destroy(ctypes.byref(handle))
        lib.pyr_frames_options_destroy(ctypes.byref(opts))
    cand = np.array(cands, dtype=[("frame", np.int64), ("x", np.float32), ("y", np.float32), ("flux", np.float32),
                                  ("snr", np.float32)])
    return FramesResult(residual=residual, shifts=shifts, iterations=iterations, flags=flags, candidates=cand,
                        max_snr=max_snr, stats=stats, notice=notice)


# ---------------------------------------------------------------- Maxwell's sources, probes and monitors as objects

def _coord_text(values: Any, what: str, integer: bool) -> List[str]:
    """A point's coordinates as key text: node indices (integers >= 0) or physical positions (finite reals)."""
    try:
        items = [v for v in values]
    except TypeError:
        raise ArgumentError(f"{what}: give a point as a sequence of 2 or 3 numbers (x, y[, z]), not {values!r}") from None
    if len(items) not in (2, 3):
        raise ArgumentError(f"{what}: {tuple(items)} has {len(items)} coordinate(s); a point of a 2D or 3D grid has 2 or 3 (x, y[, z])")
    out = []
    for v in items:
        if integer:
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or int(v) < 0:
                raise ArgumentError(f"{what}: node indices are integers >= 0; {tuple(items)} is not (physical positions go to at=)")
            out.append(str(int(v)))
        else:
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)) or not np.isfinite(float(v)):
                raise ArgumentError(f"{what}: positions are finite numbers; {tuple(items)} is not")
            out.append(_text(float(v)))
    return out


def _is_corners(values: Any) -> bool:
    """Whether a geometry is two corners ((x0, y0), (x1, y1)) rather than one point."""
    try:
        return len(values) == 2 and all(hasattr(c, "__len__") for c in values)
    except TypeError:
        return False


def _where(what: str, at: Any, node: Any, corners: Optional[bool]) -> str:
    """The geometry's key text: 'at X Y' / 'I J' (a point) or two corners, from exactly one of at= and node=."""
    if (at is None) == (node is None):
        raise ArgumentError(f"{what}: give the place as at= (physical coordinates) or node= (node indices), one of them")
    given = at if at is not None else node
    two = _is_corners(given)
    if corners is not None and two != corners:
        raise ArgumentError(f"{what}: {'two corners ((x0, y0), (x1, y1))' if corners else 'one point (x, y[, z])'} expected, not {given!r}")
    pts = list(given) if two else [given]
    nums = [_coord_text(p, what, node is not None) for p in pts]
    if two and len(nums[0]) != len(nums[1]):
        raise ArgumentError(f"{what}: the corners {tuple(given)} have different numbers of coordinates")
    return ("at " if at is not None else "") + " ".join(x for p in nums for x in p)


def _component(what: str, c: Any) -> str:
    if c not in ("Ex", "Ey", "Ez", "Hx", "Hy", "Hz"):
        raise ArgumentError(f"{what}: component {c!r}; use 'Ex', 'Ey', 'Ez', 'Hx', 'Hy' or 'Hz'")
    return str(c)


def _waveform(what: str, waveform: str, amplitude: Optional[float], frequency: Optional[float], width: Optional[float],
              delay: Optional[float]) -> str:
    if waveform not in ("gaussian", "ricker", "sine"):
        raise ArgumentError(f"{what}: waveform {waveform!r}; use 'gaussian', 'ricker' or 'sine'")
    opts = [f"{k}={_text(float(v))}" for k, v in (("amplitude", amplitude), ("frequency", frequency), ("width", width),
                                                  ("delay", delay)) if v is not None]
    return " ".join([waveform] + opts)


def _freqs_text(what: str, freqs: Any, freq_range: Optional[Tuple[float, float, int]]) -> str:
    if (freqs is None) == (freq_range is None):
        raise ArgumentError(f"{what}: give the frequencies as freqs=[f1, f2, ...] (at most 64) or freq_range=(fmin, fmax, n), one of them")
    if freq_range is not None:
        try:
            fmin, fmax, n = freq_range
        except (TypeError, ValueError):
            raise ArgumentError(f"{what}: freq_range={freq_range!r}; give (fmin, fmax, n)") from None
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
            raise ArgumentError(f"{what}: freq_range's n = {n!r}; give an integer count")
        return f"freqs={_text(float(fmin))}:{_text(float(fmax))}:{int(n)}"
    fs = np.atleast_1d(np.asarray(freqs, dtype=np.float64))
    if fs.ndim != 1 or fs.size == 0:
        raise ArgumentError(f"{what}: freqs={freqs!r}; give one or more frequencies")
    return "freqs=" + ",".join(_text(float(f)) for f in fs)


class _KeySpec:
    """A value of a Maxwell problem-file key, made from Python arguments: ``text()`` (also ``str()``) is the
    key's value exactly as a problem file writes it, so a run given the object is a run of that file's line."""

    kind = ""  # "source", "planewave", "probe", "dft" or "flux": the key's stem
    section = ""
    _pyrgrid_key = True  # Problem.set takes it as its text
    _text_value = ""

    def text(self) -> str:
        return self._text_value

    def __str__(self) -> str:
        return self._text_value

    def __repr__(self) -> str:
        return f"pyrgrid.{type(self).__name__}({self._text_value!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._text_value == self._text_value  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._text_value))


class Source(_KeySpec):
    """A soft source of [source] (``source.sourceN``): ``Source("Ez", at=(1.0, 0.75), width=0.1, delay=0.4)``
    (a point in physical coordinates), ``node=(20, 15)`` (node indices), or a line between two corners,
    ``at=((0.4, 0.0), (0.4, 0.3))``; ``waveform`` "gaussian" (width, delay), "ricker" (frequency, delay) or
    "sine" (frequency, width: the ramp), and ``amplitude``.  Options left None are left out of the line (the
    library's defaults).  Positions go to the nearest of the component's Yee positions (docs/maxwell.md)."""

    kind, section = "source", "source"

    def __init__(self, component: str, *, at: Any = None, node: Any = None, waveform: str = "gaussian",
                 amplitude: Optional[float] = None, frequency: Optional[float] = None, width: Optional[float] = None,
                 delay: Optional[float] = None) -> None:
        what = "Source"
        comp = _component(what, component)
        where = _where(what, at, node, None)
        line = _is_corners(at if at is not None else node)
        self._text_value = f"{comp} {'line' if line else 'point'} {where} " + _waveform(what, waveform, amplitude, frequency, width, delay)


class Probe(_KeySpec):
    """A probe of [probe] (``probe.probeN``): ``Probe("Ez", at=(1.5, 0.75))`` or ``Probe("Ez", node=(30, 15))``;
    its series is in ``MaxwellResult.probes``."""

    kind, section = "probe", "probe"

    def __init__(self, component: str, *, at: Any = None, node: Any = None) -> None:
        self._text_value = f"{_component('Probe', component)} {_where('Probe', at, node, False)}"


class PlaneWave(_KeySpec):
    """A total-field / scattered-field plane wave of [source] (``source.planewaveN``):
    ``PlaneWave("Ez", along="+x", at=((2, 2), (8, 8)), width=0.3, delay=1.2)``: the box of the total field
    between two corners in physical coordinates (or ``node=`` in node indices); ``tilt=(degrees, "y")`` for
    oblique incidence; the waveform as :class:`Source`'s."""

    kind, section = "planewave", "source"

    def __init__(self, component: str, *, along: str, at: Any = None, node: Any = None, tilt: Optional[Tuple[float, str]] = None,
                 waveform: str = "gaussian", amplitude: Optional[float] = None, frequency: Optional[float] = None,
                 width: Optional[float] = None, delay: Optional[float] = None) -> None:
        what = "PlaneWave"
        comp = _component(what, component)
        if along not in ("+x", "-x", "+y", "-y", "+z", "-z", "x", "y", "z"):
            raise ArgumentError(f"{what}: along={along!r}; give '+x', '-x', '+y', '-y', '+z' or '-z'")
        direction = along if along[0] in "+-" else "+" + along
        tilt_text = ""
        if tilt is not None:
            try:
                degrees, axis = tilt
            except (TypeError, ValueError):
                raise ArgumentError(f"{what}: tilt={tilt!r}; give (degrees, axis), e.g. (30, 'y')") from None
            if axis not in ("x", "y", "z"):
                raise ArgumentError(f"{what}: tilt's axis {axis!r}; give 'x', 'y' or 'z'")
            tilt_text = f" tilt {_text(float(degrees))} {axis}"
        box = _where(what, at, node, True)
        self._text_value = (f"{comp} along {direction}{tilt_text} box {box} "
                            + _waveform(what, waveform, amplitude, frequency, width, delay))


class DftRegion(_KeySpec):
    """A frequency-domain monitor of [monitor] (``monitor.dftN``): the running Fourier transforms of
    ``components`` ("Ez" or ("Ey", "Hz")) at a point (``at=(x, y)`` or ``node=(i, j)``), over a box (two
    corners), or over a plane (``plane="x"`` with ``at=X`` or ``node=I``, and optional ``span``, the
    (lo, hi) limits along each other axis in order, in the same units); ``freqs=[...]`` or
    ``freq_range=(fmin, fmax, n)``.  Its result is ``MaxwellResult.monitors[name]``."""

    kind, section = "dft", "monitor"

    def __init__(self, components: Union[str, Sequence[str]], *, at: Any = None, node: Any = None, plane: Optional[str] = None,
                 span: Any = None, freqs: Any = None, freq_range: Optional[Tuple[float, float, int]] = None) -> None:
        what = "DftRegion"
        comps = [components] if isinstance(components, str) else list(components)
        if not comps:
            raise ArgumentError(f"{what}: give one or more components")
        text = ",".join(_component(what, c) for c in comps)
        region = _plane_text(what, plane, at, node, span) if plane is not None else (
            ("box " if _is_corners(at if at is not None else node) else "point ") + _where(what, at, node, None))
        if plane is None and span is not None:
            raise ArgumentError(f"{what}: span= goes with plane=")
        self._text_value = f"{text} {region} {_freqs_text(what, freqs, freq_range)}"


class FluxRegion(_KeySpec):
    """A flux monitor of [monitor] (``monitor.fluxN``): the power through the plane normal to ``axis`` at
    ``at=X`` (physical) or ``node=I`` (node index), over ``span``, the (lo, hi) limits along each other axis in
    order in the same units (None: the grid less the CPML); ``freqs=[...]`` or ``freq_range=(fmin, fmax,
    n)``.  Its power spectrum is ``MaxwellResult.monitors[name].flux``."""

    kind, section = "flux", "monitor"

    def __init__(self, axis: str, *, at: Optional[float] = None, node: Optional[int] = None, span: Any = None, freqs: Any = None,
                 freq_range: Optional[Tuple[float, float, int]] = None) -> None:
        what = "FluxRegion"
        self._text_value = f"{_plane_text(what, axis, at, node, span)} {_freqs_text(what, freqs, freq_range)}"



def _plane_text(what: str, axis: Any, at: Any, node: Any, span: Any) -> str:
    if axis not in ("x", "y", "z"):
        raise ArgumentError(f"{what}: the plane's axis (its normal) {axis!r}; give 'x', 'y' or 'z'")
    if (at is None) == (node is None):
        raise ArgumentError(f"{what}: give the plane's place as at= (a physical position) or node= (a node index), one of them")
    integer = node is not None
    where = _coord_text([at if at is not None else node] * 2, what, integer)[0]
    limits: List[str] = []
    if span is not None:
        try:
            pairs = [tuple(p) for p in span]
        except TypeError:
            raise ArgumentError(f"{what}: span={span!r}; give (lo, hi) along each other axis, e.g. ((0.2, 1.8),)") from None
        if len(pairs) not in (1, 2) or any(len(p) != 2 for p in pairs):
            raise ArgumentError(f"{what}: span={span!r}; give (lo, hi) along each other axis of the grid (one in 2D, two in 3D)")
        for p in pairs:
            limits += _coord_text(list(p), what, integer)
    return " ".join(["plane", axis] + (["at"] if not integer else []) + [where] + limits)


def _maxwell_keys(sources: Sequence[Any], probes: Sequence[Any], monitors: Any) -> Dict[str, str]:
    """pyrgrid.maxwell's sources=, probes= and monitors= as problem-file keys: strings as they are (the
    problem file's values), objects by their text; a list of monitor objects is named dft1.., flux1.. in order."""
    keys: Dict[str, str] = {}
    counts = {"source": 0, "planewave": 0, "probe": 0, "dft": 0, "flux": 0}
    for arg, values, allowed in (("sources", sources, ("source", "planewave")), ("probes", probes, ("probe",))):
        if isinstance(values, str):
            raise ArgumentError(f"{arg} must be a list of {'source' if arg == 'sources' else 'probe'} values, not one string: [{values!r}]")
        if isinstance(values, _KeySpec):
            raise ArgumentError(f"{arg} must be a list, not one object: [{values!r}]")
        for v in values:
            kind = "source" if arg == "sources" else "probe"
            if isinstance(v, _KeySpec):
                if v.kind not in allowed:
                    raise ArgumentError(f"{arg}: a {type(v).__name__} is not one of {arg}; give it to "
                                        f"{'monitors' if v.kind in ('dft', 'flux') else 'sources' if arg == 'probes' else 'probes'}=")
                kind = v.kind
            elif not isinstance(v, str):
                raise ArgumentError(f"{arg}: {v!r} is neither a problem file's value (a string) nor a pyrgrid object")
            counts[kind] += 1
            keys[f"{'source' if kind == 'planewave' else kind}.{kind}{counts[kind]}"] = str(v)
    if monitors is None:
        return keys
    if isinstance(monitors, Mapping):
        for name, v in monitors.items():
            if v is None:
                continue
            if isinstance(v, _KeySpec) and v.kind not in ("dft", "flux"):
                raise ArgumentError(f"monitors[{name!r}]: a {type(v).__name__} is not a monitor")
            if isinstance(v, _KeySpec) and not str(name).startswith(v.kind):
                raise ArgumentError(f"monitors[{name!r}]: a {type(v).__name__} is named {v.kind}1, {v.kind}2, ...")
            keys[f"monitor.{name}"] = str(v)
        return keys
    if isinstance(monitors, (str, _KeySpec)):
        raise ArgumentError(f"monitors must be a dict {{name: value}} or a list of DftRegion/FluxRegion, not one value: [{monitors!r}]")
    for v in monitors:
        if not isinstance(v, _KeySpec) or v.kind not in ("dft", "flux"):
            raise ArgumentError(f"monitors: {v!r}; a list of monitors holds DftRegion and FluxRegion objects (strings go in a dict "
                                "{'flux1': '...'})")
        counts[v.kind] += 1
        keys[f"monitor.{v.kind}{counts[v.kind]}"] = str(v)
    return keys



class _PlotSeries(ctypes.Structure):
    _fields_ = [("label", ctypes.c_char_p), ("x", ctypes.POINTER(ctypes.c_double)), ("y", ctypes.POINTER(ctypes.c_double)),
                ("n", ctypes.c_int), ("markers", ctypes.c_int)]


class _PlotOpts(ctypes.Structure):
    _fields_ = [("title", ctypes.c_char_p), ("xlabel", ctypes.c_char_p), ("ylabel", ctypes.c_char_p), ("log_y", ctypes.c_int),
                ("width", ctypes.c_int), ("height", ctypes.c_int), ("log_x", ctypes.c_int)]


lib.pyr_plot_write_png.argtypes = [ctypes.c_char_p, ctypes.POINTER(_PlotSeries), ctypes.c_int, ctypes.POINTER(_PlotOpts)]
lib.pyr_plot_write_png.restype = ctypes.c_int


def _plot_spectra(result: Any, path: Any, monitors: Optional[Sequence[str]], reference: Any, title: Optional[str], width: int) -> None:
    """MaxwellResult.plot_spectra: the flux monitors' spectra as one pyr_plot_write_png line plot."""
    fluxes = {name: m for name, m in result.monitors.items() if m.flux is not None}
    names = sorted(fluxes, key=lambda n: (len(n), n)) if monitors is None else list(monitors)
    if isinstance(monitors, str):
        raise ArgumentError(f"plot_spectra: monitors must be a list of names, not one string: [{monitors!r}]")
    if not names:
        raise ArgumentError("plot_spectra: the run has no flux monitor (monitor.fluxN = plane ...) to plot")
    for n in names:
        if n not in fluxes:
            raise ArgumentError(f"plot_spectra: {n!r} is not a flux monitor of this run (its flux monitors: {sorted(fluxes)})")
    if isinstance(width, (bool, np.bool_)) or not isinstance(width, (int, np.integer)) or not (width == 0 or 200 <= width <= 8000):
        raise ArgumentError(f"plot_spectra: width={width!r}; give the image's width in pixels (200 .. 8000), or 0 for 900")
    arrays = []
    for n in names:
        m = fluxes[n]
        y = np.asarray(m.flux, dtype=np.float64)
        if reference is not None:
            ref = getattr(reference, "monitors", {}).get(n)
            if ref is None or ref.flux is None:
                raise ArgumentError(f"plot_spectra: the reference run has no flux monitor {n!r} to divide by")
            if len(ref.freqs) != len(m.freqs) or np.any(ref.freqs != m.freqs):
                raise ArgumentError(f"plot_spectra: {n}'s frequencies differ from the reference's; give both runs the same freqs=")
            with np.errstate(divide="ignore", invalid="ignore"):
                y = y / np.asarray(ref.flux, dtype=np.float64)
        arrays.append((n, np.ascontiguousarray(m.freqs, dtype=np.float64), np.ascontiguousarray(y)))
    series = (_PlotSeries * len(arrays))()
    labels = []
    for i, (n, x, y) in enumerate(arrays):
        labels.append(n.encode())
        series[i] = _PlotSeries(labels[-1], x.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), y.ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
                                len(x), 2 if len(x) <= 40 else 0)
    ylabel = "transmittance P / P0" if reference is not None else "power P(f)"
    head = title if title is not None else ("flux spectra over the reference run's" if reference is not None else "flux spectra")
    opts = _PlotOpts(head.encode(), b"frequency f (c = 1)", ylabel.encode(), 0, int(width), int(width) * 2 // 3, 0)
    check(lib.pyr_plot_write_png(os.fsencode(os.fspath(path)), series, len(arrays), ctypes.byref(opts)))
