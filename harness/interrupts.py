"""Ctrl-C at a moment when stopping would leave something half-done: noted, acted on after.

A write on the target is one transaction (``probes/patching/patchops.py``); a KeyboardInterrupt in
the middle of waiting for it would leave the user not knowing whether the series is applied.
So while one runs, SIGINT only sets a flag; the command finishes the transaction, then says
in one line what state it left (:class:`harness.errors.Interrupted`, exit 130).
"""

from __future__ import annotations

import signal
import threading
from types import FrameType, TracebackType


class DeferInterrupts:
    """Within the ``with`` block, SIGINT sets :attr:`asked` instead of raising.

    Outside the main thread (where signal handlers cannot be set) it does nothing.
    """

    def __init__(self) -> None:
        self.asked = False
        self._previous: signal.Handlers | object | None = None
        self._installed = False

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        self.asked = True

    def __enter__(self) -> DeferInterrupts:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handler)
            self._installed = True
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)  # type: ignore[arg-type]
            self._installed = False
