"""Exceptions: one class per status code of the library, all under
:class:`pyrgrid.Error`, each carrying the library's message (what is wrong,
the limit, what would work).  Classes also derive from the built-in
exception a Python caller would expect (``ValueError`` for bad arguments
and settings, ``OSError`` for files, ``MemoryError``...)."""

from __future__ import annotations

import warnings
from typing import Optional


class Error(Exception):
    """A failure reported by libpyrgrid (or by this module before calling it).

    ``status`` is the library's status name ("PYR_ERR_BUDGET"), ``message``
    its detail."""

    status: str = "PYR_ERR_INTERNAL"

    def __init__(self, message: str, status: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status


class ArgumentError(Error, ValueError, TypeError):
    """An argument the call cannot take: wrong dtype, shape, a read-only or
    unusable array, an unknown keyword (also a ValueError and a TypeError)."""
    status = "PYR_ERR_ARG"


class ConfigError(Error, ValueError):
    """A setting (problem key, option) that is malformed or out of range."""
    status = "PYR_ERR_CONFIG"


class SizeError(Error, ValueError):
    """A grid size that cannot be solved (too few nodes, too large)."""
    status = "PYR_ERR_SIZE"


class UnstableError(Error, ValueError):
    """A time step above the explicit scheme's stability limit."""
    status = "PYR_ERR_UNSTABLE"


class FileError(Error, OSError):
    """A file that could not be read or written."""
    status = "PYR_ERR_IO"


class FormatError(Error, ValueError):
    """A malformed input file (.npy, HDF5, FITS, wisdom)."""
    status = "PYR_ERR_FORMAT"


class OutOfMemoryError(Error, MemoryError):
    """Out of host memory."""
    status = "PYR_ERR_NOMEM"


class BudgetError(Error, ValueError):
    """A device memory budget too small for any piece (the message names the smallest that works)."""
    status = "PYR_ERR_BUDGET"


class NoDeviceError(Error, RuntimeError):
    """No usable GPU for backend = cuda."""
    status = "PYR_ERR_NODEVICE"


class DeviceError(Error, RuntimeError):
    """A GPU error."""
    status = "PYR_ERR_DEVICE"


class DeviceMemoryError(DeviceError):
    """Out of GPU memory."""
    status = "PYR_ERR_DEVICE_NOMEM"


class UnsupportedError(Error, NotImplementedError):
    """Not supported by this build or backend."""
    status = "PYR_ERR_UNSUPPORTED"


class DeviceArrayError(UnsupportedError, BufferError):
    """An array on a GPU (``__cuda_array_interface__``, or a DLPack device
    other than the CPU) that the run cannot take: ``copy=False`` where the
    plan cannot compute on it in place (the CPU backend, an out-of-core
    plan, another GPU), a library that cannot reach GPU memory, a dtype the
    plan does not compute in.  The message says why and what would work.
    Also a ``BufferError``, as DLPack's consumers raise when they cannot take
    a buffer without a copy."""
    status = "PYR_ERR_UNSUPPORTED"


class NumericError(Error, ArithmeticError):
    """A numerical failure (a zero pivot, ...)."""
    status = "PYR_ERR_NUMERIC"


class DivergedError(Error, ArithmeticError):
    """An iteration diverged or stagnated."""
    status = "PYR_ERR_DIVERGED"


class CancelledError(Error):
    """A run stopped by its progress callback (``steps_done`` of
    ``steps_total``, where the run says)."""
    status = "PYR_ERR_CANCELLED"
    steps_done: Optional[int] = None
    steps_total: Optional[int] = None


class InternalError(Error, RuntimeError):
    """A failure inside the library that no input explains."""
    status = "PYR_ERR_INTERNAL"


class CopyWarning(UserWarning):
    """An array was copied or converted instead of being used in place."""


class NotConvergedWarning(UserWarning):
    """An iteration stopped at its most iterations above its tolerance."""


_BY_STATUS = {c.status: c for c in (ArgumentError, ConfigError, SizeError, UnstableError, FileError, FormatError,
                                     OutOfMemoryError, BudgetError, NoDeviceError, DeviceError, DeviceMemoryError,
                                     UnsupportedError, NumericError, DivergedError, CancelledError, InternalError)}


def error_for(status_name: str, message: str) -> Error:
    """The exception of a library status, carrying its message."""
    return _BY_STATUS.get(status_name, Error)(message, status_name)


def warn_copy(message: str) -> None:
    warnings.warn(message, CopyWarning, stacklevel=4)
