"""Ctrl-C (SIGINT) during a long call into libpyrgrid.

Python runs a signal's handler only in the main thread, between bytecodes:
while the library computes, that is only inside a callback of the run.
There a KeyboardInterrupt would escape before any ``try`` of the callback,
ctypes would print it as ignored, and the run would go on to its end.  So
for the call, SIGINT's handler is replaced by one that runs the caller's
handler and keeps what it raises; the run's callbacks see ``stop`` and end
the run, and the call raises the kept exception once the library has
returned.  The caller's handler is back in place by then.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType
from typing import Any, Callable, Optional


class Interrupts:
    """A ``with`` block around a run: ``stop`` once the caller's SIGINT
    handler raised (Python's default raises KeyboardInterrupt), ``raised``
    the exception.  Off the main thread (no signal reaches it), or where
    SIGINT's handler is not Python's (SIG_IGN, SIG_DFL, a C handler), the
    handler is left as it is and ``active`` is False."""

    def __init__(self) -> None:
        self.raised: Optional[BaseException] = None
        self.previous: Optional[Callable[[int, Optional[FrameType]], Any]] = None
        self.active = False

    @property
    def stop(self) -> bool:
        return self.raised is not None

    def _handler(self, signum: int, frame: Optional[FrameType]) -> None:
        # never raises: it runs inside the run's callbacks, where an exception would be lost
        try:
            if self.previous is not None:
                self.previous(signum, frame)
        except BaseException as e:  # noqa: B902 (KeyboardInterrupt above all)
            if self.raised is None:
                self.raised = e

    def __enter__(self) -> Interrupts:
        if threading.current_thread() is threading.main_thread():
            previous = signal.getsignal(signal.SIGINT)
            if callable(previous):
                self.previous = previous
                signal.signal(signal.SIGINT, self._handler)
                self.active = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self.active and self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
            self.active = False

    def reraise(self, note: str) -> None:
        """Raise the kept exception (if any), with a note on what the run left."""
        if self.raised is None:
            return
        e = self.raised
        self.raised = None
        if note and hasattr(e, "add_note"):
            e.add_note(note)
        raise e
