"""A run's log as a byte stream from any offset, into a byte-exact local copy, surviving drops.

How bytes travel: the run directory's own ``supervisor.py follow RUN_DIR OFFSET`` reads the
log on the target and writes it to stdout, ending once the step's status exists and the log is
drained (or the supervisor is gone). Over SSH that stdout is a raw session channel read in
1 MiB gulps -- not Fabric's ``run()``, whose per-byte machinery is ~70x slower -- and on this
machine it is a pipe. Latency is the follower's poll at the end of the log (50 ms).

Why it survives: every byte received is written at its own offset into the local copy
(``pwrite``: two followers of one run write the same bytes to the same places), so after a
dropped link the stream simply restarts from the copy's size -- no gap, no duplicate. The
reconnect loop keeps trying for ``Timings.reconnect`` seconds.

This is the one module of ``harness.runs`` that does I/O of its own (a streaming exec is not
in the Target interface yet; see the report for the proposed ``Target.stream()``).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import ConnectError, HarnessError, RunError
from harness.targets import shell
from harness.targets.base import Target

STREAM_MARK = b"\x1eharness-follow\x1e\n"
END_MARK = b"\x1eharness-end "
RECV_CHUNK = 1 << 20
#: Receive window of the channel (see harness.targets.ssh.WINDOW_SIZE for why not larger).
WINDOW_SIZE = 2 * 1024 * 1024
#: Login-script noise allowed before the stream marker.
MAX_NOISE = 1 << 20
#: The end of the follower's stderr kept for its end report and error messages.
MAX_STDERR = 64 * 1024


class LinkLost(Exception):
    """The connection dropped mid-stream; the step is untouched and we can resume."""


# -- the local copy ------------------------------------------------------------------------


def copy_path(cache_root: Path, target_key: str, run_id: str) -> Path:
    """``~/.cache/harness/runs/<host>/<run-id>/log``."""
    return cache_root / "runs" / target_key / run_id / "log"


class LocalCopy:
    """The log on this machine, byte for byte: written at offsets, read back for display."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)

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


# -- byte sources --------------------------------------------------------------------------


class Source(ABC):
    """One follower process: its stdout bytes as they come, then its end report."""

    @abstractmethod
    def read(self, timeout: float) -> tuple[bytes, bool]:
        """Bytes received within ``timeout`` (maybe none) and whether the stream ended.

        Raises:
            LinkLost: the connection died before the follower finished.
        """

    @abstractmethod
    def stderr(self) -> bytes: ...

    @abstractmethod
    def close(self) -> None: ...


class SshSource(Source):
    """The follower on a raw session channel of the target's own SSH connection."""

    def __init__(self, target: Any, argv: list[str], connect_timeout: float) -> None:
        try:
            self._transport = target.transport()
            self._chan = self._transport.open_session(
                window_size=WINDOW_SIZE, timeout=connect_timeout
            )
            self._chan.exec_command(shell.command(argv))
            self._chan.shutdown_write()
        except HarnessError:
            raise
        except Exception as e:  # paramiko's words for a dead link vary
            raise LinkLost(str(e) or type(e).__name__) from e
        self._err = bytearray()

    def read(self, timeout: float) -> tuple[bytes, bool]:
        chan = self._chan
        try:
            if not (chan.recv_ready() or chan.recv_stderr_ready() or chan.eof_received):
                select.select([chan], [], [], timeout)
            data = chan.recv(RECV_CHUNK) if chan.recv_ready() else b""
            while chan.recv_stderr_ready():
                self._err += chan.recv_stderr(RECV_CHUNK)
                del self._err[:-MAX_STDERR]
        except Exception as e:
            raise LinkLost(str(e) or type(e).__name__) from e
        if data:
            return data, False
        if chan.eof_received and not chan.recv_ready():
            # EOF comes first, the exit status right after it. A channel that closes because
            # the link died also sets the status event, but leaves the status at -1.
            chan.status_event.wait(2.0)
            with contextlib.suppress(Exception):
                while chan.recv_stderr_ready():
                    self._err += chan.recv_stderr(RECV_CHUNK)
            if chan.exit_status_ready() and chan.exit_status >= 0:
                return b"", True
            raise LinkLost("the channel closed without an exit status")
        if chan.closed or not self._transport.is_active():
            raise LinkLost("the connection closed")
        return b"", False

    def stderr(self) -> bytes:
        return bytes(self._err)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._chan.close()


class LocalSource(Source):
    """The follower as a child process of this one (local and venv: targets)."""

    def __init__(self, argv: list[str]) -> None:
        try:
            self._proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        except OSError as e:
            raise RunError(f"cannot start {argv[0]}: {e.strerror or e}") from None
        assert self._proc.stdout is not None and self._proc.stderr is not None
        self._out, self._errf = self._proc.stdout.fileno(), self._proc.stderr.fileno()
        self._open = {self._out, self._errf}
        self._err = bytearray()

    def read(self, timeout: float) -> tuple[bytes, bool]:
        if not self._open:
            self._proc.wait()
            return b"", True
        ready, _, _ = select.select(list(self._open), [], [], timeout)
        data = b""
        for fd in ready:
            got = os.read(fd, RECV_CHUNK)
            if not got:
                self._open.discard(fd)
            elif fd == self._out:
                data = got
            else:
                self._err += got
                del self._err[:-MAX_STDERR]
        if not data and not self._open:
            self._proc.wait()
            return b"", True
        return data, False

    def stderr(self) -> bytes:
        return bytes(self._err)

    def close(self) -> None:
        if self._proc.poll() is None:
            with contextlib.suppress(OSError):
                self._proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=5)
        for f in (self._proc.stdout, self._proc.stderr):
            if f is not None:
                with contextlib.suppress(OSError):
                    f.close()


def follower_argv(
    target: Target, run_dir: str, offset: int, *, wait: bool, poll: float, lost_check: float
) -> list[str]:
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
    return argv if wait else [*argv, "--once"]


def open_source(target: Target, argv: list[str]) -> Source:
    from harness.targets.ssh import SshTarget

    if isinstance(target, SshTarget):
        return SshSource(target, argv, target.connect_timeout)
    return LocalSource(argv)


# -- following -----------------------------------------------------------------------------


@dataclass(frozen=True)
class StreamEnd:
    """How a follow ended: ``finished``, ``lost`` (supervisor gone), or ``eof`` (``--once``)."""

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
        open_stream: Callable[[int], Source],
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
        self.source: Source | None = None
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

    def _pump(self, src: Source, offset: int) -> StreamEnd:
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

    def _end(self, src: Source, offset: int, marked: bool) -> StreamEnd:
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
            raise RunError(f"the run's log is missing on the target: {report.get('error')}")
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
