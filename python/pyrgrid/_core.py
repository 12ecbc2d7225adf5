"""Problems, options, plans and runs over libpyrgrid's layout-free API."""

from __future__ import annotations

import ctypes
import difflib
import json
import math
import os
import sys
import time
from dataclasses import dataclass, field as dc_field
from typing import IO, Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from . import _lib
from ._errors import (ArgumentError, CancelledError, ConfigError, DeviceArrayError, DivergedError, Error, InternalError,
                      error_for, warn_copy)
from ._interrupt import Interrupts as _Interrupts
from ._lib import lib

# Maxwell's monitors' spectra (pyr_spectra_*): opaque handles and a plain info struct


class _MonitorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 16), ("flux", ctypes.c_int), ("ncomponents", ctypes.c_int),
                ("components", ctypes.c_int * 6), ("axis", ctypes.c_int), ("lo", ctypes.c_int64 * 3),
                ("hi", ctypes.c_int64 * 3), ("nnodes", ctypes.c_int64), ("nfreq", ctypes.c_int), ("steps", ctypes.c_int64)]


_DOUBLES = ctypes.POINTER(ctypes.c_double)
for _name, _args in (("pyr_spectra_create", (ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p))),
                     ("pyr_spectra_destroy", (ctypes.POINTER(ctypes.c_void_p),)),
                     ("pyr_spectra_attach", (ctypes.c_void_p, ctypes.c_void_p)),
                     ("pyr_spectra_count", (ctypes.c_void_p,)),
                     ("pyr_spectra_info", (ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(_MonitorInfo))),
                     ("pyr_spectra_freqs", (ctypes.c_void_p, ctypes.c_int, _DOUBLES)),
                     ("pyr_spectra_dft", (ctypes.c_void_p, ctypes.c_int, _DOUBLES, _DOUBLES)),
                     ("pyr_spectra_flux", (ctypes.c_void_p, ctypes.c_int, _DOUBLES)),
                     ("pyr_spectra_write_csv", (ctypes.c_void_p, ctypes.c_char_p)),
                     ("pyr_spectra_farfield", (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.c_int,
                                               _DOUBLES, _DOUBLES, ctypes.c_double, _DOUBLES, _DOUBLES, _DOUBLES))):
    _f = getattr(lib, _name)
    _f.argtypes = list(_args)
    _f.restype = None if _name == "pyr_spectra_destroy" else ctypes.c_int

_STATUS = _lib.status_names()
_CANCELLED = next(code for code, name in _STATUS.items() if name == "PYR_ERR_CANCELLED")

# what the public calls take (PEP 484); arrays: NumPy's, or any host buffer _host_array takes
Value = Union[int, float, str, bool, "os.PathLike[str]"]
Keys = Mapping[str, Optional[Value]]
PathLike = Union[str, "os.PathLike[str]"]
Shape = Sequence[int]
DTypeLike = npt.DTypeLike
ArrayLike = Any  # an ndarray, a buffer, __array_interface__ or CPU __dlpack__ object (see _host_array)
# progress=: a callable(steps_done, steps_total) (False from it stops the run), True (a bar on stderr), or None/False
Progress = Union[Callable[[int, int], Optional[bool]], bool, None]


def check(status: int) -> None:
    """Raise the library's failure as an exception carrying its message."""
    if status != 0:
        name = _STATUS.get(status, "PYR_ERR_INTERNAL")
        raise error_for(name, _lib.last_error())


def _text(value: Any) -> str:
    """A Python value as the text of a problem-file key."""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))  # repr reads back as the same double
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, str):
        return value
    if getattr(value, "_pyrgrid_key", False):  # pyrgrid.Source, Probe, PlaneWave, DftRegion, FluxRegion: their key's text
        return str(value.text())
    raise ArgumentError(f"a setting must be a number or a string, not {type(value).__name__} ({value!r})")


def _value(text: str) -> Union[int, float, str]:
    """Key text back as int, float or str."""
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


_DTYPES: Dict[str, np.dtype] = {"float": np.dtype(np.float32), "double": np.dtype(np.float64)}
_PRECISION: Dict[np.dtype, str] = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}

# keyword -> problem-file key
_PROBLEM_KEYWORDS = {
    **{k: "scheme." + k for k in ("equation", "alpha", "dt", "steps", "iterations", "tolerance", "check_every", "omega",
                                 "iteration", "precision", "courant", "mode")},
    **{k: "grid." + k for k in ("dims", "nx", "ny", "nz", "lx", "ly", "lz")},
    "seed": "initial.seed", "initial": "initial.kind", "initial_file": "initial.file",
    "rhs": "rhs.kind", "rhs_file": "rhs.file",
}
# rhs="array": Poisson's f comes from the caller's array, given to Plan.execute
_ARRAY = "<array>"
# problem keys the library lists (pyr_problem_json) and reads back (pyr_problem_get); others are kept by Problem.set for copies
_READABLE = set(_PROBLEM_KEYWORDS.values())
# input fields a caller may pass to Plan.execute (Poisson's f, Maxwell's coefficients)
_INPUTS = ("f", "ca", "cb", "dh")
_OPTION_KEYWORDS = ("backend", "device", "method", "decomposition", "height", "memory", "rows", "block", "threads",
                    "plan", "slots", "kernel", "devices", "partition", "exchange", "host_memory")


def _unknown(name: str, known: Iterable[str], what: str) -> ArgumentError:
    near = difflib.get_close_matches(name, known, n=1)
    hint = f"; did you mean {near[0]!r}?" if near else f"; the {what} are " + ", ".join(sorted(known))
    return ArgumentError(f"unknown keyword {name!r}{hint}")


# ------------------------------------------------------------------ handles

class _Handle:
    """A library handle (problem or options) seen through its problem-file keys.

    Copies and pickles carry the keys, never the struct's bytes: the keys the
    library lists (``to_dict``) are read back as text (``pyr_*_get``, every
    digit of a double) and set again in a new handle, in the library's order,
    each only where the new handle's value differs; the copy is then read
    back and compared key by key."""

    _create: Any = None
    _destroy: Any = None
    _set: Any = None
    _get: Any = None
    _json: Any = None

    def __init__(self) -> None:
        self._h = ctypes.c_void_p()
        check(type(self)._create(ctypes.byref(self._h)))

    def __del__(self) -> None:
        h = getattr(self, "_h", None)
        if h:
            try:
                type(self)._destroy(ctypes.byref(h))
            except Exception:  # interpreter shutdown: the library may be gone already
                pass

    def set(self, key: str, value: Value) -> _Handle:
        """Set a problem-file key ("grid.nx", "run.memory") from a number or a string."""
        check(type(self)._set(self._h, key.encode(), _text(value).encode()))
        return self

    def _text_of(self, key: str) -> str:
        buf = ctypes.create_string_buffer(8192)
        check(type(self)._get(self._h, key.encode(), buf, len(buf)))
        return buf.value.decode()

    def get(self, key: str) -> Union[int, float, str]:
        """The value of a problem-file key (int, float or str)."""
        return _value(self._text_of(key))

    def __setitem__(self, key: str, value: Value) -> None:
        self.set(key, value)

    def __getitem__(self, key: str) -> Union[int, float, str]:
        return self.get(key)

    def to_dict(self) -> Dict[str, Any]:
        """The keys as nested dicts ({"grid": {"nx": 65, ...}, ...})."""
        return json.loads(_lib.json_of(type(self)._json, self._h))

    def _keys(self) -> List[str]:
        """The keys the library lists for this handle, "section.key", in its order."""
        return [f"{section}.{k}" for section, keys in self.to_dict().items() for k in keys]

    def _key_texts(self) -> List[Tuple[str, str]]:
        return [(k, self._text_of(k)) for k in self._keys()]

    def _replay(self, items: Sequence[Tuple[str, str]]) -> None:
        """Set the keys of another handle (pairs of key and text, as _key_texts gives) and check that each reads back."""
        failed: Dict[str, Error] = {}
        for key, text in items:
            try:
                if self._text_of(key) != text:
                    check(type(self)._set(self._h, key.encode(), text.encode()))
            except Error as e:  # a later key may set it (scheme.steps and scheme.iterations are one value)
                failed[key] = e
        for key, text in items:
            got = self._text_of(key)
            if got != text:
                why = f" ({failed[key]})" if key in failed else ""
                raise InternalError(f"pyrgrid: a copy of this {type(self).__name__} reads {key} = {got!r} where the original has "
                            f"{text!r}{why}")

    def __getstate__(self) -> Dict[str, Any]:
        return {"keys": self._key_texts()}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        _Handle.__init__(self)
        self._replay(state["keys"])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({json.dumps(self.to_dict())})"


class Options(_Handle):
    """How to solve: the keys of a problem file's [run] section.

    ``Options(memory="4GiB", backend="cpu", method="pyramid")``, or
    ``Options({"run.memory": "4GiB"})``; ``options["run.height"] = 8``."""

    _create = lib.pyr_options_create
    _destroy = lib.pyr_options_destroy
    _set = lib.pyr_options_set
    _get = lib.pyr_options_get
    _json = lib.pyr_options_json

    def __init__(self, keys: Optional[Keys] = None, **options: Optional[Value]) -> None:
        super().__init__()
        for k, v in dict(keys or {}).items():
            if v is not None:
                self.set(k if "." in k else "run." + k, v)
        for k, v in options.items():
            if k not in _OPTION_KEYWORDS:
                raise _unknown(k, _OPTION_KEYWORDS, "options")
            if v is not None:
                self.set("run." + k, v)

    def _keys(self) -> List[str]:
        # its JSON names the piece's extent "piece": the key run.rows (run.block, the same value, also chooses blocks)
        return ["run." + ("rows" if k == "piece" else k) for k in self.to_dict()]


def _options_of(options: Union[Options, Mapping[str, Any], None]) -> Options:
    if options is None:
        return Options()
    if isinstance(options, Options):
        return options
    if isinstance(options, dict):
        return Options(options)
    raise ArgumentError(f"options must be pyrgrid.Options or a dict of [run] keys, not {type(options).__name__}")


