"""Finding and declaring libpyrgrid (ctypes).

The library is looked for, in order:

1. ``$PYRGRID_LIBRARY``: the path of ``libpyrgrid.so`` (or its versioned name) to use;
2. the installed one: ``cmake --install`` writes ``_install.py`` next to this
   file with the library's path relative to the package;
3. the one inside the package: a wheel (``pip install .``) ships
   ``libpyrgrid.so.<soname version>`` in this folder;
4. a build tree beside the sources: ``<repository>/build/libpyrgrid.so``
   (``$PYRGRID_BUILD_DIR`` names another build folder), so that
   ``PYTHONPATH=python /usr/bin/python3`` works from a checkout after
   ``bash scripts/setup.sh``;
5. the system's loader (``libpyrgrid.so`` on ``LD_LIBRARY_PATH``, or the
   versioned name in ``ldconfig``'s cache).

The CUDA backend is not this module's concern: libpyrgrid loads its plug-in
``libpyrgrid_cuda.so`` itself, from the folder it lies in (the build tree,
the install's library folder, a wheel's package folder: each holds the
plug-in beside the library), and only when a GPU is asked for
(``backend='cuda'``, or ``'auto'`` where a GPU driver is present), so that
``import pyrgrid`` and CPU runs map no CUDA code.

Only functions and structs that do not depend on the layout of the
problem and options structs are declared: those are set and read by their
problem-file keys (``pyr_problem_set``...).  Structs this module lays out
itself (hooks, the solver's and the frames pipeline's) are checked against
``pyr_struct_size`` before their first use.
"""

import ctypes
import os
from ctypes import (POINTER, Structure, c_char, c_char_p, c_double, c_float, c_int, c_int64, c_size_t, c_uint64,
                    c_void_p, CFUNCTYPE)
from pathlib import Path


def _candidates():
    env = os.environ.get("PYRGRID_LIBRARY")
    if env:
        yield env, "$PYRGRID_LIBRARY"
        return
    here = Path(__file__).resolve().parent
    try:
        from . import _install  # written by cmake --install
        yield os.path.normpath(str(here / _install.LIBRARY)), "the installed library"
    except ImportError:
        pass
    # a wheel holds one file named by the soname (wheels keep no symbolic links)
    for p in sorted(here.glob("libpyrgrid.so*")) + sorted(here.glob("libpyrgrid*.dylib")):
        yield str(p), "the library in the package"
    root = here.parent.parent
    build = os.environ.get("PYRGRID_BUILD_DIR")
    for folder in ([Path(build)] if build else []) + [root / "build"]:
        for name in ("libpyrgrid.so", "libpyrgrid.dylib"):
            p = folder / name
            if p.exists():
                yield str(p), "the build tree"
    import ctypes.util
    yield ctypes.util.find_library("pyrgrid") or "libpyrgrid.so", "the system's loader"


def _load():
    tried = []
    for path, where in _candidates():
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append(f"{path} ({where}): {e}")
    raise ImportError("pyrgrid: libpyrgrid was not found; tried " + "; ".join(tried) +
                      ". Build it (bash scripts/setup.sh), install it (pip install . or cmake --install build), "
                      "or set PYRGRID_LIBRARY=/path/to/libpyrgrid.so")


lib, path = _load()

# ------------------------------------------------------------------ types

class Hooks(Structure):
    """pyr_hooks_t: progress, snapshot, user, snapshot_fields, probe, cancel."""
    _fields_ = [("progress", c_void_p), ("snapshot", c_void_p), ("user", c_void_p), ("snapshot_fields", c_void_p),
                ("probe", c_void_p), ("cancel", c_void_p)]


class Field(Structure):
    """pyr_field_t: a grid function's shape, precision and data (read only here: the library owns it)."""
    _fields_ = [("dims", c_int), ("n", c_int64 * 3), ("precision", c_int), ("data", c_void_p)]


# pyr_progress_fn and pyr_cancel_fn: (user, steps done, steps total) -> non-zero to stop
PROGRESS = CFUNCTYPE(c_int, c_void_p, c_int64, c_int64)
# pyr_probe_fn: (user, first step, count, values[count * nprobes], nprobes) -> status
PROBE = CFUNCTYPE(c_int, c_void_p, c_int64, c_int64, POINTER(c_double), c_int)


