"""While a step that declared a disk budget runs, its output filesystem watched: at 90 %
full its log says so once, with the space left and the rate it fills at (and so roughly
when it is full) -- an hours-long generate that will run out says it while there is time.

Part of the run program (see :mod:`probes.runs.supervisor`), copied into every run directory.
Stdlib only; a daemon thread of the supervisor.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

#: the share of the filesystem in use at which the log says so
FULL_AT = 0.9
#: seconds between two looks (statvfs is cheap)
POLL = 1.0


def _nearest(path: str) -> str:
    path = os.path.abspath(path)
    while not os.path.exists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    return path


def _mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB"


def look(path: str) -> tuple[int, int]:
    """(bytes available to the step, bytes the filesystem holds) of ``path``'s filesystem."""
    st = os.statvfs(_nearest(path))
    return st.f_bavail * st.f_frsize, st.f_blocks * st.f_frsize


def words(path: str, free: int, total: int, rate: float) -> str:
    """``harness: /data's filesystem is 93% full: 12.0 MB left, filling at 2.0 MB/s (full
    in ~6 s)``."""
    used = 1.0 - free / total if total else 1.0
    when = f" (full in ~{free / rate:.0f} s)" if rate > 0 else ""
    return (f"harness: {path}'s filesystem is {used:.0%} full: {_mb(free)} left, filling at "
            f"{_mb(rate)}/s{when}")  # fmt: skip


def watch(path: str, say: Callable[[str], None], poll: float = POLL) -> Any:
    """Start the watch (a daemon thread: it ends with the supervisor)."""
    import threading  # here: a run that declares no budget does not import it

    def run() -> None:
        first: tuple[int, float] | None = None
        while True:
            try:
                free, total = look(path)
            except OSError:
                return
            now = time.monotonic()
            first = first or (free, now)
            if total and 1.0 - free / total >= FULL_AT:
                took = now - first[1]
                rate = (first[0] - free) / took if took > 0 else 0.0
                say(words(path, free, total, rate))
                return
            time.sleep(poll)

    t = threading.Thread(target=run, name="harness-fill", daemon=True)
    t.start()
    return t
