"""A probe's process started before its arguments are known, and a probe's early word.

``harness check`` reads the baseline (the callee version the caller was written for) with
what the caller's scan found, so its probe came after the scan's. Now the scan writes, early,
what the baseline needs to start (:class:`EarlyWord`); the baseline's interpreter then loads
its modules and reads the callee modules the caller imports while the scan runs on, and gets
its arguments on stdin when the scan has answered (:class:`Started`; ``probes/_boot.py``'s
``then``). Both only for a Python on this machine, where a file and a pipe are at hand.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.errors import TimedOut
from harness.targets.base import CommandResult, Target


def local_python(target: Target) -> list[str] | None:
    """The argv of ``target``'s interpreter when it runs here as a plain child process."""
    from harness.targets.local import LocalTarget

    return target.python_argv() if isinstance(target, LocalTarget) else None


class Started:
    """A Python process on this machine, its first stdin line written, the rest to come."""

    def __init__(self, argv: list[str], first: bytes) -> None:
        self.argv = argv
        self.begun = time.perf_counter()
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert self.proc.stdin is not None
        try:  # read at once by the bootstrap (a ~640 KB line)
            self.proc.stdin.write(first + b"\n")
            self.proc.stdin.flush()
        except OSError:
            self.cancel()
            raise

    @classmethod
    def start(cls, argv: list[str], first: bytes) -> Started | None:
        """None when it could not start or died before reading its first line."""
        try:
            return cls(argv, first)
        except OSError:  # no such interpreter, or a broken pipe: the caller runs it plainly
            return None

    def finish(self, rest: bytes, timeout: float | None) -> CommandResult:
        """Send the rest of stdin, close it, and wait for the process's output."""
        try:
            out, err = self.proc.communicate(rest, timeout=timeout)
        except BaseException as exc:  # Ctrl-C, or the time is up: it ends with us
            self.cancel()
            if not isinstance(exc, subprocess.TimeoutExpired):
                raise
            from harness.targets.timeouts import TIMEOUT_ENV

            raise TimedOut(
                f"{Path(self.argv[0]).name} did not finish in {timeout:g}s (it was killed)",
                f"allow more time if it is just slow: {TIMEOUT_ENV}=SECONDS for one command",
            ) from None
        took = time.perf_counter() - self.begun
        return CommandResult(tuple(self.argv), self.proc.returncode, out, err, took)

    def cancel(self) -> None:
        """End it (not needed after all, or given up on)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            with contextlib.suppress(OSError):
                if pipe is not None:
                    pipe.close()


class EarlyWord:
    """A file a probe writes once while it runs (renamed into place, so read whole): a thread
    looks for it every few milliseconds and hands its JSON to ``got``, until :meth:`stop`.
    ``got`` runs in that thread; what it raises is dropped (the caller does without)."""

    POLL_S = 0.004
    PREFIX = "harness-early-"

    def __init__(self, got: Callable[[dict[str, Any]], object]) -> None:
        sweep_stale(self.PREFIX)
        self.folder = tempfile.mkdtemp(prefix=f"{self.PREFIX}{os.getpid()}-")
        self.path = os.path.join(self.folder, "early.json")
        self._got = got
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="harness-early", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while True:
            stopping = self._done.is_set()  # one last look after the probe ended
            try:
                text = Path(self.path).read_text(encoding="utf-8")
            except FileNotFoundError:
                if stopping:
                    return
                self._done.wait(self.POLL_S)
                continue
            except OSError:
                return
            with contextlib.suppress(Exception):  # the caller does it after the probe instead
                self._got(json.loads(text))
            return

    def stop(self) -> None:
        """Wait for ``got`` (if it runs), and remove the file."""
        self._done.set()
        self._thread.join()
        shutil.rmtree(self.folder, ignore_errors=True)


def sweep_stale(prefix: str, root: str | None = None) -> None:
    """Remove the early-word folders of harness processes that are gone (one killed with
    SIGKILL mid-check cannot remove its own): ``PREFIX<pid>-*`` whose pid no longer runs."""
    base = root or tempfile.gettempdir()
    try:
        names = [n for n in os.listdir(base) if n.startswith(prefix)]
    except OSError:
        return
    for name in names:
        pid = name[len(prefix) :].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(os.path.join(base, name), ignore_errors=True)
        except OSError:  # alive under another user: not ours to sweep
            continue