class LgsSystem(Structure):
    _fields_ = [("n", c_int64), ("m", c_int64), ("precision", c_int),
                ("cC", POINTER(c_double)), ("aC", POINTER(c_double)), ("bC", POINTER(c_double)),
                ("cA", POINTER(c_double)), ("cB", POINTER(c_double)), ("F", POINTER(c_double)),
                ("description", c_char * 160)]


LGS_PROGRESS = CFUNCTYPE(c_int, c_void_p, c_int64, c_double)


class LgsOptions(Structure):
    _fields_ = [("ordering", c_int), ("omega", c_double), ("precondition", c_int), ("tolerance", c_double),
                ("max_iterations", c_int64), ("check_every", c_int64), ("report_every", c_int64),
                ("backend", c_int), ("threads", c_int), ("divergence_limit", c_double),
                ("stagnation_window", c_int64), ("progress", c_void_p), ("progress_user", c_void_p)]


class LgsResult(Structure):
    _fields_ = [("stop", c_int), ("iterations", c_int64), ("rel_residual", c_double), ("f_norm", c_double),
                ("history_len", c_int64), ("history_iteration", POINTER(c_int64)),
                ("history_residual", POINTER(c_double)), ("backend", c_int), ("ordering", c_int),
                ("threads", c_int), ("setup_seconds", c_double), ("seconds", c_double),
                ("iterate_seconds", c_double), ("warning", c_char * 512), ("device", c_char * 128)]


class FramesCandidate(Structure):
    _fields_ = [("x", c_float), ("y", c_float), ("flux", c_float), ("snr", c_float)]


class FramesResult(Structure):
    _fields_ = [("frame", c_int64), ("dx", c_double), ("dy", c_double), ("iterations", c_int),
                ("coarse_used", c_int), ("flags", c_int), ("history_used", c_int), ("epsilon_used", c_double),
                ("weights", POINTER(c_float)), ("masked", c_int64), ("cleaned", c_int64), ("detecting", c_int),
                ("noise_a", c_double), ("noise_c", c_double), ("residual", POINTER(c_float)),
                ("candidates", POINTER(FramesCandidate)), ("ncandidates", c_int), ("candidates_dropped", c_int)]


class FramesStats(Structure):
    _fields_ = [("frames", c_int64), ("seconds", c_double), ("shift_s", c_double), ("weights_s", c_double),
                ("whiten_s", c_double), ("detect_s", c_double), ("ill_conditioned", c_int64),
                ("regularised", c_int64), ("reduced", c_int64), ("fallback", c_int64), ("not_converged", c_int64),
                ("masked_pixels", c_int64), ("candidates", c_int64), ("cleaned_pixels", c_int64),
                ("backend", c_char * 16), ("device", c_char * 128)]


FRAMES_SINK = CFUNCTYPE(c_int, c_void_p, POINTER(FramesResult))


class FramesTableRow(Structure):
    _fields_ = [("frame", c_int64), ("mjd", c_double), ("x", c_double), ("y", c_double), ("ra", c_double),
                ("dec", c_double), ("flux", c_double), ("snr", c_double), ("track", c_int64)]


class FramesLinkOptions(Structure):
    _fields_ = [("min_detections", c_int), ("max_gap", c_int), ("max_speed", c_double), ("min_speed", c_double),
                ("max_residual", c_double)]


class FramesTrack(Structure):
    _fields_ = [(n, c_int64) for n in ("id", "n", "first_frame", "last_frame")] + \
               [(n, c_double) for n in ("first_mjd", "last_mjd", "x0", "y0", "vx", "vy", "vx_day", "vy_day", "ra", "dec",
                                        "rate", "pa", "rms", "snr_mean")]

_STRUCTS = {"pyr_hooks_t": Hooks, "pyr_field_t": Field, "pyr_lgs_system_t": LgsSystem, "pyr_lgs_options_t": LgsOptions,
            "pyr_lgs_result_t": LgsResult, "pyr_frames_candidate_t": FramesCandidate,
            "pyr_frames_result_t": FramesResult, "pyr_frames_stats_t": FramesStats,
            "pyr_frames_table_row_t": FramesTableRow, "pyr_frames_link_options_t": FramesLinkOptions,
            "pyr_frames_track_t": FramesTrack}
