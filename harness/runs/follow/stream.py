"""A run's log as a byte stream from any offset, into a byte-exact local copy, surviving drops.

How bytes travel: the run directory's own ``supervisor.py follow RUN_DIR OFFSET`` reads the
log on the target and writes it to stdout, ending once the step's status exists and the log is
drained (or the supervisor is gone). Latency is the follower's poll at the end of the log
(50 ms).

Why it survives: every byte received is written at its own offset into the local copy
(``pwrite``: two followers of one run write the same bytes to the same places), so after a
dropped link the stream simply restarts from the copy's size -- no gap, no duplicate. The
reconnect loop keeps trying for ``Timings.reconnect`` seconds.

The bytes come from :meth:`harness.targets.base.Target.stream` (a child process here, a
session channel over SSH, or the kept connection's relay of one), so this module does no I/O
of its own beyond the local copy.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import ConnectError, RunError
from harness.targets.base import ByteStream, LinkLost, Target

STREAM_MARK = b"\x1eharness-follow\x1e\n"
END_MARK = b"\x1eharness-end "
#: Login-script noise allowed before the stream marker.
MAX_NOISE = 1 << 20


# -- the local copy ------------------------------------------------------------------------


def copy_path(cache_root: Path, target_key: str, run_id: str) -> Path:
    """``~/.cache/harness/runs/<host>/<run-id>/log``."""
    return cache_root / "runs" / target_key / run_id / "log"


class LocalCopy:
    """The log on this machine, byte for byte: written at offsets, read back for display."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:  # a read-only HOME, a full disk: one line, not a traceback
            raise RunError(
                f"the run's log cannot be copied to {path.parent} on this machine "
                f"({e.strerror or type(e).__name__})",
                "set HARNESS_CACHE to a folder you can write",
            ) from None

    @property
    def size(self) -> int:
        return os.fstat(self._fd).st_size

    def write_at(self, offset: int, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = os.pwrite(self._fd, view, offset)
            view, offset = view[n:], offset + n

    def read(self, offset: int, length: int) -> bytes:
        return os.pread(self._fd, length, offset)

    def truncate(self, size: int) -> None:
        os.ftruncate(self._fd, size)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)


#: Beside a local copy once harness saw its run end with the copy whole: the size and the run.
COMPLETE = "complete.json"


def mark_complete(path: Path, size: int, run: dict[str, Any]) -> None:
    """Note that the copy at ``path`` holds the whole log of an ended run (``size`` bytes)."""
    marker = path.parent / COMPLETE
    tmp = marker.with_suffix(f".tmp{os.getpid()}")
    with contextlib.suppress(OSError):
        tmp.write_text(json.dumps({"size": size, "run": run}))
        os.replace(tmp, marker)


def complete_copy(path: Path) -> dict[str, Any] | None:
    """The marker of a local copy that still holds the whole log of its run, else None."""
    try:
        marker = json.loads((path.parent / COMPLETE).read_text())
        whole = int(marker["size"]) == path.stat().st_size
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return marker if whole and isinstance(marker.get("run"), dict) else None


def follower_argv(
    target: Target,
    run_dir: str,
    offset: int,
    *,
    wait: bool,
    poll: float,
    lost_check: float,
    until_ready: bool = False,
) -> list[str]:
    """The run program's ``follow``; ``until_ready``: a service's start, which ends once it
    is ready (or over)."""
    argv = [
        *target.python_argv(),
        "-B",
        run_dir.rstrip("/") + "/supervisor.py",
        "follow",
        run_dir,
        str(offset),
        "--poll",
        repr(poll),
        "--lost-check",
        repr(lost_check),
    ]
    if until_ready:
        argv.append("--until-ready")
    return argv if wait else [*argv, "--once"]


def early_follower_argv(
    target: Target, run_dir: str, *, wait: float, poll: float, lost_check: float
) -> list[str]:
    """The follower of a run still being launched (``probes/runs/_await.py``): it waits up
    to ``wait`` seconds for the run's handshake, then is the run program's ``follow`` from
    offset 0 (:func:`follower_argv`), in one process; it leaves once nobody reads it."""
    from harness.probe_files import await_source

    source = await_source()
    return [
        *target.python_argv(),
        "-B",
        "-c",
        source,
        run_dir.rstrip("/"),
        repr(wait),
        "0",
        "--poll",
        repr(poll),
        "--lost-check",
        repr(lost_check),
    ]


# -- following -----------------------------------------------------------------------------


class LogGone(RunError):
    """The run's log file is not on the target (any more)."""