class Problem(_Handle):
    """What to solve: a grid, a scheme and its parameters, an initial field.

    ``Problem("heat", shape=(257, 257), dt=1e-6, steps=100)``; ``shape`` is
    NumPy's (slowest axis first: (nx,), (ny, nx) or (nz, ny, nx)), as is
    ``lengths``.  Other keywords: alpha, dt, steps (heat); iterations,
    tolerance, check_every, omega, iteration ("jacobi", "chebyshev"), rhs (poisson: "zero", "sine", "file" with
    rhs_file, or "array": f given to Plan.execute); courant (or dt), steps,
    mode ("tm", "te": 2D) (maxwell); precision or ``dtype``; initial
    ("sine", "gauss", "random", "zero", "file"), initial_file, seed; lx, ly,
    lz; ``keys`` takes problem-file keys ({"grid.lx": 2.0}, Maxwell's
    {"boundary.kind": "cpml", "source.source1": "Ez point 10 15 ricker
    frequency=2 delay=0.6", "probe.probe1": "Ez 30 15"}).
    ``Problem.from_file("heat2d.ini")`` reads a problem file as the program
    does.  ``problem["scheme.dt"]`` reads and sets any key.

    Problems are copied and pickled by their keys (``copy.deepcopy``,
    ``pickle``, a ``multiprocessing`` worker's argument): the copy is a new
    problem that reads the same in every key.  Keys the library does not read
    back (Maxwell's boundary, material, source and probe sections) go with
    it as they were set; a Maxwell problem read by :meth:`from_file` is read
    from its file again (by its absolute path) where it is unpickled."""

    _create = lib.pyr_problem_create
    _destroy = lib.pyr_problem_destroy
    _set = lib.pyr_problem_set
    _get = lib.pyr_problem_get
    _json = lib.pyr_problem_json

    def __init__(self, equation: Optional[str] = None, *, shape: Optional[Shape] = None, dtype: DTypeLike = None,
                 lengths: Optional[Sequence[float]] = None, keys: Optional[Keys] = None, **params: Optional[Value]) -> None:
        super().__init__()
        self._options: Optional[Options] = None
        self._unread: Dict[str, str] = {}  # keys set that the library does not read back, in the order set
        self._file: Optional[str] = None  # the problem file from_file read
        if equation is not None:
            self.set("scheme.equation", equation)
        if shape is not None:
            shape = tuple(int(s) for s in shape)
            if not 1 <= len(shape) <= 3:
                raise ArgumentError(f"shape {shape}: a grid has 1, 2 or 3 axes ((nx,), (ny, nx) or (nz, ny, nx))")
            self.set("grid.dims", len(shape))
            for axis, n in enumerate(reversed(shape)):
                self.set("grid.n" + "xyz"[axis], n)
        if lengths is not None:
            lengths = tuple(lengths)
            if shape is not None and len(lengths) != len(shape):
                raise ArgumentError(f"lengths {lengths} and shape {shape} have different numbers of axes")
            for axis, length in enumerate(reversed(lengths)):
                self.set("grid.l" + "xyz"[axis], length)
        if dtype is not None:
            dt_ = np.dtype(dtype)
            if dt_ not in _PRECISION:
                raise ArgumentError(f"dtype {dt_}: pyrgrid computes in float32 or float64")
            self.set("scheme.precision", _PRECISION[dt_])
        for k, v in dict(keys or {}).items():
            if v is not None:
                self.set(k, v)
        for k, v in params.items():
            if k not in _PROBLEM_KEYWORDS:
                raise _unknown(k, list(_PROBLEM_KEYWORDS), "problem keywords")
            if k == "rhs" and v == "array":
                self.set("rhs.kind", "file").set("rhs.file", _ARRAY)
            elif v is not None:
                self.set(_PROBLEM_KEYWORDS[k], v)

    def set(self, key: str, value: Value) -> Problem:
        """Set a problem-file key ("grid.nx", "scheme.dt", "source.source1") from a number or a string."""
        super().set(key, value)
        if key not in _READABLE:
            # a key the library's list (to_dict) leaves out (Maxwell's sections, which it reads back one by one but
            # does not list): a copy sets it again as it was set, in the order set
            self._unread.pop(key, None)
            self._unread[key] = _text(value)
        return self

    def _keys(self) -> List[str]:
        # the equation first: setting it changes other keys' defaults (Maxwell's fields start at zero); then the
        # keys the library lists for this equation, then those of the other equations (still read and set)
        listed = super()._keys()
        known = ["scheme.equation"] + listed + [k for k in _PROBLEM_KEYWORDS.values() if k != "scheme.equation"]
        return list(dict.fromkeys(known))

    def __getstate__(self) -> Dict[str, Any]:
        state = super().__getstate__()
        state["unread"] = list(self._unread.items())
        state["options"] = self._options
        # a Maxwell problem's file may hold keys the library does not give back (materials, sources, probes)
        state["file"] = self._file if self._file is not None and self.equation == "maxwell" else None
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        _Handle.__init__(self)
        self._options = state.get("options")
        self._unread = {}
        self._file = state.get("file")
        if self._file is not None:
            check(lib.pyr_problem_load_file(self._h, Options()._h, os.fsencode(self._file)))
        self._replay(state["keys"])
        for k, v in state.get("unread", ()):
            self.set(k, v)

    @classmethod
    def from_file(cls, path: PathLike, keys: Optional[Keys] = None, **params: Optional[Value]) -> Problem:
        """Read a problem file as `pyrgrid run` does (inputs relative to its
        folder, the grid from initial.file, restarts: the steps that remain),
        then apply keys/params.  Its [run] keys become ``problem.options``."""
        p = cls()
        opts = Options()
        check(lib.pyr_problem_load_file(p._h, opts._h, os.fsencode(os.fspath(path))))
        p._options = opts
        p._file = os.path.abspath(os.fspath(path))
        for k, v in dict(keys or {}).items():
            if v is not None:
                (opts if k.startswith("run.") else p).set(k, v)
        for k, v in params.items():
            if v is None:
                continue
            if k in _OPTION_KEYWORDS:
                opts.set("run." + k, v)
            elif k in _PROBLEM_KEYWORDS:
                p.set(_PROBLEM_KEYWORDS[k], v)
            else:
                raise _unknown(k, list(_PROBLEM_KEYWORDS) + list(_OPTION_KEYWORDS), "keywords")
        return p

    @property
    def options(self) -> Optional[Options]:
        """The options of the problem file it came from (from_file), else None."""
        return self._options

    @property
    def equation(self) -> str:
        return self._text_of("scheme.equation")

    @property
    def _equation_code(self) -> int:
        code = ctypes.c_int()
        if not lib.pyr_equation_from_name(self.equation.encode(), ctypes.byref(code)):
            raise ConfigError(f"unknown equation {self.equation!r}")
        return code.value

    @property
    def shape(self) -> Tuple[int, ...]:
        """NumPy shape of the grid's fields: (nx,), (ny, nx) or (nz, ny, nx)."""
        dims = int(self._text_of("grid.dims"))
        return tuple(int(self._text_of("grid.n" + "xyz"[a])) for a in reversed(range(dims)))

    @property
    def dtype(self) -> np.dtype:
        """float32 or float64, as scheme.precision says."""
        return _DTYPES[self._text_of("scheme.precision")]

    @property
    def fields(self) -> Dict[str, bool]:
        """The scheme's fields in order, as {name: updated}: heat {"u": True}; poisson {"u": True, "f": False};
        maxwell {"Ex": True, ..., "Hz": True, "ca": False, ...} (its CPML auxiliaries, kept by the library, too)."""
        eq = self._equation_code
        return {_lib.text(lib.pyr_scheme_field_name(eq, i)): bool(lib.pyr_scheme_field_updated(eq, i))
                for i in range(lib.pyr_scheme_field_count(eq))}

    @property
    def state_fields(self) -> Tuple[str, ...]:
        """Names of the fields a run of this problem updates, in the scheme's order: ("u",) for heat and
        Poisson; Maxwell's components of the grid's mode (2D TM ("Ez", "Hx", "Hy"), TE ("Ex", "Ey", "Hz"),
        3D all six)."""
        return tuple(n for i, (n, updated) in enumerate(self.fields.items()) if updated and lib.pyr_problem_field_used(self._h, i))

    @property
    def dt(self) -> float:
        """The time step a run takes (Maxwell's from its Courant number when dt is not given); 0 for Poisson."""
        v = ctypes.c_double()
        check(lib.pyr_problem_time_step(self._h, ctypes.byref(v)))
        return v.value

    def validate(self) -> Problem:
        """Check the problem as a run would (its message says what is wrong); returns it."""
        check(lib.pyr_problem_validate(self._h))
        return self

    def initial(self) -> npt.NDArray[np.floating]:
        """A new array holding the problem's initial field (its kind: sine,
        gauss, random, zero, or the file), as the program makes it.  Schemes
        with several state fields (Maxwell): :meth:`initial_fields`."""
        state = self.state_fields
        if len(state) != 1:
            raise ArgumentError(f"the {self.equation} scheme updates {len(state)} fields {state}: "
                                f"problem.initial_fields() makes them all, as a dict")
        self.validate()
        u = np.empty(self.shape, dtype=self.dtype)
        with _Wrapped(u, "u") as f:
            check(lib.pyr_field_init(f.handle, self._h))
        return u

    def initial_fields(self) -> Dict[str, npt.NDArray[np.floating]]:
        """The initial value of every state field, {name: new array}, as the program makes them
        (Maxwell: each component from initial.kind: zero, random, or PREFIX_<component>.npy)."""
        return self._initial_fields(fresh=False)

    def _initial_fields(self, fresh: bool) -> Dict[str, npt.NDArray[np.floating]]:
        """initial_fields(); Maxwell's zero start as arrays over the library's zero fields (_ZeroField), which
        ``fresh`` says no one else has seen yet."""
        self.validate()
        out = {}
        names = list(self.fields)
        if self.equation == "maxwell" and self.get("initial.kind") == "zero":
            for name in self.state_fields:
                z = _ZeroField(tuple(self.shape), self.dtype)
                z.fresh = fresh
                out[name] = np.asarray(z)
            return out
        for name in self.state_fields:
            a = np.empty(self.shape, dtype=self.dtype)
            with _Wrapped(a, name) as f:
                check(lib.pyr_field_init_state(f.handle, self._h, names.index(name)))
            out[name] = a
        return out

    def input(self, name: str = "f") -> npt.NDArray[np.floating]:
        """A new array holding input field `name` (Poisson's f; Maxwell's coefficients ca, cb, dh) as the problem
        defines it."""
        names = list(self.fields)
        if name not in names or self.fields[name]:
            raise ArgumentError(f"{name!r} is not an input field of the {self.equation} scheme (its fields: {names})")
        self.validate()
        a = np.empty(self.shape, dtype=self.dtype)
        with _Wrapped(a, name) as f:
            check(lib.pyr_field_init_input(f.handle, self._h, names.index(name)))
        return a


def _problem_of(problem: Union[Problem, Mapping[str, Any], PathLike]) -> Problem:
    if isinstance(problem, Problem):
        return problem
    if isinstance(problem, dict):
        return Problem(keys=problem)
    if isinstance(problem, (str, os.PathLike)):
        return Problem.from_file(problem)
    raise ArgumentError(f"problem must be pyrgrid.Problem, a dict of problem-file keys or a problem file's path, "
                        f"not {type(problem).__name__}")


# ------------------------------------------------------------------ fields

class _Wrapped:
    """A library field around an array's buffer (pyr_field_wrap: no copy), or around a GPU array's
    (_Wrapped.device: pyr_field_wrap_device)."""

    def __init__(self, a: Optional[np.ndarray], name: str) -> None:
        self.array = a
        self.handle = ctypes.c_void_p()
        if a is None:
            return
        n = (ctypes.c_int64 * 3)(*(list(reversed(a.shape)) + [1] * (3 - a.ndim)))
        check(lib.pyr_field_wrap(a.ndim, n, 1 if a.dtype == np.float64 else 0, ctypes.c_void_p(a.ctypes.data),
                                 ctypes.byref(self.handle)))

    @classmethod
    def device(cls, dims: int, n: Sequence[int], precision: int, ptr: int, device: int, stream: int) -> _Wrapped:
        w = cls(None, "")
        check(lib.pyr_field_wrap_device(dims, (ctypes.c_int64 * 3)(*n), precision, ctypes.c_void_p(ptr), device, stream,
                                        ctypes.byref(w.handle)))
        return w

    def __enter__(self) -> _Wrapped:
        return self

    def __exit__(self, *exc: object) -> None:
        lib.pyr_field_destroy(ctypes.byref(self.handle))


class _ZeroField:
    """A field of zeros in the library's memory (pyr_field_create_zero: pages that read as zero, not written
    here), which NumPy sees through ``__array_interface__``: ``numpy.asarray(z)`` is an array over the field's
    data whose base is this object, so the field lives as long as an array over it.  A run handed ``handle``
    while the field still holds zeros sets it on a GPU instead of uploading it; the library reads the pages
    written since it was made before it takes it so, so a value written through the array is never lost.
    ``fresh``: no one but the code that made it has seen the array (its values need no finiteness check)."""

    def __init__(self, shape: Tuple[int, ...], dtype: np.dtype) -> None:
        _lib.check_struct("pyr_field_t")
        self.handle = ctypes.c_void_p()
        self.fresh = False
        n = (ctypes.c_int64 * 3)(*(list(reversed(shape)) + [1] * (3 - len(shape))))
        check(lib.pyr_field_create_zero(len(shape), n, 1 if np.dtype(dtype) == np.float64 else 0, ctypes.byref(self.handle)))
        data = ctypes.cast(self.handle, ctypes.POINTER(_lib.Field)).contents.data
        self.__array_interface__ = {"shape": tuple(shape), "typestr": np.dtype(dtype).str, "data": (data, False),
                                    "version": 3}

    def __del__(self) -> None:
        if lib is not None and self.handle:
            lib.pyr_field_destroy(ctypes.byref(self.handle))

    def __enter__(self) -> _ZeroField:
        return self

    def __exit__(self, *exc: object) -> None:
        """Handed to a run in place of a _Wrapped: the field stays (the arrays over it own it)."""


def _zero_field(a: Any) -> Optional[_ZeroField]:
    """The _ZeroField an array spans whole (as numpy.asarray made it), or None."""
    z = a.base if isinstance(a, np.ndarray) else None
    if not isinstance(z, _ZeroField):
        return None
    face = z.__array_interface__
    same = (a.ctypes.data == face["data"][0] and a.shape == face["shape"] and a.dtype.str == face["typestr"]
            and a.flags.c_contiguous)
    return z if same else None


def _describe(a: np.ndarray) -> str:
    return f"an array of shape {a.shape} and dtype {a.dtype}"


# DLPack's device types (dlpack.h, DLDeviceType): the host's, and names for the others in messages
_DL_CPU = 1
_DL_DEVICES = {2: "a CUDA GPU", 3: "CUDA pinned host memory", 4: "an OpenCL device", 7: "a Vulkan device", 8: "a Metal GPU",
               9: "a VPI device", 10: "a ROCm GPU", 11: "ROCm pinned host memory", 12: "an extension device",
               13: "CUDA managed memory", 14: "a oneAPI device", 15: "a WebGPU device", 16: "a Hexagon DSP"}


