"""The probe worker on the far side of a kept SSH connection (``probes/zygote.py``).

The mux server starts it once with the target's Python; each probe is then a fork there
instead of a login shell plus an interpreter start -- on a box whose ``.bashrc`` runs
``pyenv init`` that is most of a probe's ~0.3 s. Any trouble (no such python, an old one, a
dead channel) marks the worker broken and the caller falls back to a plain exec, so errors
read exactly as they do without it.
"""

from __future__ import annotations

import contextlib
import select
import socket
import struct
import threading
import time
from typing import Any

from harness.targets import shell
from harness.targets.base import CommandResult

READY = b"\n@@HARNESS-ZYGOTE-READY@@\n"
START_S = 15.0


class WorkerBroken(Exception):
    """The worker cannot serve this request; run the probe the plain way."""


class Cancelled(Exception):
    """The client that asked for the probe hung up (Ctrl-C): the worker ended it there."""


def _watch(client: Any, cancel: Any) -> threading.Event:
    """Until the returned event is set: call ``cancel`` if ``client`` (a socket) hangs up."""
    done = threading.Event()

    def run() -> None:
        while not done.wait(0.2):
            try:
                ready, _, _ = select.select([client], [], [], 0)
                gone = bool(ready) and client.recv(1, socket.MSG_PEEK) == b""
            except (OSError, ValueError):
                gone = True
            if gone:
                cancel()
                return

    threading.Thread(target=run, name="harness-client-watch", daemon=True).start()
    return done


def _source() -> str:
    from harness.probe_runner import probes_dir

    return shell.NOT_PYTHON_GUARD + (probes_dir() / "zygote.py").read_text(encoding="utf-8")


class ProbeWorker:
    """One remote worker per connection; one request at a time (others go the plain way)."""

    def __init__(self, transport: Any, python: str) -> None:
        self.transport = transport
        self.python = python
        self.lock = threading.Lock()
        self.chan: Any = None
        self.broken = False
        self.cancelled = False

    def cancel(self) -> None:
        """End the running probe: closing the channel ends the worker, which ends its child."""
        self.cancelled = True
        chan = self.chan
        if chan is not None:
            with contextlib.suppress(Exception):
                chan.close()

    def _start(self) -> None:
        chan = self.transport.open_session()
        chan.exec_command(shell.command([self.python, "-B", "-u", "-c", _source()]))
        seen = b""
        deadline = time.monotonic() + START_S
        while READY not in seen:  # a noisy login may print first
            if time.monotonic() > deadline or (chan.exit_status_ready() and not chan.recv_ready()):
                chan.close()
                raise WorkerBroken("the probe worker did not start")
            ready, _, _ = select.select([chan], [], [], 0.2)
            if ready:
                chunk = chan.recv(65536)
                if not chunk:
                    chan.close()
                    raise WorkerBroken("the probe worker exited")
                seen = (seen + chunk)[-4096:]
        self.chan = chan

    def _recv(self, n: int, deadline: float | None) -> bytes:
        buf = b""
        while len(buf) < n:
            wait = 0.5 if deadline is None else max(0.0, min(0.5, deadline - time.monotonic()))
            if deadline is not None and time.monotonic() > deadline + 5.0:
                raise WorkerBroken("the probe worker stopped answering")
            ready, _, _ = select.select([self.chan], [], [], wait)
            if not ready:
                if self.chan.exit_status_ready() or not self.transport.is_active():
                    raise WorkerBroken("the probe worker is gone")
                continue
            chunk = self.chan.recv(min(n - len(buf), 1 << 20))
            if not chunk:
                raise WorkerBroken("the probe worker closed its output")
            buf += chunk
        return buf

    def call(
        self, code: str, stdin: bytes, timeout: float | None, client: Any = None
    ) -> CommandResult:
        """Run ``code`` with ``stdin`` in a fresh fork of the worker; exit code as a process.
        ``client``: the socket of whoever asked; when it hangs up, the probe is ended."""
        if self.broken or not self.lock.acquire(blocking=False):
            raise WorkerBroken("busy or broken")
        start = time.monotonic()
        watch = _watch(client, self.cancel) if client is not None else None
        try:
            if self.chan is None:
                self._start()
            raw = code.encode("utf-8")
            self.chan.sendall(
                struct.pack("!IId", len(raw), len(stdin), float(timeout or 0)) + raw + stdin
            )
            deadline = None if timeout is None else start + timeout
            status, n_out, n_err = struct.unpack("!iII", self._recv(12, deadline))
            out = self._recv(n_out, deadline)
            err = self._recv(n_err, deadline)
        except (WorkerBroken, OSError, EOFError) as e:
            self.close()
            self.broken = True
            if self.cancelled:
                raise Cancelled() from None
            raise WorkerBroken(str(e)) from None
        finally:
            if watch is not None:
                watch.set()
            self.lock.release()
        argv = (self.python, "-B", "-c", "<probe>")
        return CommandResult(argv, status, out, err, time.monotonic() - start)

    def close(self) -> None:
        if self.chan is not None:
            with contextlib.suppress(Exception):  # closing a dead channel is not news
                self.chan.close()
            self.chan = None