@dataclass(frozen=True)
class StreamEnd:
    """How a follow ended: ``finished``, ``lost`` (supervisor gone), ``eof`` (``--once``), or
    ``ready`` (a service's start followed ``until_ready``)."""

    reason: str
    size: int
    facts: dict[str, Any] | None = None


class Follower:
    """Copy a run's log into a :class:`LocalCopy`, reconnecting until the run is over.

    Args:
        open_stream: starts a follower at a byte offset (tests pass their own).
        on_bytes: called with ``(offset, data)`` after new bytes landed in the copy.
        on_idle: called at least every ``tick`` seconds (elapsed-time refresh).
        on_link: told ``"lost"``/``"back"`` when the link drops and returns.
        reconnect: seconds to keep trying after a drop before giving up.
    """

    def __init__(
        self,
        open_stream: Callable[[int], ByteStream],
        copy: LocalCopy,
        *,
        on_bytes: Callable[[int, bytes], None] = lambda offset, data: None,
        on_idle: Callable[[], None] = lambda: None,
        on_link: Callable[[str, str], None] = lambda what, why: None,
        reconnect: float = 600.0,
        tick: float = 0.1,
    ) -> None:
        self.open_stream = open_stream
        self.copy = copy
        self.on_bytes, self.on_idle, self.on_link = on_bytes, on_idle, on_link
        self.reconnect = reconnect
        self.tick = tick
        self.source: ByteStream | None = None
        self._lost_since: float | None = None

    def run(self) -> StreamEnd:
        """Follow until the follower reports the end; reconnect after each drop.

        Each drop gets its own ``reconnect`` window, counted from that drop: a link that
        comes back resets it, so a run followed for days survives many short outages.
        """
        self._lost_since = None
        delay = 0.25
        while True:
            offset = self.copy.size
            try:
                self.source = self.open_stream(offset)
                return self._pump(self.source, offset)
            except (LinkLost, ConnectError) as e:
                why = e.message if isinstance(e, ConnectError) else str(e)
                now = time.monotonic()
                if self._lost_since is None:
                    self._lost_since = now
                    delay = 0.25
                    self.on_link("lost", why)
                if now - self._lost_since >= self.reconnect:
                    raise ConnectError(
                        f"lost the link and could not reconnect for {self.reconnect:g}s: {why}"
                    ) from None
                self._sleep(min(delay, max(0.0, self._lost_since + self.reconnect - now)))
                delay = min(delay * 2, 5.0)
            finally:
                if self.source is not None:
                    self.source.close()
                    self.source = None

    def _back(self) -> None:
        """The stream is flowing again after a drop (its marker arrived)."""
        if self._lost_since is not None:
            self._lost_since = None
            self.on_link("back", "")

    def _pump(self, src: ByteStream, offset: int) -> StreamEnd:
        noise = bytearray()
        marked = False
        last_idle = time.monotonic()
        while True:
            data, ended = src.read(self.tick)
            if data and not marked:
                noise += data
                idx = noise.find(STREAM_MARK)
                if idx < 0:
                    if len(noise) > MAX_NOISE:
                        raise RunError("the log follower's output did not start with its marker")
                    data = b""
                else:
                    data, marked = bytes(noise[idx + len(STREAM_MARK) :]), True
                    noise.clear()
                    self._back()
            if data:
                self.copy.write_at(offset, data)
                self.on_bytes(offset, data)
                offset += len(data)
            now = time.monotonic()
            if now - last_idle >= self.tick:
                last_idle = now
                self.on_idle()
            if ended:
                return self._end(src, offset, marked)

    def _end(self, src: ByteStream, offset: int, marked: bool) -> StreamEnd:
        err = src.stderr()
        idx = err.rfind(END_MARK)
        if idx < 0 or not marked:
            tail = err.decode("utf-8", "replace").strip().splitlines()[-3:]
            raise RunError(
                "the log follower stopped without an end report: "
                + (" | ".join(tail) or "no output"),
                "is the run directory still there? see harness runs",
            )
        line = err[idx + len(END_MARK) :].split(b"\n", 1)[0]
        try:
            report = json.loads(line)
        except ValueError:
            raise RunError("the log follower's end report is garbled") from None
        if report.get("reason") == "no-log":
            raise LogGone(f"the run's log is missing on the target: {report.get('error')}")
        if int(report.get("size", offset)) != offset:
            raise LinkLost("the stream ended short of the follower's count")
        return StreamEnd(str(report.get("reason")), offset, report.get("facts"))

    def _sleep(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(left, self.tick))
            self.on_idle()