def _device_of(obj: object) -> Optional[Tuple[int, int, str]]:
    """Where an array that is not in host memory lives, as (DLPack device type, device id, words), or None for
    host memory (or an object that says nothing of a device)."""
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is not None:
        return 2, -1, "a CUDA GPU (__cuda_array_interface__)"
    device = getattr(obj, "__dlpack_device__", None)
    if device is not None and not isinstance(obj, np.ndarray):
        try:
            kind, index = device()
        except Exception as e:  # a producer that cannot say: taken as not the host's
            return -1, -1, f"a device its __dlpack_device__ does not name ({e})"
        if int(kind) != _DL_CPU:
            return int(kind), int(index), f"{_DL_DEVICES.get(int(kind), f'DLPack device type {int(kind)}')} {int(index)}"
    return None


# DLPack's structs (dlpack.h), as a producer's capsule "dltensor" holds them
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_DL_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DL_DELETER)]
_DL_KINDS = {0: "int", 1: "uint", 2: "float", 4: "bfloat", 5: "complex", 6: "bool"}
_DL_CUDA, _DL_CUDA_MANAGED = 2, 13
_CUDA_LEGACY_STREAM = 1  # the CUDA array interface's and DLPack's number of the legacy default stream


def _capsule_api() -> Tuple[Any, Any]:
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    rename = ctypes.pythonapi.PyCapsule_SetName
    rename.restype, rename.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
    return get, rename


_HOST_COPIES = "cupy.asnumpy(x), x.cpu().numpy() for PyTorch, numpy.asarray(x) for JAX"


