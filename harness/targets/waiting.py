"""Saying what a long command is waiting for, while it waits."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from harness.targets.timeouts import MORE_TIME, PROGRESS_AFTER_S, PROGRESS_EVERY_S


@contextmanager
def waiting(label: Callable[[], str], what: str, timeout: float) -> Iterator[None]:
    """Say on stderr, after a few seconds and then now and again, what is being waited for,
    how long it may still take and how to allow more time; silent when it ends quickly."""
    done = threading.Event()
    start = time.monotonic()

    def tick() -> None:
        wait = PROGRESS_AFTER_S
        while not done.wait(wait):
            took = time.monotonic() - start
            sys.stderr.write(
                f"harness: waiting for {what} on {label()}: {took:.0f}s so far, gives up at "
                f"{timeout:g}s (Ctrl-C ends it there; {MORE_TIME})\n"
            )
            sys.stderr.flush()
            wait = PROGRESS_EVERY_S

    threading.Thread(target=tick, name="harness-waiting", daemon=True).start()
    try:
        yield
    finally:
        done.set()
