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
#: How long a worker may take to start when the probe has no timeout of its own.
START_S = 15.0
#: How long killing a worker that never started may take (a second session there).
KILL_WAIT_S = 5.0
#: How long to wait for a worker's pid line when it must be killed before it was read.
PID_WAIT_S = 2.0


class WorkerBroken(Exception):
    """The worker cannot serve this request; run the probe the plain way."""


class StartTimedOut(WorkerBroken):
    """The worker did not start within the probe's time (an interpreter hung at start-up);
    it was killed there, with its children."""


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
    from harness.probe_files import zygote_source

    return shell.NOT_PYTHON_GUARD + zygote_source()


class ProbeWorker:
    """One remote worker per connection; one request at a time (others go the plain way)."""

    def __init__(self, transport: Any, python: str) -> None:
        self.transport = transport
        self.python = python
        self.lock = threading.Lock()
        self.chan: Any = None
        self.broken = False
        self.cancelled = False
        #: the worker's pid there, also its process group's (sshd starts a session with
        #: ``setsid``): what is killed when it does not start, or is dropped while starting
        self.pid: int | None = None
        self.ready = False
        self._killing = threading.Lock()

    def cancel(self) -> None:
        """End the running probe: closing the channel ends a ready worker, which ends its
        child. A worker still starting (an interpreter hung at start-up) is killed there by
        the start in progress, which sees this within 0.2 s (:meth:`settle` waits for it)."""
        self.cancelled = True
        chan = self.chan
        if chan is not None and self.ready:
            with contextlib.suppress(Exception):
                chan.close()

    def kill(self) -> None:
        """SIGKILL the worker's process group there (best effort, a few seconds at most)."""
        from harness.targets.ssh.channel import kill_group

        with self._killing:  # a second caller waits until the first one's kill is done
            pid, self.pid = self.pid, None
            kill_group(self.transport, pid, KILL_WAIT_S)

    def _start(self, deadline: float) -> None:
        """Start the worker and wait for its READY line until ``deadline``.

        Raises:
            WorkerBroken: it exited (no such python, an old one).
            StartTimedOut: no READY by ``deadline``; the worker was killed with its children.
        """
        chan = self.transport.open_session()
        self.chan = chan  # reachable by cancel() while it starts
        argv = [self.python, "-B", "-u", "-c", _source()]
        chan.exec_command(shell.command(argv, exec_=True, report_pid=True))
        seen, err = b"", b""
        while READY not in seen:  # a noisy login may print first
            while chan.recv_stderr_ready():  # its pid, then whatever a login script says
                err = (err + chan.recv_stderr(65536))[-4096:]
                if self.pid is None:
                    self.pid = shell.split_pid(err)[0]
            got = chan.recv_ready()
            if got:
                seen = (seen + chan.recv(65536))[-4096:]
                if READY in seen:
                    break
            elif chan.eof_received or chan.exit_status_ready():
                chan.close()
                self.pid = None  # gone: nothing there to kill
                raise WorkerBroken("the probe worker did not start")
            if time.monotonic() > deadline or self.cancelled:
                self._await_pid(chan, err)
                chan.close()
                self.kill()
                raise StartTimedOut("the probe worker did not start in time")
            if not got:
                select.select([chan], [], [], 0.2)  # stdout or stderr: the loop tells which
        self.ready = True

    def _await_pid(self, chan: Any, err: bytes) -> None:
        """Give the worker's pid line (printed before the interpreter starts) a moment to
        arrive: without it there is nothing to kill."""
        until = time.monotonic() + PID_WAIT_S
        while self.pid is None and time.monotonic() < until and not chan.closed:
            if chan.recv_stderr_ready():
                err = (err + chan.recv_stderr(65536))[-4096:]
                self.pid = shell.split_pid(err)[0]
            else:
                time.sleep(0.02)

    def settle(self, wait: float) -> None:
        """Wait (``wait`` s at most) for the call in progress, if any, to finish (its kill)."""
        if self.lock.acquire(timeout=wait):
            self.lock.release()

    def _recv(self, n: int, deadline: float | None) -> bytes:
        buf = b""
        while len(buf) < n:
            wait = 0.5 if deadline is None else max(0.0, min(0.5, deadline - time.monotonic()))
            if deadline is not None and time.monotonic() > deadline + 5.0:
                raise WorkerBroken("the probe worker stopped answering")
            while self.chan.recv_stderr_ready():  # not the reply, and it would wake select
                self.chan.recv_stderr(65536)
            ready, _, _ = select.select([self.chan], [], [], wait)
            if ready and not (self.chan.recv_ready() or self.chan.eof_received):
                continue  # stderr woke it
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
            if not self.ready:  # it may take the probe's whole time: that is the same wait
                self._start(start + (START_S if timeout is None else timeout))
            raw = code.encode("utf-8")
            self.chan.sendall(
                struct.pack("!IId", len(raw), len(stdin), float(timeout or 0)) + raw + stdin
            )
            deadline = None if timeout is None else start + timeout
            status, n_out, n_err = struct.unpack("!iII", self._recv(12, deadline))
            out = self._recv(n_out, deadline)
            err = self._recv(n_err, deadline)
        except StartTimedOut:
            self.close()
            self.broken = True
            if self.cancelled:
                raise Cancelled() from None
            if timeout is None:
                raise
            status, out, err = -9, b"", b""  # timed out, as a probe that ran would
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
        """Close its channel: a ready worker reads the end of its input and exits (ending its
        child); one that never became ready reads nothing, so it is killed there."""
        if self.chan is not None:
            with contextlib.suppress(Exception):  # closing a dead channel is not news
                self.chan.close()
            self.chan = None
        if not self.ready:
            self.kill()