class _GpuArray:
    """An array in a GPU's memory as its producer describes it: the CUDA array interface (pointer, shape,
    typestr, strides, and in version 3 the stream its writes are queued on), or a DLPack capsule of a CUDA
    device, asked for with the legacy default stream as the consumer's (DLPack's stream contract: the producer
    makes that stream wait for its work, which the run then waits for).  The capsule is taken as DLPack says
    (renamed "used_dltensor"); release() calls its deleter.  Nothing is read from the device here."""

    def __init__(self, obj: object, name: str, where: Tuple[int, int, str]) -> None:
        self.name, self.where = name, where[2]
        self._managed: Any = None
        self.field: Optional[_Wrapped] = None
        if not lib.pyr_backend_available(2):
            raise DeviceArrayError(f"{name} lives on {self.where}, and this pyrgrid library cannot reach GPU memory (built "
                                   f"without CUDA, or no GPU usable here): pass a host copy ({_HOST_COPIES})",
                                   "PYR_ERR_UNSUPPORTED")
        # DLPack first where the producer offers it on a CUDA device: its stream contract has the producer order
        # its own work before the consumer's stream, while a CUDA array interface before version 3 (PyTorch's)
        # names no stream at all
        cai = getattr(obj, "__cuda_array_interface__", None)
        kind = where[0] if cai is None else -1
        if cai is not None and callable(getattr(obj, "__dlpack__", None)) and callable(getattr(obj, "__dlpack_device__", None)):
            try:
                kind = int(obj.__dlpack_device__()[0])  # type: ignore[attr-defined]
            except Exception:
                kind = -1
        if cai is None or kind in (_DL_CUDA, _DL_CUDA_MANAGED):
            self._from_dlpack(obj, kind)
        else:
            self._from_cai(cai)
        self.ndim = len(self.shape)
        self.size = math.prod(self.shape)

    def _from_cai(self, cai: Mapping[str, Any]) -> None:
        name = self.name
        try:
            self.shape = tuple(int(n) for n in cai["shape"])
            self.dtype = np.dtype(cai["typestr"])
            self.ptr, self.readonly = int(cai["data"][0] or 0), bool(cai["data"][1])
            strides = cai.get("strides")
            self.strides = None if strides is None else tuple(int(b) for b in strides)
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise ArgumentError(f"{name}: its __cuda_array_interface__ cannot be read ({e!r}); it needs shape, typestr and "
                                f"data") from None
        if cai.get("mask") is not None:
            raise DeviceArrayError(f"{name} is a masked GPU array; pass one without a mask", "PYR_ERR_UNSUPPORTED")
        stream = cai.get("stream") if int(cai.get("version", 0)) >= 3 else None
        # None: the producer needs no synchronisation; waiting for the legacy default stream then is harmless
        self.stream = _CUDA_LEGACY_STREAM if stream is None else int(stream)
        if self.stream == 0:
            raise ArgumentError(f"{name}: its __cuda_array_interface__ names stream 0, which the interface disallows as "
                                f"ambiguous (1 is the legacy default stream, 2 the per-thread one)")
        self.device = -1  # the library asks CUDA which GPU holds the pointer

    def _from_dlpack(self, obj: Any, kind: int) -> None:
        name = self.name
        if kind not in (_DL_CUDA, _DL_CUDA_MANAGED):
            raise DeviceArrayError(f"{name} lives on {self.where}; pyrgrid computes on CUDA GPUs and host memory: pass a "
                                   f"host copy (numpy.asarray, or the library's own copy to the CPU)", "PYR_ERR_UNSUPPORTED")
        # the producer makes the legacy default stream wait for its work; the run's queue then waits for that stream
        self.stream = _CUDA_LEGACY_STREAM
        try:
            try:
                capsule = obj.__dlpack__(stream=_CUDA_LEGACY_STREAM)
            except (TypeError, ValueError, BufferError, RuntimeError):
                # a producer without the stream argument, or taking only None: which DLPack defines for CUDA as
                # the legacy default stream too
                capsule = obj.__dlpack__()
        except (BufferError, RuntimeError, ValueError, TypeError) as e:
            raise DeviceArrayError(f"{name}: its producer refuses to export it through DLPack ({e}); pass an array it "
                                   f"exports (for PyTorch, x.detach())", "PYR_ERR_UNSUPPORTED") from None
        get, rename = _capsule_api()
        try:
            address = get(capsule, b"dltensor")
        except ValueError:
            raise ArgumentError(f"{name}: its __dlpack__ returned no \"dltensor\" capsule (a versioned or used one); "
                                f"pass the array itself, not a capsule") from None
        managed = ctypes.cast(address, ctypes.POINTER(_DLManagedTensor))
        rename(capsule, b"used_dltensor")  # ours now: its deleter is ours to call (release)
        self._managed = managed
        t = managed.contents.dl_tensor
        self.device = int(t.device.device_id)
        self.shape = tuple(int(t.shape[i]) for i in range(t.ndim))
        code, bits, lanes = int(t.dtype.code), int(t.dtype.bits), int(t.dtype.lanes)
        if code == 2 and bits in (16, 32, 64) and lanes == 1:
            self.dtype = np.dtype(f"float{bits}")
        else:
            self.dtype = np.dtype(np.void)
            self.dl_dtype = f"{_DL_KINDS.get(code, f'code {code} ')}{bits}" + (f"x{lanes}" if lanes != 1 else "")
        item = max(1, bits // 8)
        self.strides = None if not t.strides else tuple(int(t.strides[i]) * item for i in range(t.ndim))
        self.ptr = int(t.data or 0) + int(t.byte_offset)
        self.readonly = False  # DLPack before its versioned form has no read-only flag

    def release(self) -> None:
        field, self.field = self.field, None
        if field is not None:
            field.__exit__()
        managed, self._managed = self._managed, None
        if managed is not None and managed.contents.deleter:
            managed.contents.deleter(managed)

    def dtype_name(self) -> str:
        return getattr(self, "dl_dtype", None) or str(self.dtype)

    def contiguous(self) -> bool:
        if self.strides is None:
            return True
        want = self.dtype.itemsize
        for n, b in zip(reversed(self.shape), reversed(self.strides)):
            if n > 1 and b != want:
                return False
            want *= n
        return True

    def _span(self) -> Tuple[int, int]:
        """The bytes the array's elements lie in: offsets lo .. hi from its pointer."""
        item = self.dtype.itemsize
        if self.strides is None or self.size == 0:
            return 0, self.size * item
        lo = sum(min(0, (n - 1) * b) for n, b in zip(self.shape, self.strides))
        hi = sum(max(0, (n - 1) * b) for n, b in zip(self.shape, self.strides)) + item
        return lo, hi

    def _precision(self) -> int:
        return 1 if self.dtype == np.float64 else 0

    def wrap(self, ptr: Optional[int] = None, count: Optional[int] = None) -> _Wrapped:
        """A library field over the array (pyr_field_wrap_device), or over ``count`` values from ``ptr``."""
        if count is None:
            n = list(reversed(self.shape)) + [1] * (3 - self.ndim)
            dims = self.ndim
        else:
            n, dims = [count, 1, 1], 1
        return _Wrapped.device(dims, n, self._precision(), self.ptr if ptr is None else ptr, self.device, self.stream)

    def _span_fields(self, host: np.ndarray) -> Tuple[_Wrapped, _Wrapped]:
        lo, hi = self._span()
        count = (hi - lo) // self.dtype.itemsize
        return self.wrap(self.ptr + lo, count), _Wrapped(host, "a host copy")

    def to_host(self) -> Tuple[np.ndarray, np.ndarray]:
        """A host copy: (the bytes the array spans, the array over them in its own strides), read through the
        library (pyr_field_copy, after the producer's stream)."""
        lo, hi = self._span()
        item = self.dtype.itemsize
        if lo % item or hi % item or (self.strides and any(b % item for b in self.strides)):
            raise DeviceArrayError(f"{self.name}'s strides {self.strides} are not multiples of its {item}-byte values; pass "
                                   f"a contiguous array", "PYR_ERR_UNSUPPORTED")
        span = np.empty(max(1, (hi - lo) // item), dtype=self.dtype)
        if self.size:
            dev, host = self._span_fields(span)
            with dev, host:
                check(lib.pyr_field_copy(host.handle, dev.handle))
        strides = self.strides or tuple(int(b) for b in np.empty(self.shape, self.dtype).strides)
        view = np.lib.stride_tricks.as_strided(span[-lo // item:], self.shape, strides)
        return span, view

    def from_host(self, span: np.ndarray) -> None:
        """Write a host copy (to_host's span, changed through its view) back into the array."""
        if self.size:
            dev, host = self._span_fields(span)
            with dev, host:
                check(lib.pyr_field_copy(dev.handle, host.handle))

    def bounds(self) -> Tuple[int, int]:
        lo, hi = self._span()
        return self.ptr + lo, self.ptr + hi


def _device_array(obj: object, name: str, where: Tuple[int, int, str], write: bool) -> np.ndarray:
    """A host copy of an array off the host, read where its values are only read (an input, or an initial
    field that is copied anyway), with a CopyWarning; the run's state arrays on a GPU go to Plan.execute's
    device path instead, which computes on them in place where it can."""
    g = _GpuArray(obj, name, where)
    try:
        if g.dtype not in _PRECISION:
            raise DeviceArrayError(f"{name} lives on {g.where} as {g.dtype_name()}; pyrgrid reads GPU arrays of float32 or "
                                   f"float64: convert it there (x.astype(...)) or pass a host copy ({_HOST_COPIES})",
                                   "PYR_ERR_UNSUPPORTED")
        if write:
            raise DeviceArrayError(f"{name} lives on {g.where}, where it cannot be updated from here: pass it to "
                                   f"Plan.execute, which computes on it in place", "PYR_ERR_UNSUPPORTED")
        warn_copy(f"{name} lives on {g.where}: it is read into host memory")
        span, view = g.to_host()
        return np.array(view, order="C")
    finally:
        g.release()


def _writable_view(a: np.ndarray) -> np.ndarray:
    """``a``'s memory as a writable array (``a`` kept alive as its base)."""
    iface = dict(a.__array_interface__)
    iface["data"] = (iface["data"][0], False)

    class _Memory:
        __array_interface__ = iface
        keep = a
    return np.asarray(_Memory())


def _host_array(obj: object, name: str, shape: Tuple[int, ...], write: bool) -> np.ndarray:
    """A host buffer as a NumPy array over the same memory (no copy): an ndarray (a numpy.memmap too); an
    object with ``__array_interface__``; one with the buffer protocol (array.array, a memoryview over a
    bytearray or mmap); a CPU DLPack producer (``__dlpack__``, through numpy.from_dlpack).  A 1-D buffer of
    as many elements as the grid's nodes is seen in the grid's shape (C order).  Arrays on a GPU go to
    _device_array.  Others: state fields (``write``) are refused, since a converted copy would not be
    updated; inputs go through numpy.asarray."""
    if isinstance(obj, np.ndarray):
        return obj
    where = _device_of(obj)
    if where is not None:
        return _device_array(obj, name, where, write)
    if hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__"):
        try:
            a = np.from_dlpack(obj)
        except (BufferError, TypeError, ValueError, RuntimeError) as e:
            raise ArgumentError(f"{name}: its DLPack buffer cannot be read as an array ({e}); pass numpy.asarray({name})") from None
        # DLPack (before its versioned form) has no read-only flag: what it exports may be written (NumPy refuses
        # to export a read-only array), though numpy.from_dlpack marks its view read-only
        if write and not a.flags.writeable:
            a = _writable_view(a)
    elif hasattr(obj, "__array_interface__"):
        a = np.asarray(obj)
    else:
        try:
            a = np.asarray(memoryview(obj))  # type: ignore[arg-type]
        except TypeError:
            if write:
                raise ArgumentError(f"{name} must be a NumPy array (or a host buffer: an object with the buffer protocol, "
                                    f"__array_interface__ or __dlpack__ on the CPU) of shape {shape} to be updated in "
                                    f"place, not {type(obj).__name__}") from None
            try:
                return np.asarray(obj)
            except (TypeError, ValueError) as e:
                raise ArgumentError(f"{name} cannot be read as an array ({e})") from None
    if a.ndim == 1 and len(shape) > 1 and a.size == math.prod(shape) and a.flags.c_contiguous:
        a = a.reshape(shape)
    return a


def state_array(u: ArrayLike, name: str, shape: Tuple[int, ...], dtype: np.dtype) -> Tuple[np.ndarray, Optional[np.ndarray]]:
    """The caller's array to update in place, checked: (array used, array to
    copy back into or None).  Any host buffer _host_array takes is used over
    its own memory.  Refused: another dtype or shape, read-only, an object
    that is no buffer, an array on a GPU.  Not C-contiguous or not aligned: a
    contiguous copy, written back (CopyWarning)."""
    u = _host_array(u, name, tuple(shape), write=True)
    if u.dtype != dtype:
        raise ArgumentError(f"{name} is {_describe(u)}; the plan computes in {dtype} ({_PRECISION.get(dtype)}): pass "
                            f"{name}.astype(numpy.{dtype.name}) and use the array returned, or make the problem with "
                            f"dtype={u.dtype.name if u.dtype in _PRECISION else 'float64'}")
    if u.shape != tuple(shape):
        raise ArgumentError(f"{name} is {_describe(u)}; the plan's grid needs shape {tuple(shape)} (NumPy order: "
                            f"(ny, nx) in 2D)")
    if not u.flags.writeable:
        raise ArgumentError(f"{name} is read-only; the run updates it in place: pass a writable array ({name}.copy(), "
                            f"or a numpy.memmap opened with mode='r+')")
    if u.flags.c_contiguous and u.flags.aligned:
        return u, None
    why = ("not aligned to its dtype" if u.flags.c_contiguous
           else "not C-contiguous (" + ("Fortran order" if u.flags.f_contiguous else "a strided view") + ")")
    warn_copy(f"{name} is {why}: the run works on a contiguous copy and writes the result back "
              f"(numpy.ascontiguousarray({name}) avoids the copy)")
    return np.array(u, order="C"), u  # a new array: C-contiguous and aligned


def input_array(f: ArrayLike, name: str, shape: Tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An input field (read, never written): any host buffer or array-like of the right shape and dtype, used
    in place (read-only ones too); a copy (CopyWarning) when not C-contiguous or not aligned; GPU arrays are
    refused."""
    f = _host_array(f, name, tuple(shape), write=False)
    if f.dtype != dtype:
        raise ArgumentError(f"{name} is {_describe(f)}; the plan computes in {dtype}: pass {name}.astype(numpy.{dtype.name})")
    if f.shape != tuple(shape):
        raise ArgumentError(f"{name} is {_describe(f)}; the plan's grid needs shape {tuple(shape)}")
    if not (f.flags.c_contiguous and f.flags.aligned):
        why = "not aligned to its dtype" if f.flags.c_contiguous else "not C-contiguous"
        warn_copy(f"{name} is {why}: a contiguous copy is passed (numpy.ascontiguousarray({name}) avoids it)")
        f = np.array(f, order="C")
    return f


def _first_non_finite(a: np.ndarray) -> Optional[Tuple[str, str]]:
    """(index, value) of the first NaN or infinity of ``a`` in C order, or None.  Read in blocks of rows: no
    temporary of the array's size."""
    if a.size == 0:
        return None
    rows = max(1, (1 << 20) // (a.size // a.shape[0]))
    for lo in range(0, a.shape[0], rows):
        block = a[lo:lo + rows]
        ok = np.isfinite(block)
        if ok.all():
            continue
        index = np.argwhere(~ok)[0]
        v = block[tuple(index)]
        index[0] += lo
        return "[" + ", ".join(str(int(i)) for i in index) + "]", ("NaN" if np.isnan(v) else "+inf" if v > 0 else "-inf")
    return None


def check_finite(a: np.ndarray, name: str, what: str = "initial data") -> None:
    """Refuse an array holding a NaN or an infinity, naming its first (as the program refuses such a file): it
    would spread through the grid without a word."""
    bad = _first_non_finite(a)
    if bad is not None:
        where, v = bad
        raise ArgumentError(f"{name} holds {v} at index {where} (the first of its values that is not a finite number); "
                            f"{what} must be finite (numpy.isfinite({name}).all())")


def check_result(arrays: Sequence[np.ndarray], names: Sequence[str], steps: int, dtype: np.dtype) -> None:
    """Raise DivergedError when a result holds a NaN or an infinity, as the program stops such a run: finite
    data that overflowed means the scheme diverged (a time step past the stable limit, a source too strong for
    the precision).  The arrays keep what the run computed."""
    for a, name in zip(arrays, names):
        bad = _first_non_finite(a)
        if bad is not None:
            where, v = bad
            hint = "; float32 ends near 3.4e38: dtype=numpy.float64 may hold it" if dtype == np.float32 else ""
            raise DivergedError(f"the fields diverged (non-finite) by step {steps}: {name} is {v} at index {where}; check "
                                f"the time step against the stable limit and the sources' amplitudes{hint}", "PYR_ERR_DIVERGED")


def _shares(a: np.ndarray, b: np.ndarray) -> bool:
    try:
        return bool(np.shares_memory(a, b, max_work=1 << 20))
    except Exception:  # too hard to tell exactly: overlapping bounds count as shared
        return bool(np.may_share_memory(a, b))


def _check_overlaps(given: Mapping[str, np.ndarray], fields: Mapping[str, bool]) -> None:
    """Refuse two fields in one buffer where the run writes either: the library would read one while it writes
    the other, and a copy written back would clobber the other's result."""
    names = list(given)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if (fields[a] or fields[b]) and _shares(given[a], given[b]):
                written = " and ".join(n for n in (a, b) if fields[n])
                raise ArgumentError(f"{a} and {b} share memory, and the run writes {written}: each field the run updates "
                                    f"needs an array of its own (pass {b}.copy(), or make them with problem.initial_fields())")


def _check_gpu_overlaps(given: Mapping[str, _GpuArray], fields: Mapping[str, bool]) -> None:
    """_check_overlaps for GPU arrays: the bytes they span may not overlap where the run writes either."""
    names = list(given)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            (alo, ahi), (blo, bhi) = given[a].bounds(), given[b].bounds()
            if (fields[a] or fields[b]) and alo < bhi and blo < ahi:
                written = " and ".join(n for n in (a, b) if fields[n])
                raise ArgumentError(f"{a} and {b} share GPU memory, and the run writes {written}: each field the run updates "
                                    f"needs an array of its own (pass a copy of {b})")


# a Maxwell coefficient the plan has no field for, and where it has one
_MATERIAL = " (the problem's material defines the coefficients: material.shapeN, material.eps_file, sigma_file, mu_file)"
_UNUSED_INPUT = {
    "ca": "its material's conductivity is uniform, so ca (E's decay per step) is one constant of the run; ca is kept "
          "per node only where sigma varies, or eps_r varies in a lossy background" + _MATERIAL,
    "cb": "its material is uniform, so cb (E's update factor) is one constant of the run; cb is kept per node only where "
          "eps_r or sigma varies" + _MATERIAL,
    "dh": "its mu_r is uniform, so dh (H's update factor) is one constant of the run; dh is kept per node only where "
          "mu_r varies" + _MATERIAL,
}


# ------------------------------------------------------------------ runs

@dataclass
class Monitor:
    """A frequency-domain monitor's result (problem keys monitor.dftN and
    monitor.fluxN): ``freqs``; ``fields`` {component: complex array of shape
    (nfreq,) + the region's shape in NumPy order ((ny, nx) in 2D, (nz, ny, nx)
    in 3D)}, the sums of F(t_n) exp(-i 2 pi f t_n) dt over the run's steps;
    a flux monitor's ``flux``, the power P(f) through its plane along +axis
    (None for a dft monitor).  ``lo``, ``hi``: the nodes of the fields (x, y,
    z; a flux monitor's reach one node below its plane, for H's averages)."""
    name: str
    freqs: npt.NDArray[np.float64]
    fields: Dict[str, np.ndarray]
    flux: Optional[npt.NDArray[np.float64]] = None
    lo: Tuple[int, ...] = ()
    hi: Tuple[int, ...] = ()
    axis: Optional[str] = None
    steps: int = 0


_COMPONENTS = ("Ex", "Ey", "Ez", "Hx", "Hy", "Hz")


def _read_spectra(spectra: ctypes.c_void_p, dims: int) -> Dict[str, Monitor]:
    """Every monitor of the spectra as a Monitor."""
    out: Dict[str, Monitor] = {}
    for m in range(lib.pyr_spectra_count(spectra)):
        info = _MonitorInfo()
        check(lib.pyr_spectra_info(spectra, m, ctypes.byref(info)))
        freqs = np.zeros(info.nfreq)
        check(lib.pyr_spectra_freqs(spectra, m, freqs.ctypes.data_as(_DOUBLES)))
        n = info.ncomponents * info.nfreq * info.nnodes
        re, im = np.zeros(n), np.zeros(n)
        check(lib.pyr_spectra_dft(spectra, m, re.ctypes.data_as(_DOUBLES), im.ctypes.data_as(_DOUBLES)))
        shape = tuple(int(info.hi[a] - info.lo[a] + 1) for a in reversed(range(dims)))
        values = (re + 1j * im).reshape((info.ncomponents, info.nfreq) + shape)
        fields = {_COMPONENTS[info.components[c]]: values[c] for c in range(info.ncomponents)}
        flux = None
        if info.flux:
            flux = np.zeros(info.nfreq)
            check(lib.pyr_spectra_flux(spectra, m, flux.ctypes.data_as(_DOUBLES)))
        name = info.name.decode()
        out[name] = Monitor(name=name, freqs=freqs, fields=fields, flux=flux, lo=tuple(info.lo[:dims]), hi=tuple(info.hi[:dims]),
                            axis=None if info.axis < 0 else "xyz"[info.axis], steps=int(info.steps))
    return out


@dataclass
class RunInfo:
    """What a run did: steps (sweeps for Poisson) done, whether the scheme
    measured its change (Poisson) and the max-norm change of the last sweep,
    whether it converged, the values moved and computed; over several
    devices (devices="0,1"), the parts, the steps between halo exchanges
    (exchange_height), the exchanges and the halo values moved."""
    steps: int
    checked: bool = False
    change: Optional[float] = None
    converged: bool = False
    counts: Dict[str, int] = dc_field(default_factory=dict)
    parts: int = 1
    exchange_height: int = 0
    exchanges: int = 0
    halo_sent: int = 0
    halo_received: int = 0
    probes: Optional[npt.NDArray[np.float64]] = None  # Maxwell's probes: row k holds each probe's value after step k + 1
    # Maxwell's frequency-domain monitors by name ("dft1", "flux1"): a Monitor each
    monitors: Dict[str, "Monitor"] = dc_field(default_factory=dict)
    # how the host arrays were reached by a GPU's copies: "pinned", "staged" (host_note says why) or
    # "none" (the CPU backend); the seconds registering and releasing them took
    host_memory: str = "none"
    pin_seconds: float = 0.0
    unpin_seconds: float = 0.0
    host_note: str = ""
    # method = multigrid: steps are its cycles, change the relative residual, and this the cost in sweeps of
    # the finest grid (0 for other methods)
    sweep_equivalents: float = 0.0

    @property
    def cycles(self) -> int:
        """Multigrid's name for steps."""
        return self.steps

    @property
    def sweeps(self) -> int:
        """Poisson's name for steps."""
        return self.steps


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class ProgressBar:
    """What ``progress=True`` draws on stderr: steps done of the total, the
    share, the rate and the time left (``[######------]  1200/3000 steps
    40%  350 steps/s  ETA 0:05``).  On a terminal the line is redrawn in
    place (``\\r``, at most about ten times a second); elsewhere (a pipe, a
    log file) a line is written at each tenth of the run.  Ends with a
    newline when the run ends, also when it stops early.  Called as
    ``bar(done, total)``; ``close()`` ends the line."""

    def __init__(self, unit: str = "steps", stream: Optional[IO[str]] = None, width: int = 24) -> None:
        self.unit = unit
        self.stream = sys.stderr if stream is None else stream
        try:
            self.tty = bool(self.stream.isatty())
        except (AttributeError, ValueError):
            self.tty = False
        self.width = width
        self.start = time.monotonic()
        self.done = 0
        self.total = 0
        self.shown = -1  # the steps the last drawing showed
        self.drawn_at = 0.0
        self.next_tenth = 1  # pipes: the tenth of the run whose line comes next
        self.length = 0  # terminals: the last line's length, to clear what it leaves
        self.closed = False

    def line(self) -> str:
        done, total = self.done, max(self.total, 1)
        share = min(done / total, 1.0)
        fill = int(share * self.width)
        elapsed = time.monotonic() - self.start
        rate = done / elapsed if elapsed > 0 and done > 0 else 0.0
        eta = _clock((self.total - done) / rate) if rate > 0 else "?"
        digits = len(str(self.total))
        speed = f"{rate:.0f}" if rate >= 10 else f"{rate:.2g}"
        last = f"ETA {eta}" if done < self.total else _clock(elapsed)
        return (f"[{'#' * fill}{'-' * (self.width - fill)}] {done:>{digits}}/{self.total} {self.unit} {share * 100:3.0f}%  "
                f"{speed} {self.unit}/s  {last}")

    def _draw(self, end: str = "") -> None:
        text = self.line()
        try:
            if self.tty:
                self.stream.write("\r" + text + " " * max(0, self.length - len(text)) + end)
                self.length = len(text)
            else:
                self.stream.write(text + "\n")
            self.stream.flush()
        except (AttributeError, OSError, ValueError):  # no stderr (pythonw), or closed: a bar never stops a run
            self.closed = True
        self.shown = self.done
        self.drawn_at = time.monotonic()

    def __call__(self, done: int, total: int) -> None:
        if self.closed:
            return
        self.done, self.total = int(done), int(total)
        if self.tty:
            if self.done >= self.total or time.monotonic() - self.drawn_at >= 0.1 or self.shown < 0:
                self._draw()
        elif self.total > 0 and self.done * 10 >= self.next_tenth * self.total:
            self._draw()
            self.next_tenth = self.done * 10 // self.total + 1
        if self.total > 0 and self.done >= self.total:
            self.close()

    def close(self) -> None:
        """End the bar: the last state drawn if it was not, and a newline."""
        if self.closed:
            return
        self.closed = True
        if self.shown < 0 and self.total == 0:
            return  # never called: nothing drawn, nothing to end
        if self.tty:
            if self.shown != self.done:
                self._draw("\n")
            else:
                self.stream.write("\n")
                self.stream.flush()
        elif self.shown != self.done:
            self._draw()


def _progress_callable(progress: Progress, unit: str) -> Optional[Callable[[int, int], Optional[bool]]]:
    """progress= as the run's callback: True draws a ProgressBar, False or None nothing, a callable is called."""
    if progress is None or progress is False:
        return None
    if progress is True:
        return ProgressBar(unit)
    if not callable(progress):
        raise ArgumentError(f"progress = {progress!r}: give a function progress(steps_done, steps_total), True (a progress "
                            f"bar on stderr), or None")
    return progress


class _Progress:
    """The hooks of a run: a Python callable(steps_done, steps_total) called
    between passes; returning False stops the run (CancelledError), an
    exception stops it and is raised again after it.  Ctrl-C (``interrupts``,
    _interrupt.Interrupts) stops it through either hook: the cancel hook is
    asked at least about every second, within a long pass of a resident
    plan too."""

    def __init__(self, callback: Optional[Callable[[int, int], Optional[bool]]], probes: bool = False,
                 interrupts: Optional[_Interrupts] = None) -> None:
        self.callback = callback
        self.interrupts = interrupts
        self.error: Optional[BaseException] = None
        self.stopped_at: Optional[int] = None  # the steps done where a hook stopped the run
        self.total: Optional[int] = None  # the run's steps, as the hooks were told
        self.fn = _lib.PROGRESS(self._call)
        _lib.check_struct("pyr_hooks_t")
        self.hooks = _lib.Hooks(progress=ctypes.cast(self.fn, ctypes.c_void_p))
        if interrupts is not None and interrupts.active:
            self.cancel_fn = _lib.PROGRESS(self._cancel)
            self.hooks.cancel = ctypes.cast(self.cancel_fn, ctypes.c_void_p)
        # the probes' values, copied out after each pass (the library's buffer is only lent)
        self.series: List[np.ndarray] = []
        if probes:
            self.probe_fn = _lib.PROBE(self._probe)
            self.hooks.probe = ctypes.cast(self.probe_fn, ctypes.c_void_p)

    def _probe(self, user: Any, first: int, count: int, values: Any, nprobes: int) -> int:
        try:
            self.series.append(np.ctypeslib.as_array(values, shape=(count, nprobes)).copy())
            return 0
        except BaseException as e:  # noqa: B902
            self.error = e
            return 1  # a failed status stops the run; the error is raised after it

    def probes(self) -> Optional[np.ndarray]:
        return np.concatenate(self.series) if self.series else None

    def _interrupted(self) -> bool:
        return self.interrupts is not None and self.interrupts.stop

    def _stop(self, done: int) -> int:
        self.stopped_at = done
        return 1

    def _call(self, user: Any, done: int, total: int) -> int:
        try:
            self.total = total
            if self._interrupted():
                return self._stop(done)
            if self.callback is not None and self.callback(done, total) is False:
                return self._stop(done)
            return self._stop(done) if self._interrupted() else 0
        except BaseException as e:  # noqa: B902 (an exception of the callback: stop the run, raise it after)
            self.error = e
            return self._stop(done)

    def _cancel(self, user: Any, done: int, total: int) -> int:
        # the SIGINT handler runs as this is entered (interrupts.stop then says so)
        try:
            self.total = total
            return self._stop(done) if self._interrupted() else 0
        except BaseException as e:  # noqa: B902
            self.error = e
            return self._stop(done)


class Plan:
    """A plan for a problem under options: ``Plan(problem, options)``.

    ``problem``: :class:`Problem`, a dict of problem-file keys, or a problem
    file's path; ``options``: :class:`Options`, a dict of [run] keys, or None
    (the file's, or automatic choices).  ``plan.info`` describes the plan
    (method, decomposition, height, pieces, device memory, counts, the
    model's predicted seconds) as a dict; ``plan.execute(u)`` advances ``u``
    in place."""

    def __init__(self, problem: Union[Problem, Mapping[str, Any], PathLike],
                 options: Union[Options, Mapping[str, Any], None] = None) -> None:
        self.problem = _problem_of(problem)
        if options is None and self.problem.options is not None:
            options = self.problem.options
        self.options = _options_of(options)
        self._h = ctypes.c_void_p()
        # Maxwell's monitors: the plan's copy of the problem points at spectra the plan object keeps
        self._spectra = ctypes.c_void_p()
        if self.problem.equation == "maxwell":
            check(lib.pyr_spectra_create(self.problem._h, ctypes.byref(self._spectra)))
            if lib.pyr_spectra_count(self._spectra) == 0:
                lib.pyr_spectra_destroy(ctypes.byref(self._spectra))
        try:
            if self._spectra:
                check(lib.pyr_spectra_attach(self.problem._h, self._spectra))
            check(lib.pyr_plan_create(self.problem._h, self.options._h, ctypes.byref(self._h)))
        except BaseException:
            if self._spectra:
                lib.pyr_spectra_destroy(ctypes.byref(self._spectra))
            raise
        finally:
            if self._spectra:
                lib.pyr_spectra_attach(self.problem._h, None)
        # the plan copied what it needs; shape and dtype are fixed from here
        self.shape = self.problem.shape
        self.dtype = self.problem.dtype
        self._fields = self.problem.fields
        self._state = self.problem.state_fields
        self._equation = self.problem.equation
        # the fields the plan works with (Maxwell's coefficients only where the material varies)
        self._used = {n: bool(lib.pyr_problem_field_used(self.problem._h, i)) for i, n in enumerate(self._fields)}
        self._parts = self.info["parts"] is not None

    def __reduce__(self) -> Any:
        raise TypeError("a pyrgrid.Plan holds the library's plan (and device memory) and is not copied or pickled: pass "
                        "its problem and options (plan.problem, plan.options: both pickle) and make the plan where it runs")

    def close(self) -> None:
        """Release the plan (also done when it is collected, or by a with block)."""
        if getattr(self, "_h", None):
            lib.pyr_plan_destroy(ctypes.byref(self._h))
        if getattr(self, "_spectra", None):
            lib.pyr_spectra_destroy(ctypes.byref(self._spectra))

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone already
            pass

    def __enter__(self) -> Plan:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def info(self) -> Dict[str, Any]:
        if not self._h:
            raise ArgumentError("the plan is closed")
        return json.loads(_lib.json_of(lib.pyr_plan_json, self._h))

    def __repr__(self) -> str:
        i = self.info
        return (f"<pyrgrid.Plan {i['method']} {i['decomposition']} height={i['height']} backend={i['backend']} "
                f"shape={self.shape} {self.dtype}>")

    def execute(self, u: Union[ArrayLike, Mapping[str, ArrayLike]], f: Optional[ArrayLike] = None, *,
                progress: Progress = None, copy: Optional[bool] = None) -> RunInfo:
        """Advance ``u`` (time layer 0, or the initial guess) in place by the
        problem's steps and return a :class:`RunInfo`.

        ``u`` must be a writable array of the plan's shape and dtype: a NumPy
        array (a ``numpy.memmap`` too), or any host buffer: an object with the
        buffer protocol (``array.array``, a memoryview over a ``bytearray`` or
        ``mmap``), with ``__array_interface__``, or with ``__dlpack__`` on the
        CPU; a 1-D buffer of as many elements as the grid's nodes is read in
        the grid's shape (C order).  C-contiguous, aligned ones are used
        without a copy (the library works on their memory, which holds the
        result); others are copied with a :class:`CopyWarning` and the result
        written back.  Read-only state arrays are refused (inputs may be
        read-only).  Arrays on a GPU (CuPy, PyTorch, Numba through
        ``__cuda_array_interface__``; JAX, PyTorch, CuPy through ``__dlpack__``
        on a CUDA device) are computed on in place, with no copy through the
        host, by an in-core plan (method naive, one device) of the CUDA
        backend on their GPU: the run first waits for the work the producer
        queued on its stream (the interface's ``stream``; DLPack's stream
        contract) and returns with the result in the array.  They must be
        float32/float64 as the plan computes (no conversion on the GPU).
        Where the plan cannot compute on them there (the CPU backend, an
        out-of-core plan, another GPU, several devices, an array that is not
        C-contiguous), ``copy=None`` (the default) copies them through host
        memory and back with a :class:`CopyWarning`, and ``copy=False``
        raises :class:`DeviceArrayError` (a ``BufferError``) saying why.
        GPU arrays are not scanned for NaN or infinities (that would need a
        copy to the host).  Schemes with several state fields (Maxwell)
        take a dict {name: array} of every field in ``problem.state_fields``
        (``problem.initial_fields()`` makes one), each updated in place; the
        dict may also hold inputs (Maxwell's ca, cb, dh; otherwise made from
        the problem: only those the plan keeps per node, as
        ``problem.fields`` and the material say; others are refused).
        ``f``: Poisson's right-hand side (None: the problem's).  Arrays must
        be finite, and no two may share memory where the run writes one.
        ``progress(steps_done, steps_total)`` is called between passes;
        returning False cancels the run (:class:`CancelledError`, with
        ``steps_done``); ``progress=True`` draws a :class:`ProgressBar` on
        stderr.  Maxwell's probes come back as ``info.probes``
        (steps x probes).

        Ctrl-C (SIGINT, with Python's handler or the caller's, in the main
        thread) stops the run and its KeyboardInterrupt is raised once the
        run has stopped: a naive (resident) run within a fraction of a
        second, a pyramid run at the end of its pass.  A stopped run leaves
        every array holding the time layer of the last step done, which the
        exception states (its note, or ``steps_done``); over several devices
        too, where a run stops only at the points where its parts meet (every
        part at the same step).  SIGINT's handler is the caller's again when
        execute returns."""
        if not self._h:
            raise ArgumentError("the plan is closed")
        if copy not in (None, False, True):
            raise ArgumentError(f"copy = {copy!r}: use None (copy GPU arrays through the host where the plan cannot compute "
                                f"on them in place) or False (raise BufferError instead)")
        callback = _progress_callable(progress, "sweeps" if self._equation == "poisson" else "steps")
        try:
            return self._execute(u, f, callback, copy)
        finally:
            if isinstance(callback, ProgressBar):
                callback.close()

    def _gpu_field(self, g: _GpuArray, name: str, copy: Optional[bool]) -> Optional[_Wrapped]:
        """A GPU array given as field ``name``: the library's field over it where this plan computes on it in place,
        or None where it is to be copied through the host (CopyWarning; copy=False: DeviceArrayError)."""
        state = self._fields[name]
        if g.dtype != self.dtype:
            raise DeviceArrayError(f"{name} lives on {g.where} as {g.dtype_name()}; the plan computes in {self.dtype}: pass "
                                   f"{name}.astype({self.dtype.name}) (and use the array returned) or make the problem with that "
                                   f"dtype", "PYR_ERR_UNSUPPORTED")
        if g.shape != tuple(self.shape):
            raise ArgumentError(f"{name} is a GPU array of shape {g.shape}; the plan's grid needs shape {tuple(self.shape)}")
        if state and g.readonly:
            raise ArgumentError(f"{name} is a read-only GPU array; the run updates it in place: pass a writable one")
        if not g.contiguous():
            why = f"it is not C-contiguous (strides {g.strides})"
        else:
            w = g.wrap()
            g.field = w  # released with the array
            status = lib.pyr_plan_takes_field(self._h, w.handle)
            if status == 0:
                return w
            why = _lib.last_error()
            w.__exit__()
        if copy is False:
            raise DeviceArrayError(f"{name} lives on {g.where}, and {why}; copy=None (the default) copies it through host "
                                   f"memory instead", "PYR_ERR_UNSUPPORTED")
        warn_copy(f"{name} lives on {g.where}, and {why}: copied through host memory (device -> host -> run"
                  + (" -> back)" if state else ")"))
        return None

    def _execute(self, u: Any, f: Any, progress: Optional[Callable[[int, int], Optional[bool]]],
                 copy: Optional[bool] = None) -> RunInfo:
        gpus: List[_GpuArray] = []
        try:
            return self._execute_fields(u, f, progress, copy, gpus)
        finally:
            for g in gpus:
                g.release()

    def _execute_fields(self, u: Any, f: Any, progress: Optional[Callable[[int, int], Optional[bool]]],
                        copy: Optional[bool], gpus: List[_GpuArray]) -> RunInfo:
        names = list(self._fields)
        given: Dict[str, Any]
        state = self._state
        if isinstance(u, dict):
            given = dict(u)
            inputs = [n for n in names if not self._fields[n] and n in _INPUTS]
            for name in given:
                if name not in state and name not in inputs:
                    raise ArgumentError(f"{name!r} is not a field of this {self._equation} problem; it updates {state}"
                                        + (f" and takes the inputs {inputs}" if inputs else ""))
            missing = [n for n in state if n not in given]
            if missing:
                raise ArgumentError(f"the {self._equation} problem updates {state}: {missing} missing from the dict "
                                    f"(problem.initial_fields() makes them all)")
            if f is not None:
                if "f" in given:
                    raise ArgumentError("f is given twice: in the dict and as f=")
                given["f"] = f
        else:
            if len(state) != 1:
                raise ArgumentError(f"the {self._equation} problem updates {len(state)} fields {state}: pass them as a dict "
                                    f"{{name: array}} (problem.initial_fields() makes one)")
            given = {state[0]: u}
            if f is not None:
                given["f"] = f
        if "f" in given and "f" not in names:
            raise ArgumentError(f"the {self._equation} scheme has no input field; leave f out")
        if self._equation == "poisson":
            from_caller = self.problem.get("rhs.kind") == "file" and self.problem.get("rhs.file") == _ARRAY
            if "f" in given and not from_caller:
                # the plan would not carry f (rhs zero) or would read its own: refuse rather than ignore the array
                raise ArgumentError(f"the problem's right-hand side is rhs.kind = {self.problem.get('rhs.kind')}; to pass f "
                                    f"as an array make the problem with rhs=\"array\"")
            if "f" not in given and from_caller:
                raise ArgumentError("the problem takes f from the caller (rhs=\"array\"): plan.execute(u, f)")
        for name in given:
            if not self._fields[name] and not self._used[name]:
                # the plan has no place for it: refuse rather than ignore the array
                raise ArgumentError(f"{name} is given, but this {self._equation} problem does not use it: "
                                    + _UNUSED_INPUT.get(name, "the plan makes no use of it") + f"; leave {name} out")
        arrays: List[Optional[np.ndarray]] = []
        backs: List[Tuple[np.ndarray, np.ndarray]] = []
        views: Dict[str, np.ndarray] = {}  # each given field as an array over the caller's memory
        on_gpu: Dict[str, _Wrapped] = {}  # GPU arrays the run computes on in place
        gpu_backs: List[Tuple[_GpuArray, np.ndarray, np.ndarray, np.ndarray]] = []  # (array, span, view, work)
        for name in names:
            where = _device_of(given[name]) if name in given else None
            if where is not None:
                g = _GpuArray(given[name], name, where)
                gpus.append(g)
                w = self._gpu_field(g, name, copy)
                if w is not None:
                    on_gpu[name] = w
                    arrays.append(None)
                    continue
                span, view = g.to_host()
                work = np.array(view, order="C")
                arrays.append(work)
                if self._fields[name]:
                    gpu_backs.append((g, span, view, work))
            elif name not in given:
                arrays.append(None)
            elif self._fields[name]:
                work, back = state_array(given[name], name, self.shape, self.dtype)
                arrays.append(work)
                views[name] = work if back is None else back
                if back is not None:
                    backs.append((work, back))
            else:
                views[name] = _host_array(given[name], name, self.shape, write=False)
                arrays.append(input_array(views[name], name, self.shape, self.dtype))
        _check_overlaps({n: views[n] for n in views}, self._fields)
        _check_gpu_overlaps({g.name: g for g in gpus}, self._fields)
        # arrays over the library's zero fields: the run takes the field itself (a GPU then sets it)
        zeros = [_zero_field(a) if self._fields[n] else None for a, n in zip(arrays, names)]
        for a, name, z in zip(arrays, names, zeros):
            if a is not None and not (z is not None and z.fresh):
                check_finite(a, name, "initial data" if self._fields[name] else "the run's inputs")
        for z in zeros:
            if z is not None:
                z.fresh = False  # the run writes it

        def write_back() -> None:
            for work, back in backs:
                back[...] = work
            for g, span, view, work in gpu_backs:
                view[...] = work
                g.from_host(span)
        wrapped: List[Any] = [on_gpu.get(n) if a is None else z if z is not None else _Wrapped(a, n)
                              for a, n, z in zip(arrays, names, zeros)]
        try:
            with _Interrupts() as interrupts:
                handles = (ctypes.c_void_p * len(names))(*[None if w is None else w.handle.value for w in wrapped])
                hooks = _Progress(progress, probes=self._equation == "maxwell", interrupts=interrupts)
                run = ctypes.create_string_buffer(max(lib.pyr_struct_size(b"pyr_run_info_t"), 64))
                status = lib.pyr_execute_fields(self._h, handles, len(names), ctypes.byref(hooks.hooks), run)
            message = _lib.last_error() if status else ""
            stopped = status == _CANCELLED and hooks.stopped_at is not None
            if stopped or (status == 0 and interrupts.stop):
                # stopped (or interrupted as it ended): the arrays hold the time layer of the last step
                # done, the count the library's message states (over several devices every part stops
                # at the point the hook was asked at, and its box goes back as at an end); copies are
                # written back as at an end
                done = hooks.stopped_at if stopped else json.loads(_lib.json_of(lib.pyr_run_info_json, run))["steps"]
                left = f"the arrays hold its time layer {done}"
                write_back()
                note = f"pyrgrid: the run stopped after {done} of {done if hooks.total is None else hooks.total} steps; {left}"
                if hooks.error is not None:
                    raise hooks.error
                interrupts.reraise(note)
                e = CancelledError(f"{message}; {left}", "PYR_ERR_CANCELLED")
                e.steps_done, e.steps_total = done, done if hooks.total is None else hooks.total
                raise e
            if hooks.error is not None:
                raise hooks.error
            interrupts.reraise(f"pyrgrid: the run failed as it was interrupted: {message}" if status else "")
            check(status)
            info = json.loads(_lib.json_of(lib.pyr_run_info_json, run))
        finally:
            for w in wrapped:
                if w is not None:
                    w.__exit__()
        write_back()
        checked = {n: views[n] for n in names if n in views and self._fields[n]}
        checked.update({g.name: work for g, _, _, work in gpu_backs})
        check_result(list(checked.values()), list(checked), info["steps"], self.dtype)
        return RunInfo(steps=info["steps"], checked=info["checked"], change=info.get("change"),
                       converged=info.get("converged", False), counts=info["counts"], parts=info["parts"],
                       exchange_height=info["exchange_height"], exchanges=info["exchanges"], halo_sent=info["halo_sent"],
                       halo_received=info["halo_received"], probes=hooks.probes(),
                       monitors=_read_spectra(self._spectra, len(self.shape)) if self._spectra else {},
                       host_memory=info.get("host_memory", "none"), pin_seconds=info.get("pin_seconds", 0.0),
                       unpin_seconds=info.get("unpin_seconds", 0.0), host_note=info.get("host_note", ""),
                       sweep_equivalents=info.get("sweep_equivalents", 0.0))


def _float_array(u0: ArrayLike, name: str) -> np.ndarray:
    """An array of float32 or float64 for a new result: those dtypes kept,
    others converted to float64 (with a warning for arrays).  Host buffers as
    _host_array reads them; GPU arrays refused."""
    a = _host_array(u0, name, (), write=False)
    if a.dtype in _PRECISION:
        return a
    if isinstance(u0, np.ndarray):
        warn_copy(f"{name} has dtype {a.dtype}; pyrgrid computes in float32 or float64: converted to float64")
    try:
        return a.astype(np.float64)
    except (TypeError, ValueError) as e:
        raise ArgumentError(f"{name} cannot be converted to float64 ({e})") from None


def _gpu_result(u0: Any, name: str, copy: Optional[bool]) -> Any:
    """A new array for heat's or poisson's result where ``u0`` lives on a GPU: a copy there made by its own
    library (PyTorch's clone, CuPy's copy), float32 or float64, which the run then updates in place; None
    where ``u0`` is a host array, or has no such copy (its values are then read into host memory, CopyWarning;
    copy=False raises DeviceArrayError)."""
    where = _device_of(u0)
    if where is None:
        return None
    for method in ("clone", "copy"):
        make = getattr(u0, method, None)
        if not callable(make):
            continue
        try:
            u = make()
        except Exception:  # another signature, or no copy there: try the next
            continue
        if _device_of(u) is not None and getattr(u, "dtype", None) is not None and str(u.dtype).split(".")[-1] in ("float32", "float64"):
            return u
    if copy is False:
        raise DeviceArrayError(f"{name} lives on {where[2]}, and pyrgrid cannot make a new array there for the result (no "
                               f"clone() or copy() of its library); copy=None (the default) computes on a host copy instead",
                               "PYR_ERR_UNSUPPORTED")
    return None


class _Shape:
    """What _grid_problem reads of an array (a GPU array's shape and dtype)."""

    def __init__(self, g: _GpuArray) -> None:
        self.ndim, self.shape, self.dtype = g.ndim, g.shape, g.dtype


def _gpu_shape(u: Any, name: str) -> _Shape:
    g = _GpuArray(u, name, _device_of(u))  # type: ignore[arg-type]
    try:
        return _Shape(g)
    finally:
        g.release()


def _grid_problem(equation: str, a: Any, lengths: Optional[Sequence[float]]) -> Problem:
    if not 1 <= a.ndim <= 3:
        raise ArgumentError(f"the initial field has {a.ndim} dimensions, shape {a.shape}; a grid has 1, 2 or 3")
    return Problem(equation, shape=a.shape, dtype=a.dtype, lengths=lengths, initial="zero")


def _split_options(options: Mapping[str, Any]) -> Options:
    keys = {}
    for k, v in options.items():
        if k not in _OPTION_KEYWORDS:
            raise _unknown(k, _OPTION_KEYWORDS + ("lengths", "progress"), "keywords")
        keys[k] = v
    return Options(**keys)


def heat(u0: ArrayLike, *, dt: float, steps: int, alpha: float = 1.0, lengths: Optional[Sequence[float]] = None,
         memory: Union[str, int] = "auto", backend: str = "auto", progress: Progress = None, copy: Optional[bool] = None,
         **options: Optional[Value]) -> npt.NDArray[np.floating]:
    """The explicit scheme of u_t = alpha^2 laplace(u) from ``u0`` for
    ``steps`` steps of ``dt``; returns a new array (``u0`` is not changed).

    ``u0``: 1-, 2- or 3-dimensional, NumPy order; its boundary values stay.
    float32 and float64 are kept, other dtypes become float64.  ``lengths``:
    the physical lengths per axis in the same order (default 1 each; h =
    L / (n - 1)).  ``memory``, ``backend`` and other keywords are [run] keys
    (method, decomposition, height, threads, device, plan, slots, kernel).
    ``u0`` must be finite: a NumPy array or any host buffer
    :meth:`Plan.execute` takes (it is copied: the result is new).
    ``progress``: a callable(steps_done, steps_total), or True for a
    progress bar on stderr.  Ctrl-C stops the run (KeyboardInterrupt; ``u0``
    is not changed), as in :meth:`Plan.execute`.  A ``u0`` on a GPU (CuPy,
    PyTorch) gives a new array there (its library's copy), computed on in
    place as :meth:`Plan.execute` does (``copy`` as there)."""
    u = _gpu_result(u0, "u0", copy)
    if u is None:
        u = np.array(_float_array(u0, "u0"), order="C", copy=True)
        check_finite(u, "u0")
    p = _grid_problem("heat", u if isinstance(u, np.ndarray) else _gpu_shape(u, "u0"), lengths)
    p.set("scheme.alpha", alpha).set("scheme.dt", dt).set("scheme.steps", steps)
    opts = _split_options(dict(options, memory=memory, backend=backend))
    with Plan(p, opts) as plan:
        plan.execute(u, progress=progress, copy=copy)
    return u


def poisson(u0: ArrayLike, f: Union[ArrayLike, str, None] = None, *, tolerance: Optional[float] = None,
            iterations: Optional[int] = None, check_every: int = 20, omega: float = 1.0,
            iteration: str = "jacobi", lengths: Optional[Sequence[float]] = None, boundary: Optional[Mapping[str, str]] = None,
            memory: Union[str, int] = "auto", backend: str = "auto",
            progress: Progress = None, copy: Optional[bool] = None,
            **options: Optional[Value]) -> Tuple[npt.NDArray[np.floating], RunInfo]:
    """Jacobi sweeps for -laplace(u) = f from the initial guess ``u0``, whose
    boundary values stay (Dirichlet) on the faces ``boundary`` does not make
    Neumann.  Returns ``(u, info)``: a new array and
    a :class:`RunInfo` (``info.sweeps``, ``info.change``, ``info.converged``).

    ``f``: an array of u0's shape (None: Laplace's equation, f = 0; "sine":
    the problem whose solution is prod sin(pi x_d / L_d)).  Stops at the
    first check (every ``check_every`` sweeps) where a sweep changes u by
    less than ``tolerance`` (max-norm), or after ``iterations`` sweeps (default
    1000000 when only a tolerance is given); at least one of them is
    needed.  Not converging is no error: ``info.converged`` says so.
    ``iteration``: "jacobi" (plain, or damped by ``omega``) or "chebyshev"
    (Chebyshev-accelerated Jacobi: O(N) sweeps instead of O(N^2) on N
    nodes per axis; in core and streamed through a memory budget alike, on
    one device: several devices refuse it; it takes omega = 1).
    ``boundary``: {face: kind} of the [boundary] section, faces "x-", "x+",
    "y-", "y+", "z-", "z+", kinds "dirichlet" (the default), "neumann" (zero
    flux) or "neumann G" (outward flux du/dn = G), e.g. {"x-": "neumann",
    "x+": "neumann 0.5"} (docs/poisson.md#neumann-and-mixed-boundaries).
    ``u0`` and ``f`` must be finite (host buffers as :meth:`Plan.execute`
    takes them; ``f`` is used in place).  ``progress``: a callable(sweeps
    done, most sweeps), or True for a progress bar on stderr.  Ctrl-C stops
    the run (KeyboardInterrupt; ``u0`` and ``f`` are not changed).  A ``u0``
    on a GPU gives a new array there, and ``f`` may live there too, as for
    :func:`heat` (``copy`` as in :meth:`Plan.execute`)."""
    if tolerance is None and iterations is None:
        raise ArgumentError("poisson needs a way to stop: tolerance=EPS (stop once a sweep changes u by less than EPS) "
                            "and/or iterations=N (the most sweeps)")
    u = _gpu_result(u0, "u0", copy)
    if u is None:
        u = np.array(_float_array(u0, "u0"), order="C", copy=True)
        check_finite(u, "u0")
    shaped: Any = u if isinstance(u, np.ndarray) else _gpu_shape(u, "u0")
    p = _grid_problem("poisson", shaped, lengths)
    p.set("scheme.iterations", 1000000 if iterations is None else iterations)
    p.set("scheme.check_every", check_every).set("scheme.omega", omega).set("scheme.iteration", iteration)
    if tolerance is not None:
        p.set("scheme.tolerance", tolerance)
    if boundary is not None:
        if not isinstance(boundary, Mapping):
            raise ArgumentError(f"boundary must be a dict {{face: kind}}, e.g. {{'x-': 'neumann', 'x+': 'neumann 0.5'}}, "
                                f"not {type(boundary).__name__} ({boundary!r})")
        for face, kind in boundary.items():
            p.set(f"boundary.{face}", kind)
    given = None
    if f is None:
        p.set("rhs.kind", "zero")
    elif isinstance(f, str):
        p.set("rhs.kind", f)
    else:
        # f is the caller's array (on a GPU: Plan.execute takes it there)
        given = f if _device_of(f) is not None else input_array(f, "f", shaped.shape, shaped.dtype)
        # the plan carries it, the library never reads the name
        p.set("rhs.kind", "file").set("rhs.file", _ARRAY)
    opts = _split_options(dict(options, memory=memory, backend=backend))
    with Plan(p, opts) as plan:
        info = plan.execute(u, given, progress=progress, copy=copy)
    return u, info


@dataclass
class FarField:
    """The far field of a closed surface of flux monitors
    (:meth:`MaxwellResult.farfield`): ``freqs`` (nfreq,); the directions
    ``theta``, ``phi`` (ndir,; 2D: theta None); ``power`` (nfreq, ndir), the
    power per unit solid angle (2D: per unit angle and depth), normalised as
    the flux monitors' P(f) so that its integral over the directions is the
    power out of the surface; with a distance r, ``E`` and ``H`` (nfreq, ndir,
    3) complex, the far fields' x, y, z components at r from node 0."""
    freqs: npt.NDArray[np.float64]
    theta: Optional[npt.NDArray[np.float64]]
    phi: npt.NDArray[np.float64]
    power: npt.NDArray[np.float64]
    E: Optional[np.ndarray] = None
    H: Optional[np.ndarray] = None


def _half_along(c: int, x: int) -> bool:
    return x == c if c < 3 else x != c - 3


def _axis_of(m: Monitor) -> int:
    """The axis (0, 1, 2) of a plane monitor."""
    if m.axis is None:
        raise ArgumentError(f"monitor {m.name} is not a plane: a far-field surface is made of flux planes")
    return "xyz".index(m.axis)


def _face_currents(m: Monitor, dims: int, sign: float) -> Tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    """A flux monitor's cells' centres (ncells, 3) and currents J = n x H, M = -n x E
    (nfreq, ncells, 3), its components averaged to the centres as its flux averages them."""
    a = _axis_of(m)
    nf = len(m.freqs)
    e = np.zeros((3, nf) + tuple(m.hi[b] - m.lo[b] for b in reversed(range(dims)) if b != a), dtype=np.complex128)
    h = np.zeros_like(e)
    for name, v in m.fields.items():
        c = _COMPONENTS.index(name)
        v = np.asarray(v)  # (nfreq, [nz,] ny, nx): NumPy axis 1 + dims - 1 - b is grid axis b
        for b in range(dims):
            ax = 1 + dims - 1 - b
            n = v.shape[ax]
            if b == a:
                v = 0.5 * (v.take([0], axis=ax) + v.take([1], axis=ax)) if _half_along(c, b) else v.take([1], axis=ax)
            elif not _half_along(c, b):
                v = 0.5 * (v.take(range(n - 1), axis=ax) + v.take(range(1, n), axis=ax))
            else:
                v = v.take(range(n - 1), axis=ax)
        v = v.squeeze(axis=1 + dims - 1 - a)
        (e if c < 3 else h)[c % 3] = v
    nrm = np.zeros(3)
    nrm[a] = sign
    e = e.reshape(3, nf, -1).transpose(1, 2, 0)
    h = h.reshape(3, nf, -1).transpose(1, 2, 0)
    j = np.cross(nrm, h)
    mm = -np.cross(nrm, e)
    return j, mm, a, nrm


class MaxwellResult(Dict[str, np.ndarray]):
    """The fields after a Maxwell run, {component: array} (the components of
    the grid's mode: 2D TM Ez, Hx, Hy; TE Ex, Ey, Hz; 3D all six), with

    - ``probes``: the probes' series, shape (steps, probes): row k holds each
      probe's value after step k + 1 (None without probes);
    - ``t``: the times of those rows, (k + 1) dt (E's; H is half a step earlier);
    - ``monitors``: the frequency-domain monitors by name ("dft1", "flux1"),
      each a :class:`Monitor` (freqs, fields, flux);
    - ``dt`` and ``info`` (a :class:`RunInfo`)."""

    def __init__(self, fields: Mapping[str, np.ndarray], info: RunInfo, dt: float, h: Tuple[float, ...] = (),
                 medium: Tuple[float, float, float] = (1.0, 1.0, 0.0)) -> None:
        super().__init__(fields)
        self.info = info
        self.dt = dt
        self.probes = info.probes
        self.monitors = info.monitors
        self.t = None if info.probes is None else (np.arange(len(info.probes), dtype=np.float64) + 1.0) * dt
        self.h = tuple(h)  # the grid's spacing along x, y (, z)
        self.medium = tuple(medium)  # the background's eps_r, mu_r, sigma

    def farfield(self, surface: Sequence[str], phi: ArrayLike, theta: Optional[ArrayLike] = None, r: Optional[float] = None) -> FarField:
        """The far field of the closed surface made of the flux monitors named in
        ``surface`` (the faces of one box: 3D six planes, 2D four lines, each
        spanning the box along its other axes, with the same frequencies) at the
        directions phi (from +x towards +y) and, in 3D, theta (from +z), radians;
        with ``r``, the fields E and H at that distance too.  As the library's
        pyr_spectra_farfield (docs/maxwell.md), in NumPy: the same values to
        rounding.  Returns a :class:`FarField`."""
        dims = len(self.h)
        if dims not in (2, 3):
            raise ArgumentError("farfield: the result has no grid spacing; it is made by pyrgrid.maxwell")
        names = list(surface)
        missing = [n for n in names if n not in self.monitors]
        if missing:
            raise ArgumentError(f"farfield: {missing} are not monitors of this run ({sorted(self.monitors)})")
        mons = [self.monitors[n] for n in names]
        if len(mons) != 2 * dims or len(set(names)) != len(names):
            raise ArgumentError(f"farfield: {len(names)} monitors for the surface; a closed surface of a {dims}D grid is {2 * dims} flux "
                                "monitors, the faces of a box (a pair of planes per axis)")
        for m in mons:
            if m.flux is None or m.axis is None:
                raise ArgumentError(f"farfield: {m.name} is not a flux monitor; the surface's faces are flux monitors (monitor.fluxN = plane ...)")
            if m.steps <= 0:
                raise ArgumentError(f"farfield: {m.name} holds no run's transforms")
            if len(m.freqs) != len(mons[0].freqs) or np.any(m.freqs != mons[0].freqs):
                raise ArgumentError(f"farfield: {m.name}'s frequencies differ from {mons[0].name}'s; give every face the same freqs=")
        planes: Dict[int, List[int]] = {}
        for m in mons:
            a = _axis_of(m)
            planes.setdefault(a, []).append(m.hi[a])
        if sorted(planes) != list(range(dims)) or any(len(v) != 2 or v[0] == v[1] for v in planes.values()):
            raise ArgumentError(f"farfield: the faces {names} are not two different planes per axis; a box has two per axis")
        box = {a: (min(v), max(v)) for a, v in planes.items()}
        for m in mons:
            a = _axis_of(m)
            for b in range(dims):
                if b != a and (m.lo[b], m.hi[b]) != box[b]:
                    raise ArgumentError(f"farfield: {m.name} spans nodes {m.lo[b]} .. {m.hi[b]} along {'xyz'[b]}, but the faces normal to "
                                        f"{'xyz'[b]} lie at nodes {box[b][0]} and {box[b][1]}; give each face the limits of the box so that "
                                        "the surface is closed")
        eps, mu, sigma = self.medium
        if sigma != 0 or eps <= 0 or mu <= 0:
            raise ArgumentError(f"farfield: the background is eps_r = {eps}, mu_r = {mu}, sigma = {sigma}; the far field is that of a "
                                "lossless background (sigma = 0, eps_r and mu_r > 0) around the surface")
        if (theta is None) != (dims == 2):
            raise ArgumentError("farfield: give theta for a 3D grid, and none for a 2D one (its far field lies in the grid's plane)")
        ph = np.atleast_1d(np.asarray(phi, dtype=np.float64))
        th = np.full_like(ph, np.pi / 2) if theta is None else np.broadcast_to(np.asarray(theta, dtype=np.float64), ph.shape)
        if ph.ndim != 1 or ph.size == 0 or not np.all(np.isfinite(ph)) or not np.all(np.isfinite(th)):
            raise ArgumentError("farfield: give one or more finite directions, in radians, as 1D arrays")
        if r is not None and not (np.isfinite(r) and r > 0):
            raise ArgumentError(f"farfield: the fields' distance r = {r}; give a finite r > 0 (or none for the power only)")
        freqs = mons[0].freqs
        index, eta = np.sqrt(eps * mu), np.sqrt(mu / eps)
        k = 2 * np.pi * freqs * index
        rhat = np.stack([np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph), np.cos(th)], axis=1)
        that = np.stack([np.cos(th) * np.cos(ph), np.cos(th) * np.sin(ph), -np.sin(th)], axis=1)
        phat = np.stack([-np.sin(ph), np.cos(ph), np.zeros_like(ph)], axis=1)
        N = np.zeros((len(freqs), len(ph), 3), dtype=np.complex128)
        L = np.zeros_like(N)
        for m in mons:
            a = _axis_of(m)
            j, mm, _, _ = _face_currents(m, dims, -1.0 if m.hi[a] == box[a][0] else 1.0)
            # the cells' centres in the grid's order (x fastest)
            axes = []
            dA = 1.0
            for b in range(dims):
                if b == a:
                    axes.append(np.array([m.hi[b] * self.h[b]]))
                else:
                    axes.append((np.arange(m.lo[b], m.hi[b]) + 0.5) * self.h[b])
                    dA *= self.h[b]
            grids = np.meshgrid(*axes, indexing="ij")
            pos = np.zeros((grids[0].size, 3))
            for b in range(dims):
                pos[:, b] = grids[b].transpose(tuple(reversed(range(dims)))).reshape(-1)
            w = np.exp(1j * k[:, None, None] * (pos @ rhat.T)[None]) * dA  # (nfreq, ncells, ndir)
            N += np.einsum("fcd,fca->fda", w, j)
            L += np.einsum("fcd,fca->fda", w, mm)
        Nt, Np = np.einsum("fda,da->fd", N, that), np.einsum("fda,da->fd", N, phat)
        Lt, Lp = np.einsum("fda,da->fd", L, that), np.einsum("fda,da->fd", L, phat)
        kk = k[:, None]
        E = H = None
        if dims == 3:
            power = kk ** 2 / (16 * np.pi ** 2 * eta) * (np.abs(Lp + eta * Nt) ** 2 + np.abs(Lt - eta * Np) ** 2)
            if r is not None:
                g = 1j * kk * np.exp(-1j * kk * r) / (4 * np.pi * r)
                et, ep = -g * (Lp + eta * Nt), g * (Lt - eta * Np)
                ht, hp = g * (Np - Lt / eta), -g * (Nt + Lp / eta)
                E = et[..., None] * that[None] + ep[..., None] * phat[None]
                H = ht[..., None] * that[None] + hp[..., None] * phat[None]
        else:
            A, B = eta * N[..., 2] - Lp, L[..., 2] + eta * Np
            power = kk / (8 * np.pi * eta) * (np.abs(A) ** 2 + np.abs(B) ** 2)
            if r is not None:
                c = np.sqrt(2 / (np.pi * kk * r)) * np.exp(-1j * (kk * r - np.pi / 4)) / 4j
                ez, hz = -1j * kk * c * A, -1j * kk * c * B / eta
                E = eta * hz[..., None] * phat[None]
                H = -(ez / eta)[..., None] * phat[None]
                E[..., 2], H[..., 2] = ez, hz
        return FarField(freqs=freqs.copy(), theta=None if dims == 2 else np.array(th), phi=ph, power=power, E=E, H=H)

    def plot_spectra(self, path: PathLike, monitors: Optional[Sequence[str]] = None, *, reference: Optional[MaxwellResult] = None,
                     title: Optional[str] = None, width: int = 0) -> None:
        """A PNG line plot of the flux monitors' power spectra P(f) (all of them, or those named in
        ``monitors``), one line per monitor with a legend, frequency on x; with ``reference`` (the empty
        run of the two-run recipe, docs/maxwell.md), each monitor's P / P0 of the reference's monitor of
        the same name (transmittance).  Drawn by the library's line plots (pyr_plot_write_png)."""
        from ._extra import _plot_spectra
        _plot_spectra(self, path, monitors, reference, title, width)


def maxwell(problem: Union[Shape, Problem, PathLike, Mapping[str, Any]], *, steps: Optional[int] = None,
            courant: Optional[float] = None, dt: Optional[float] = None, mode: Optional[str] = None,
            lengths: Optional[Sequence[float]] = None, dtype: DTypeLike = None, boundary: Optional[str] = None,
            cpml_cells: Optional[int] = None, periodic: Optional[str] = None, eps_r: Optional[float] = None, sigma: Optional[float] = None,
            mu_r: Optional[float] = None, shapes: Sequence[str] = (), sources: Sequence[Any] = (), probes: Sequence[Any] = (),
            monitors: Union[Mapping[str, Any], Sequence[Any], None] = None, keys: Optional[Keys] = None, initial: Optional[Mapping[str, ArrayLike]] = None,
            memory: Union[str, int, None] = None, backend: Optional[str] = None, progress: Progress = None,
            **options: Optional[Value]) -> MaxwellResult:
    """Maxwell's equations on the Yee grid (FDTD, MEEP's units: c = eps0 =
    mu0 = 1); returns a :class:`MaxwellResult` ({component: new array},
    ``.probes``, ``.t``, ``.dt``, ``.info``).

    ``problem``: a grid shape ((ny, nx) or (nz, ny, nx), NumPy order), a
    :class:`Problem` with ``equation="maxwell"``, a problem file's path (as
    ``pyrgrid run`` reads it, its [run] keys included) or a dict of
    problem-file keys.  Keywords set keys on top of it (a :class:`Problem`
    given is changed by them, as by ``problem.set``): ``steps``,
    ``courant`` (or ``dt``), ``mode`` ("tm" or "te", 2D), ``lengths``,
    ``dtype``; ``boundary`` ("pec" or "cpml") and ``cpml_cells``;
    ``periodic`` the periodic axes ("y", "x y"; boundary.periodic: the
    fields wrap, the period is n h along such an axis, no CPML there); the
    background ``eps_r``, ``sigma``, ``mu_r``; ``shapes``, ``sources`` and
    ``probes`` as lists of the problem file's values ("box 0.8 1.2 0.5 1.0
    eps_r=4", "Ez point 10 15 ricker frequency=2 delay=0.6", "Ez 30 15");
    ``monitors`` as {name: value} of the [monitor] section ({"flux1": "plane
    x 120 freqs=0.05:0.15:50", "dft1": "Ez point 40 30 freqs=0.1"}), their
    results in ``.monitors``; in place of the strings, objects:
    :class:`Source` and :class:`PlaneWave` in ``sources``, :class:`Probe` in
    ``probes``, :class:`DftRegion` and :class:`FluxRegion` in ``monitors``
    (a dict by name, or a list named dft1.., flux1.. in order), which make
    the same keys; ``keys`` any other problem-file keys.  ``initial``: {component: array}
    to start from (copied; None: the problem's initial fields, zero by
    default; host buffers as :meth:`Plan.execute` takes them).  ``memory``,
    ``backend`` and other keywords are [run] keys.  ``progress``: a
    callable(steps_done, steps_total), or True for a progress bar on stderr.
    Ctrl-C stops the run (KeyboardInterrupt; ``initial`` is not changed)."""
    if isinstance(problem, Problem):
        p = problem
    elif isinstance(problem, (str, os.PathLike, dict)):
        p = _problem_of(problem)
    else:
        try:
            shape = tuple(int(n) for n in problem)
        except TypeError:
            raise ArgumentError(f"problem must be a grid shape, pyrgrid.Problem, a problem file's path or a dict of keys, "
                                f"not {type(problem).__name__}") from None
        if len(shape) not in (2, 3):
            raise ArgumentError(f"shape {shape}: Maxwell's grids are 2D (ny, nx) or 3D (nz, ny, nx)")
        p = Problem("maxwell", shape=shape, dtype=np.float64 if dtype is None else dtype, lengths=lengths)
        dtype = lengths = None
    if p.equation != "maxwell":
        raise ArgumentError(f"the problem's equation is {p.equation}; pyrgrid.maxwell solves scheme.equation = maxwell")
    if lengths is not None:
        lengths = tuple(lengths)
        if len(lengths) != len(p.shape):
            raise ArgumentError(f"lengths {lengths} and shape {p.shape} have different numbers of axes")
        for axis, v in enumerate(reversed(lengths)):
            p.set("grid.l" + "xyz"[axis], v)
    if dtype is not None:
        dt_ = np.dtype(dtype)
        if dt_ not in _PRECISION:
            raise ArgumentError(f"dtype {dt_}: pyrgrid computes in float32 or float64")
        p.set("scheme.precision", _PRECISION[dt_])
    settings: Dict[str, Any] = {"scheme.steps": steps, "scheme.courant": courant, "scheme.dt": dt, "scheme.mode": mode, "boundary.kind": boundary,
                "boundary.cpml_cells": cpml_cells, "boundary.periodic": periodic, "material.eps_r": eps_r, "material.sigma": sigma, "material.mu_r": mu_r}
    if isinstance(shapes, str):
        raise ArgumentError(f"shapes must be a list of material values, not one string: [{shapes!r}]")
    for i, value in enumerate(shapes):
        settings[f"material.shape{i + 1}"] = value
    from ._extra import _maxwell_keys  # the objects (Source, Probe, PlaneWave, DftRegion, FluxRegion) live there
    settings.update(_maxwell_keys(sources, probes, monitors))
    settings.update(keys or {})
    for k, v in settings.items():
        if v is not None:
            p.set(k, v)
    opts = Options()
    if p.options is not None:
        # a copy of the file's [run] keys (the problem's own handle stays as it is)
        for k, v in p.options.to_dict().items():
            if v is not None and v != "":
                opts.set("run." + ("rows" if k == "piece" else k), v)
    for k, run_value in dict(options, memory=memory, backend=backend).items():
        if k not in _OPTION_KEYWORDS:
            raise _unknown(k, _OPTION_KEYWORDS + ("progress",), "keywords")
        if run_value is not None:
            opts.set("run." + k, run_value)
    fields = p._initial_fields(fresh=True)  # no one else sees them before the run
    if initial is not None:
        unknown = [k for k in initial if k not in fields]
        if unknown:
            raise ArgumentError(f"initial: {unknown} are not components of this grid's mode {tuple(fields)}")
        for name, given in initial.items():
            a = _host_array(given, f"initial[{name!r}]", fields[name].shape, write=False)
            if a.shape != fields[name].shape:
                raise ArgumentError(f"initial[{name!r}] is {_describe(a)}; the grid needs shape {fields[name].shape}")
            if _zero_field(fields[name]) is not None:
                fields[name] = np.empty(fields[name].shape, fields[name].dtype)  # all written here: plain memory
            fields[name][...] = a
    with Plan(p, opts) as plan:
        info = plan.execute(fields, progress=progress)
    dims = len(p.shape)
    spacing = tuple(float(p.get("grid.l" + "xyz"[a])) / (p.shape[dims - 1 - a] - 1) for a in range(dims))
    medium = tuple(float(p.get("material." + k)) for k in ("eps_r", "mu_r", "sigma"))
    return MaxwellResult(fields, info, p.dt, spacing, medium)  # type: ignore[arg-type]
