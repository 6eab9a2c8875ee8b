"""A warm check's gate: started with the step, it waits here until the supervisor says ``go``.

The supervisor (``probes/runs/_verify.py``) starts a shipped check whose source names
``HARNESS_VERIFY_GATE`` beside the step, with that variable naming a pipe only the check holds.
The check loads its libraries first (the ~15 s of torch/transformers imports overlap the step),
then calls :func:`wait_for_go`: ``go SECRET`` -- the step exited 0, its leftovers are ended, the
shipped checks are as launched -- means check now; end of file means the step failed or was
stopped, and the check leaves without a word. Run by hand (no variable) it goes at once.

Why a secret: any process of the same user can open the pipe through ``/proc/PID/fd/N`` and
write ``go`` -- the step itself, to have its outputs judged at a moment it picks. The
supervisor's secret exists only in the supervisor until it says ``go``, and the report must
carry it back (:func:`stamp`): a report answering another ``go`` is refused, not believed.
"""

from __future__ import annotations

import os
import select
from collections.abc import Callable
from typing import Any

GATE_ENV = "HARNESS_VERIFY_GATE"
#: The report's key for the secret that came with ``go`` (the supervisor takes it out)
GO_KEY = "go"
_said: list[str] = []  # the secret of the ``go`` this check answered
#: seconds the gate sleeps when ``meanwhile`` has nothing to do
IDLE = 1.0


def wait_for_go(meanwhile: Callable[[], bool] | None = None) -> bool:
    """Block until the supervisor's word: True for ``go``, False for anything else or EOF.
    ``meanwhile()`` does one piece of work while no word has come (True: it did some; False:
    none waits, ask again in :data:`IDLE` s); it stops at the word, and at its first error."""
    fd = os.environ.pop(GATE_ENV, None)
    if not fd:
        return True
    got, busy = b"", True
    try:
        while not got.endswith(b"\n"):
            if (
                meanwhile is not None
                and not select.select([int(fd)], [], [], 0 if busy else IDLE)[0]
            ):
                try:
                    busy = meanwhile()
                except Exception:  # best effort: the check after go does it all
                    meanwhile = None
                continue
            chunk = os.read(int(fd), 64)
            if not chunk:
                return False
            got += chunk
    finally:
        os.close(int(fd))
    word, _, secret = got.strip().partition(b" ")
    if word != b"go":
        return False
    _said.append(secret.decode("ascii", "replace"))
    return True


def stamp(report: dict[str, Any]) -> dict[str, Any]:
    """The report with the secret of the ``go`` it answers (none when run by hand)."""
    return {**report, GO_KEY: _said[-1]} if _said else report