_checked = set()


def check_struct(name):
    """Refuse to use a struct this module lays out when the library's differs
    (a library of another version): misreading it would go unnoticed."""
    if name in _checked:
        return
    mine = ctypes.sizeof(_STRUCTS[name])
    theirs = lib.pyr_struct_size(name.encode())
    if theirs != mine:
        from ._errors import Error
        raise Error(f"{path} lays out {name} in {theirs} bytes, this pyrgrid module in {mine}: the module and the "
                    f"library are of different versions; install them together (cmake --install)")
    _checked.add(name)


# -------------------------------------------------------------- functions

def _declare(name, restype, *argtypes):
    # A library built without the frames pipeline (PYR_WITH_FRAMES=OFF) has no
    # pyr_frames_* functions: left undeclared, so that the module still loads
    # and frames() says what this build lacks.  Any other function missing is
    # a library of another version, an error at import.
    if name.startswith("pyr_frames_") and not hasattr(lib, name):
        return
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)


_status = c_int
_P = c_void_p  # opaque pointers: problems, options, plans, fields, frames

for _n, _r, _a in [
    ("pyr_version", c_char_p, ()),
    ("pyr_status_name", c_char_p, (c_int,)),
    ("pyr_status_string", c_char_p, (c_int,)),
    ("pyr_last_error", c_char_p, ()),
    ("pyr_clear_error", None, ()),
    ("pyr_struct_size", c_size_t, (c_char_p,)),
    ("pyr_problem_create", _status, (POINTER(_P),)),
    ("pyr_problem_destroy", None, (POINTER(_P),)),
    ("pyr_problem_set", _status, (_P, c_char_p, c_char_p)),
    ("pyr_problem_get", _status, (_P, c_char_p, c_char_p, c_size_t)),
    ("pyr_problem_load_file", _status, (_P, _P, c_char_p)),
    ("pyr_problem_validate", _status, (_P,)),
    ("pyr_problem_json", c_size_t, (_P, c_char_p, c_size_t)),
    ("pyr_options_create", _status, (POINTER(_P),)),
    ("pyr_options_destroy", None, (POINTER(_P),)),
    ("pyr_options_set", _status, (_P, c_char_p, c_char_p)),
    ("pyr_options_get", _status, (_P, c_char_p, c_char_p, c_size_t)),
    ("pyr_options_json", c_size_t, (_P, c_char_p, c_size_t)),
    ("pyr_field_wrap", _status, (c_int, POINTER(c_int64), c_int, c_void_p, POINTER(_P))),
    ("pyr_field_destroy", None, (POINTER(_P),)),
    ("pyr_field_create_zero", _status, (c_int, POINTER(c_int64), c_int, POINTER(_P))),
    ("pyr_field_wrap_device", _status, (c_int, POINTER(c_int64), c_int, c_void_p, c_int, c_size_t, POINTER(_P))),
    ("pyr_field_copy", _status, (_P, _P)),
    ("pyr_plan_takes_field", _status, (_P, _P)),
    ("pyr_field_init", _status, (_P, _P)),
    ("pyr_field_init_input", _status, (_P, _P, c_int)),
    ("pyr_field_init_state", _status, (_P, _P, c_int)),
    ("pyr_problem_field_used", c_int, (_P, c_int)),
    ("pyr_problem_time_step", _status, (_P, POINTER(c_double))),
    ("pyr_plan_create", _status, (_P, _P, POINTER(_P))),
    ("pyr_plan_destroy", None, (POINTER(_P),)),
    ("pyr_plan_json", c_size_t, (_P, c_char_p, c_size_t)),
    ("pyr_execute_fields", _status, (_P, POINTER(_P), c_int, POINTER(Hooks), c_void_p)),
    ("pyr_run_info_json", c_size_t, (c_void_p, c_char_p, c_size_t)),
    ("pyr_scheme_field_count", c_int, (c_int,)),
    ("pyr_scheme_field_name", c_char_p, (c_int, c_int)),
    ("pyr_scheme_field_updated", c_int, (c_int, c_int)),
    ("pyr_equation_from_name", c_int, (c_char_p, POINTER(c_int))),
    ("pyr_wisdom_import_file", _status, (c_char_p,)),
    ("pyr_wisdom_export_file", _status, (c_char_p,)),
    ("pyr_wisdom_forget", None, ()),
    ("pyr_wisdom_default_path", _status, (c_char_p, c_size_t)),
    ("pyr_wisdom_calibrate", _status, (_P, c_char_p, c_char_p, c_char_p, c_double, c_void_p, c_void_p)),
    ("pyr_backend_available", c_int, (c_int,)),
    ("pyr_gpu_count", c_int, ()),
    ("pyr_gpu_describe", _status, (c_int, c_char_p, c_size_t)),
    ("pyr_cpu_threads", c_int, ()),
    ("pyr_lgs_system_create", _status, (c_int64, c_int64, POINTER(POINTER(LgsSystem)))),
    ("pyr_lgs_system_destroy", None, (POINTER(POINTER(LgsSystem)),)),
    ("pyr_lgs_system_test1", _status, (c_int64, c_int64, POINTER(POINTER(LgsSystem)))),
    ("pyr_lgs_system_test2", _status, (c_int64, c_int64, POINTER(POINTER(LgsSystem)))),
    ("pyr_lgs_system_laplace", _status, (c_int64, c_int64, POINTER(POINTER(LgsSystem)))),
    ("pyr_lgs_system_check", _status, (POINTER(LgsSystem), c_char_p, c_size_t)),
    ("pyr_lgs_options_default", None, (POINTER(LgsOptions),)),
    ("pyr_lgs_solve", _status, (POINTER(LgsSystem), POINTER(LgsOptions), POINTER(c_double), POINTER(POINTER(LgsResult)))),
    ("pyr_lgs_result_destroy", None, (POINTER(POINTER(LgsResult)),)),
    ("pyr_lgs_residual", _status, (POINTER(LgsSystem), POINTER(c_double), POINTER(c_double))),
    ("pyr_lgs_stop_name", c_char_p, (c_int,)),
    ("pyr_lgs_omega_laplace", c_double, (c_int64, c_int64)),
    ("pyr_frames_options_create", _status, (POINTER(_P),)),
    ("pyr_frames_options_destroy", None, (POINTER(_P),)),
    ("pyr_frames_options_set", _status, (_P, c_char_p, c_char_p)),
    ("pyr_frames_options_validate", _status, (_P,)),
    ("pyr_frames_create", _status, (c_int64, c_int64, _P, FRAMES_SINK, c_void_p, POINTER(_P))),
    ("pyr_frames_push", _status, (_P, c_void_p, c_int, c_void_p)),
    ("pyr_frames_finish", _status, (_P,)),
    ("pyr_frames_max_snr", _status, (_P, c_void_p)),
    ("pyr_frames_get_stats", None, (_P, POINTER(FramesStats))),
    ("pyr_frames_notice", c_char_p, (_P,)),
    ("pyr_frames_destroy", None, (POINTER(_P),)),
    ("pyr_frames_link_options_default", None, (POINTER(FramesLinkOptions),)),
    ("pyr_frames_link_options_set", _status, (POINTER(FramesLinkOptions), c_char_p, c_char_p)),
    ("pyr_frames_link_options_validate", _status, (POINTER(FramesLinkOptions),)),
    ("pyr_frames_link", _status, (POINTER(FramesTableRow), c_int64, POINTER(FramesLinkOptions), c_void_p,
                                  POINTER(c_int64), POINTER(POINTER(FramesTrack)), POINTER(c_int64))),
    ("pyr_frames_tracks_free", None, (POINTER(POINTER(FramesTrack)),)),
]:
    _declare(_n, _r, *_a)


def text(b):
    return b.decode("utf-8", "replace") if b is not None else ""


def last_error():
    return text(lib.pyr_last_error())


def status_names():
    """Status code -> name ("PYR_ERR_BUDGET"), read from the library."""
    names = {}
    for i in range(64):
        n = text(lib.pyr_status_name(i))
        if n == "PYR_UNKNOWN":
            break
        names[i] = n
    return names


def json_of(fn, handle):
    """Call an snprintf-style JSON function twice: for the length, then the text."""
    n = fn(handle, None, 0)
    buf = ctypes.create_string_buffer(n + 1)
    fn(handle, buf, n + 1)
    return buf.value.decode("utf-8", "replace")
