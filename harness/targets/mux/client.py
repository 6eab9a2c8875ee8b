"""The client side of a kept connection: attach, send one request per Unix connection, stop.

Stdlib only, so a command that finds a live server never imports Paramiko.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness import __version__
from harness.errors import ConnectError, HarnessError
from harness.targets.base import ByteStream, CommandResult, FileStat
from harness.targets.mux.paths import (
    DEBUG_ENV,
    debug,
    identity_of,
    mux_dir,
    remove_stale,
    sibling,
)
from harness.targets.mux.streams import MuxStream
from harness.targets.mux.wire import (
    PROTOCOL,
    ProtocolError,
    absolute,
    error_from_wire,
    host_to_json,
    peer_is_us,
    recv_frame,
    send_frame,
)
from harness.targets.ssh.entry import HostConfig

#: A client must send its request this soon after the hello (the server's limit too).
REQUEST_WAIT_S = 30.0
#: Longest time to push a request or a reply into a peer that stopped reading.
REPLY_SEND_S = 120.0
#: Extra time a client allows beyond a command's own timeout (the server kills and reports).
REPLY_MARGIN_S = 30.0
#: Log files are truncated when a server starts and finds them bigger than this.
MAX_LOG_BYTES = 256 * 1024


class MuxUnavailable(Exception):
    """Internal: no mux server answered, and nothing ran; the caller connects directly."""


def open_connection(
    path: str, wait: float, expect: Mapping[str, Any] | None = None
) -> tuple[socket.socket, dict[str, Any]]:
    """Connect and read the server's hello; with ``expect``, its identity must equal that.

    Raises:
        MuxUnavailable: no (usable) server; nothing was sent, so nothing ran.
    """
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(wait)
        try:
            sock.connect(path)
        except ConnectionRefusedError:
            remove_stale(path)
            raise MuxUnavailable("stale socket") from None
        except OSError as e:
            raise MuxUnavailable(f"cannot connect: {e}") from None
        if not peer_is_us(sock):
            raise MuxUnavailable("socket owned by another user")
        try:
            hello = recv_frame(sock)
        except (OSError, ProtocolError) as e:
            raise MuxUnavailable(f"no hello: {e}") from None
        if hello is None:
            raise MuxUnavailable("server closed the connection without a hello")
        head = hello[0]
        if (
            head.get("op") != "hello"
            or head.get("protocol") != PROTOCOL
            or head.get("version") != __version__
        ):
            raise MuxUnavailable("server speaks another protocol")
        if expect is not None and head.get("identity") != dict(expect):
            raise MuxUnavailable("server was started for another host entry")
        return sock, head
    except BaseException:
        sock.close()
        raise


class MuxClient:
    """Talks to one mux server; opens one short Unix connection per request.

    One connection per request keeps concurrent callers (threads) independent and makes
    every failure local to one request. A Unix connect costs microseconds.

    Args:
        path: the server's socket.
        hello: its hello header (label, pid).
        wait: seconds to wait for a hello (a server that is still connecting sends it late).
        expect: the identity (:meth:`ConnectionIdentity.to_dict`) every hello must carry;
            ``None`` for housekeeping (ping, stop) that serves no command.
    """

    def __init__(
        self,
        path: str,
        hello: Mapping[str, Any],
        wait: float,
        expect: Mapping[str, Any] | None = None,
    ) -> None:
        self.path = path
        self.label = str(hello.get("label", "?"))
        self.pid = int(hello.get("pid", 0))
        self.wait = wait
        self.expect = None if expect is None else dict(expect)

    @classmethod
    def attach(
        cls, path: str, wait: float, expect: Mapping[str, Any] | None = None
    ) -> MuxClient | None:
        """A client for the live server at ``path``; ``None`` when there is none.

        A stale socket file (its server died without removing it) is removed on the way; a
        server whose identity is not ``expect`` is left alone and not used.
        """
        try:
            sock, hello = open_connection(path, wait, expect)
        except MuxUnavailable as e:
            debug(f"no server at {path}: {e}")
            return None
        sock.close()
        return cls(path, hello, wait, expect)

    def run(
        self,
        argv: Sequence[str],
        *,
        stdin: bytes | None = None,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> CommandResult:
        """Run ``argv`` through the server's SshTarget; same contract as ``SshTarget.run``."""
        argv = tuple(argv)
        header = {
            "argv": list(argv),
            "timeout": timeout,
            "env": dict(env) if env else None,
            "cwd": cwd,
        }
        parts = [] if stdin is None else [("stdin", stdin)]
        wait = None if timeout is None else timeout + REPLY_MARGIN_S
        head, body = self._call("run", header, parts, wait, f"running {argv[0]}")
        return _result(argv, head, body)

    def run_python(
        self, code: str, stdin: bytes, timeout: float | None, python: str
    ) -> CommandResult:
        """A probe run by ``python`` through the server's warm worker (or a plain exec).

        The interpreter travels with the request, so the server can only ever run the one
        this client's host entry names.
        """
        wait = None if timeout is None else timeout + REPLY_MARGIN_S
        head, body = self._call(
            "python",
            {"code": code, "timeout": timeout, "python": python},
            [("stdin", stdin)],
            wait,
            "running a probe",
        )
        return _result((str(head.get("python", "python")), "-B", "-c", "<probe>"), head, body)

    def read_bytes(self, path: str) -> bytes:
        _, body = self._call("read", {"path": path}, [], None, f"reading {path}")
        return body.get("data", b"")

    def stat(self, path: str) -> FileStat | None:
        head, _ = self._call("stat", {"path": path}, [], None, f"reading {path}")
        st = head.get("stat")
        if st is None:
            return None
        return FileStat(str(st[0]), int(st[1]), int(st[2]), float(st[3]))

    def stream(self, argv: Sequence[str], on_lost: Callable[[], None]) -> ByteStream:
        """``argv``'s output relayed as it comes (see :mod:`.streams`)."""
        sock, _ = open_connection(self.path, self.wait, self.expect)
        debug(f"request stream: {argv[0]}")
        try:
            sock.settimeout(REPLY_SEND_S)
            send_frame(sock, {"op": "stream", "argv": list(argv)})
            sock.settimeout(self.wait)
            reply = recv_frame(sock)
        except (OSError, ProtocolError) as e:
            sock.close()
            raise self._lost(f"starting {argv[0]}", str(e) or type(e).__name__) from None
        except BaseException:
            sock.close()
            raise
        head = {} if reply is None else reply[0]
        if head.get("ok"):
            return MuxStream(sock, on_lost)
        sock.close()
        if reply is None or head.get("retry"):
            raise MuxUnavailable("server could not start the stream")
        raise error_from_wire(head.get("error"))

    def shutdown(self) -> None:
        """Ask the server to exit now (it removes its socket before answering)."""
        self._call("shutdown", {}, [], 10.0, "stopping the mux server")

    def _call(
        self,
        op: str,
        header: Mapping[str, Any],
        parts: Sequence[tuple[str, bytes]],
        reply_wait: float | None,
        what: str,
    ) -> tuple[dict[str, Any], dict[str, bytes]]:
        sock, _ = open_connection(self.path, self.wait, self.expect)
        debug(f"request {op}: {what}")  # one line per round trip (tests count them)
        with sock:
            try:
                sock.settimeout(REPLY_SEND_S)
                send_frame(sock, {"op": op, **header}, parts)
                sock.settimeout(reply_wait)
                reply = recv_frame(sock)
            except (OSError, ProtocolError) as e:
                raise self._lost(what, str(e) or type(e).__name__) from None
        if reply is None:
            raise self._lost(what, "the harness mux server closed the connection")
        head, body = reply
        if head.get("retry"):
            # The server's link was already down; it ran nothing and is shutting down.
            raise MuxUnavailable("server lost its SSH connection")
        if not head.get("ok"):
            raise error_from_wire(head.get("error"))
        return head, body

    def _lost(self, what: str, reason: str) -> ConnectError:
        return ConnectError(
            f"connection to {self.label} lost while {what}: {reason}",
            hint="the shared connection (harness mux server) went away; rerun, the next "
            "command reconnects",
        )


