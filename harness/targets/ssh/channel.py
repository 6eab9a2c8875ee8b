"""Session channels: feed stdin and drain stdout/stderr without deadlocks, wait for the status;
stream a command's output (:class:`ChannelStream`).

Also the two ways Paramiko would print tracebacks the user never should see, and the one-line
reason of any exception. Paramiko itself is imported only where needed.
"""

from __future__ import annotations

import contextlib
import select
import threading
import time
from typing import Any

from harness.errors import HarnessError
from harness.targets.base import MAX_STDERR, ByteStream, LinkLost

#: Longest wait for one SFTP reply before the server is presumed gone.
SFTP_TIMEOUT_S = 60.0
#: Bytes taken from a channel per recv; large, to drain big outputs in few calls.
RECV_CHUNK = 1 << 20
#: Bytes of stdin sent per write (one SSH packet's worth).
SEND_CHUNK = 32 * 1024
#: Channel receive window. Not larger: Paramiko's buffer drops read bytes from the front of
#: an array (a memmove of everything behind), so an 8-16 MiB window made 100 MB of output
#: 3-5x slower on loopback; 2 MiB gives ~100 MB/s.
WINDOW_SIZE = 2 * 1024 * 1024


class Deadline(Exception):
    """Internal: the caller's timeout passed while the command was still running."""

    def __init__(self, stderr: bytes = b"") -> None:
        super().__init__("deadline")
        self.stderr = stderr  # what arrived so far: it holds the pid line


class Stopped(KeyboardInterrupt):
    """Ctrl-C while a command ran: what its stderr held so far (the pid line, to end it)."""

    def __init__(self, stderr: bytes = b"") -> None:
        super().__init__()
        self.stderr = stderr


def pump(chan: Any, stdin: bytes | None, deadline: float | None) -> tuple[bytes, bytes]:
    """:func:`_pump`; a Ctrl-C becomes :class:`Stopped`, carrying the stderr read so far."""
    err = bytearray()
    try:
        return _pump(chan, stdin, deadline, err)
    except KeyboardInterrupt:
        raise Stopped(bytes(err)) from None


def _pump(
    chan: Any, stdin: bytes | None, deadline: float | None, err: bytearray
) -> tuple[bytes, bytes]:
    """Feed stdin and drain stdout and stderr together until the remote side sends EOF.

    Both streams are read in one loop (and stdin is written in the same loop, never with a
    blocking ``sendall``) so that a full window on any of the three cannot deadlock the
    others. ``select`` on the channel's pipe wakes us when data, EOF or close arrive.
    """
    out = bytearray()
    data = stdin or b""
    pos = 0
    if not data:
        chan.shutdown_write()
    while True:
        busy = False
        if chan.recv_ready():
            out += chan.recv(RECV_CHUNK)
            busy = True
        if chan.recv_stderr_ready():
            err += chan.recv_stderr(RECV_CHUNK)
            busy = True
        if pos < len(data) and chan.send_ready():
            try:
                sent = chan.send(data[pos : pos + SEND_CHUNK])
            except OSError:
                sent = 0  # closed: the program stopped reading; that is its business
            pos = pos + sent if sent else len(data)
            if pos >= len(data) and not chan.closed:
                chan.shutdown_write()
            busy = True
        if busy:
            continue
        if chan.eof_received or chan.closed:
            return bytes(out), bytes(err)
        wait = 1.0
        if deadline is not None:
            wait = min(wait, deadline - time.monotonic())
            if wait <= 0:
                raise Deadline(bytes(err))
        if pos < len(data):
            wait = min(wait, 0.005)  # window full: poll, the pipe only signals reads
        select.select([chan], [], [], wait)


def kill_group(transport: Any, pid: int | None, wait: float) -> None:
    """Best effort: SIGKILL a command's process group (timed out, or Ctrl-C) from a second
    session, ``wait`` seconds at most.

    Closing the channel alone would leave a program that does not write (a hung import,
    a sleep) running on the GPU box. OpenSSH's ``signal`` channel request would be the
    tidy way, but sshd refuses it for root logins, which GPU boxes often use.
    """
    if pid is None or pid <= 1:
        return
    from harness.targets import shell

    try:
        chan = transport.open_session(timeout=wait)
        try:
            # The login shell's builtin kill: it accepts "-9 -PGID" in sh, dash, bash, zsh.
            chan.exec_command(shell.command(["kill", "-9", f"-{pid}"]))
            pump(chan, None, time.monotonic() + wait)
        finally:
            chan.close()
    except Exception:
        pass  # the timeout (or the Ctrl-C) is what to report, not a failed cleanup


def wait_status(chan: Any, transport: Any, deadline: float | None, stderr: bytes) -> int:
    """Wait for exit-status (or close) after EOF; -1 when the server sent none.

    EOF comes first when the program closed its output but has not exited yet.
    """
    while not chan.status_event.wait(0.5):
        if not transport.is_active():
            break
        if deadline is not None and time.monotonic() > deadline:
            raise Deadline(stderr)
    return int(chan.exit_status)


def quiet_prefetch_thread() -> None:
    """Stop Paramiko's SFTP prefetch thread printing a traceback when the link drops.

    ``SFTPFile.prefetch`` (what makes reads fast: many requests in flight) issues its requests
    from a helper thread. If the connection dies meanwhile, the reading thread gets the error
    and we report it as a ConnectError; the helper's copy of the same error would be printed
    by ``threading.excepthook`` as a traceback, which harness never shows. Checked on each read
    (not a one-time flag) because test runners swap the hook per test.
    """
    if getattr(threading.excepthook, "_harness_quiet", False):
        return
    import paramiko

    previous = threading.excepthook

    def hook(args: threading.ExceptHookArgs) -> None:
        name = args.thread.name if args.thread is not None else ""
        dropped = issubclass(args.exc_type, (EOFError, OSError, paramiko.SSHException))
        if dropped and name.endswith("(_prefetch_thread)"):
            return
        previous(args)

    hook._harness_quiet = True  # type: ignore[attr-defined]
    threading.excepthook = hook


def reason(e: BaseException) -> str:
    """A one-line reason from any exception (some Paramiko ones have empty str())."""
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0]


class ChannelStream(ByteStream):
    """A command on a raw session channel of an SSH transport, read in 1 MiB gulps (not
    Fabric's ``run()``, whose per-byte machinery is ~70x slower)."""

    def __init__(self, transport: Any, line: str, connect_timeout: float) -> None:
        try:
            self._transport = transport
            self._chan = transport.open_session(window_size=WINDOW_SIZE, timeout=connect_timeout)
            self._chan.exec_command(line)
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