def _result(
    argv: Sequence[str], head: Mapping[str, Any], body: Mapping[str, bytes]
) -> CommandResult:
    """A ``run``/``python`` reply as the result the target itself would have returned."""
    return CommandResult(
        tuple(argv),
        int(head["exit_code"]),
        body.get("stdout", b""),
        body.get("stderr", b""),
        float(head.get("duration", 0.0)),
    )


def ping(path: str, wait: float = 2.0) -> dict[str, Any] | None:
    """The hello of the server at ``path`` (label, pid, version), or ``None``."""
    try:
        sock, hello = open_connection(path, wait)
    except MuxUnavailable:
        return None
    sock.close()
    return hello


def stop_all(directory: str | Path | None = None, timeout: float = 5.0) -> int:
    """Shut down every mux server in ``directory`` (default: ours); return how many.

    Waits until their processes are gone, so tests can assert nothing is left behind.
    """
    base = Path(directory) if directory is not None else mux_dir()
    if base is None or not base.is_dir():
        return 0
    return _stop([str(p) for p in sorted(base.glob("*.sock"))], timeout)


def stop_one(path: str, timeout: float = 5.0) -> int:
    """Shut down the mux server at ``path`` if one answers; 1 if it did, else 0."""
    return _stop([path], timeout)


def _stop(paths: list[str], timeout: float) -> int:
    pids: list[int] = []
    for sock_path in paths:
        hello = ping(sock_path)
        if hello is None:
            continue
        with contextlib.suppress(HarnessError, MuxUnavailable):
            MuxClient(sock_path, hello, 2.0).shutdown()
        pids.append(int(hello.get("pid", 0)))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(_pid_alive(p) for p in pids):
        time.sleep(0.05)
    return len(pids)


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (exited, not yet reaped by its parent) is gone for our purposes.
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rpartition(b")")[2].split()[0] != b"Z"
    except OSError:
        return True


def spawn(
    host: HostConfig,
    *,
    path: str,
    ssh_config_path: str | None,
    connect_timeout: float,
    idle: float,
) -> int:
    """Start a mux server for ``host`` in the background; return its pid. Does not wait.

    The child gets its own session (no terminal signals), no stdin/stdout, and a log file
    next to the socket for stderr. It runs from the folder holding *this* ``harness``
    package, so ``-m`` imports the same code as the client (a version mismatch would make
    every client ignore it).
    """
    import subprocess

    import harness

    config = {
        "host": host_to_json(host),
        "identity": identity_of(host, ssh_config_path).to_dict(),
        "socket": path,
        "ssh_config_path": absolute(ssh_config_path),
        "connect_timeout": connect_timeout,
        "idle": idle,
    }
    log_path = sibling(path, ".log")
    with contextlib.suppress(OSError):
        if os.path.getsize(log_path) > MAX_LOG_BYTES:
            os.truncate(log_path, 0)
    # Settings that make sense for the command the user ran, not for a long-lived server.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPROFILEIMPORTTIME", DEBUG_ENV)}
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "harness.targets.mux", "serve", json.dumps(config)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=fd,
            cwd=str(Path(harness.__file__).resolve().parent.parent),
            env=env,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        os.close(fd)
    # Keep a reference (no "still running" ResourceWarning when it is freed) and reap the
    # ones that ended, so a long-lived caller (a test run) does not collect zombies.
    _SPAWNED[:] = [p for p in _SPAWNED if p.poll() is None]
    _SPAWNED.append(proc)
    return proc.pid


_SPAWNED: list[Any] = []
