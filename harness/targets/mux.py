"""Connection sharing for SSH hosts, like OpenSSH ``ControlMaster`` + ``ControlPersist``.

Why: a ``harness`` process spends ~0.45 s importing Fabric/Paramiko/cryptography and ~0.12 s
on the SSH handshake before it does any remote work, which made ``harness probe`` 2.4x slower
than ``ssh host grep``. So the first command connects directly (host-key prompts and auth
errors stay in the foreground) and then starts a small background **mux server** that keeps
that connection open and serves later commands over a Unix socket. A command that finds a
live server imports no Paramiko at all: it sends its request and gets bytes back.

How the pieces fit:

* **Framing.** One request and one reply per Unix connection. Every message is a frame:
  ``!IQ`` (header length, body length), a UTF-8 JSON header, then the body -- raw bytes cut
  into named parts (``stdin``, ``stdout``, ``stderr``, ``data``) whose lengths the header lists
  under ``parts``. No pickle: a peer can make us allocate, never run code. On accept the
  server first sends a ``hello`` frame (protocol, harness version, label, pid); a client that
  gets no hello knows nothing ran and may fall back to a direct connection.
* **Errors** raised by the server's :class:`~harness.targets.ssh.SshTarget` travel as
  ``{"type": class name, "message", "hint"}`` and are raised again client-side as the same
  :mod:`harness.errors` class: the user sees the same one line as on a direct connection.
* **Socket path.** ``$XDG_RUNTIME_DIR/harness-mux/`` else ``~/.cache/harness/mux/``; the folder
  must be ours and ``0700`` or the mux is silently not used. The name is a short sha256 of
  the connection's identity (:mod:`harness.targets.identity`): every field that decides
  *where* it goes, *how it is verified* and *what it runs* (address, user, port, identity,
  known_hosts, the ssh config files and their mtimes, python, env, workdir, HOME, harness
  version). The server repeats that identity in its hello and the client compares it, and a
  probe request names its interpreter: an edited hosts.toml or ~/.ssh/config, or a second
  inventory naming the box the same, never reaches the old endpoint or the old interpreter.
* **Races.** Binding, stale-socket removal and the server's own unlink all happen under an
  ``flock`` on ``NAME.lock`` next to the socket. A server that finds the name taken checks it:
  a live server there means it lost the race and exits quietly; a refused connect means the
  file is stale and is replaced. The server binds *before* it connects to SSH, so a second
  command started meanwhile waits for that connection instead of spawning its own.
* **Lifetime.** The server exits after ``$HARNESS_SSH_PERSIST`` seconds idle (default 600;
  ``0`` turns the whole mechanism off), when its SSH connection drops (it never reconnects
  by itself: reconnecting is the foreground's job, where errors are seen), or on a
  ``shutdown`` request. It removes its socket first, so the next command falls back cleanly.
* **Security.** Only the 0700 folder's owner can reach the socket; on Linux the peer's uid
  is checked with ``SO_PEERCRED`` as well. The server's SshTarget verifies host keys with the
  normal policy and never accepts a new key.

Only the stdlib is imported at module level: the client side must stay cheap.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import os
import socket
import stat
import struct
import sys
import threading
import time
import traceback
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import __version__, errors
from harness.config import HostConfig
from harness.errors import ConfigError, ConnectError, HarnessError, TargetError
from harness.targets.base import CommandResult, FileStat
from harness.targets.identity import ConnectionIdentity, connection_identity

if TYPE_CHECKING:
    from harness.targets.ssh import SshTarget

#: Seconds a mux server lingers unused; ``0`` disables connection sharing altogether.
PERSIST_ENV = "HARNESS_SSH_PERSIST"
DEFAULT_PERSIST_S = 600.0
#: Set to 1 to have the client say on stderr whether it went through the mux.
DEBUG_ENV = "HARNESS_MUX_DEBUG"
#: Bumped when the framing or the request set changes (it is part of the socket name too).
#: 2: the hello carries the server's identity; a probe request names its interpreter.
PROTOCOL = 2
#: The kernel's limit for a Unix socket path (108 bytes with the NUL).
MAX_SOCKET_PATH = 107
#: A header is JSON with an argv and an env in it; anything bigger is a broken peer.
MAX_HEADER = 16 * 1024 * 1024
#: How often the server checks its SSH link and its idle time.
POLL_S = 0.25
#: A client must send its request this soon after the hello.
REQUEST_WAIT_S = 30.0
#: Longest time to push a reply into a client that stopped reading.
REPLY_SEND_S = 120.0
#: Extra time a client allows beyond a command's own timeout (the server kills and reports).
REPLY_MARGIN_S = 30.0
#: How long a server waits for in-flight requests to answer before it exits.
DRAIN_S = 5.0
#: Log files are truncated when a server starts and finds them bigger than this.
MAX_LOG_BYTES = 256 * 1024

_PREFIX = struct.Struct("!IQ")


class MuxUnavailable(Exception):
    """Internal: no mux server answered, and nothing ran; the caller connects directly."""


class ProtocolError(Exception):
    """Internal: a peer sent something that is not a frame."""


# -- configuration -------------------------------------------------------------------------


def persist_seconds(environ: Mapping[str, str] | None = None) -> float:
    """``$HARNESS_SSH_PERSIST`` as seconds; ``0`` means: never share connections.

    Raises:
        ConfigError: the variable is set but is not a non-negative number.
    """
    env = os.environ if environ is None else environ
    raw = env.get(PERSIST_ENV, "").strip()
    if not raw:
        return DEFAULT_PERSIST_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not (0 <= value < float("inf")):
        raise ConfigError(
            f"${PERSIST_ENV}={raw!r} is not a number of seconds",
            hint=f"set it to how long an idle SSH connection is kept (default "
            f"{DEFAULT_PERSIST_S:g}), or 0 to connect anew for every command",
        )
    return value


def mux_dir(environ: Mapping[str, str] | None = None) -> Path | None:
    """The folder for mux sockets, created ``0700``; ``None`` when it is not safe to use.

    Refused (so the caller simply connects directly) when it is not a real folder owned by
    us or when group/others have any access: anyone who can reach the socket can run
    commands on the host with our credentials.
    """
    env = os.environ if environ is None else environ
    runtime = env.get("XDG_RUNTIME_DIR", "")
    # Only an existing one: creating the session's runtime folder is the login manager's job.
    if runtime and os.path.isabs(runtime) and os.path.isdir(runtime):
        base = Path(runtime) / "harness-mux"
    else:
        base = Path(os.path.expanduser("~")) / ".cache" / "harness" / "mux"
    try:
        base.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            os.mkdir(base, 0o700)
        st = os.lstat(base)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
        return None
    if stat.S_IMODE(st.st_mode) & 0o077:
        return None
    return base


def _abs(path: str | None) -> str | None:
    return None if path is None else os.path.abspath(os.path.expanduser(path))


def identity_of(host: HostConfig, ssh_config_path: str | None) -> ConnectionIdentity:
    """This process's identity for a connection to ``host`` (see :mod:`.identity`)."""
    return connection_identity(host, ssh_config_path, protocol=PROTOCOL)


def socket_key(host: HostConfig, ssh_config_path: str | None) -> str:
    """Short hash of everything that decides what a kept connection's commands touch.

    Address, port, user, identity file, known_hosts, the ssh config files (ProxyJump and
    HostName live there) and the interpreter and run environment: a mismatch in any of them
    means another server, never the old one.
    """
    return identity_of(host, ssh_config_path).key


def socket_path(
    host: HostConfig, ssh_config_path: str | None, environ: Mapping[str, str] | None = None
) -> str | None:
    """Where the mux server for this host listens; ``None`` when no safe short path exists."""
    base = mux_dir(environ)
    if base is None:
        return None
    path = str(base / f"{socket_key(host, ssh_config_path)}.sock")
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        return None
    return path


def debug(message: str) -> None:
    """One line on stderr when ``$HARNESS_MUX_DEBUG`` is set (tests and bug reports)."""
    if os.environ.get(DEBUG_ENV, "") not in ("", "0"):
        sys.stderr.write(f"harness-mux: {message}\n")
        sys.stderr.flush()


# -- framing -------------------------------------------------------------------------------


def send_frame(
    sock: socket.socket, header: Mapping[str, Any], parts: Sequence[tuple[str, bytes]] = ()
) -> None:
    """Send one frame: prefix, JSON header (listing the parts), then the parts' bytes."""
    head = dict(header)
    head["parts"] = [[name, len(data)] for name, data in parts]
    raw = json.dumps(head, separators=(",", ":")).encode()
    body = sum(len(data) for _, data in parts)
    sock.sendall(_PREFIX.pack(len(raw), body) + raw)
    for _, data in parts:
        if data:
            sock.sendall(data)


def _recv_exact(sock: socket.socket, size: int, *, eof_ok: bool = False) -> bytes | None:
    buf = bytearray(size)
    view = memoryview(buf)
    got = 0
    while got < size:
        n = sock.recv_into(view[got:], min(size - got, 1 << 20))
        if n == 0:
            if eof_ok and got == 0:
                return None
            raise ProtocolError(f"connection closed after {got} of {size} bytes")
        got += n
    return bytes(buf)


def recv_frame(sock: socket.socket) -> tuple[dict[str, Any], dict[str, bytes]] | None:
    """Read one frame; ``None`` on a clean end of stream before it started.

    Raises:
        ProtocolError: a truncated or malformed frame.
        OSError: the socket failed or timed out.
    """
    prefix = _recv_exact(sock, _PREFIX.size, eof_ok=True)
    if prefix is None:
        return None
    head_len, body_len = _PREFIX.unpack(prefix)
    if head_len > MAX_HEADER:
        raise ProtocolError(f"header of {head_len} bytes")
    raw = _recv_exact(sock, head_len)
    try:
        header = json.loads(raw or b"")
    except ValueError as e:
        raise ProtocolError(f"header is not JSON: {e}") from None
    if not isinstance(header, dict):
        raise ProtocolError("header is not an object")
    layout = header.pop("parts", [])
    if not isinstance(layout, list) or not all(
        isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) and isinstance(p[1], int)
        for p in layout
    ):
        raise ProtocolError("bad parts list")
    if sum(p[1] for p in layout) != body_len or any(p[1] < 0 for p in layout):
        raise ProtocolError("parts do not add up to the body")
    parts: dict[str, bytes] = {}
    for name, size in layout:
        parts[name] = _recv_exact(sock, size) or b""
    return header, parts


def _peer_is_us(sock: socket.socket) -> bool:
    """The other end runs as our uid (Linux ``SO_PEERCRED``; elsewhere the 0700 folder)."""
    opt = getattr(socket, "SO_PEERCRED", None)
    if opt is None:
        return True
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, opt, struct.calcsize("3i"))
    except OSError:
        return False
    _pid, uid, _gid = struct.unpack("3i", creds)
    return bool(uid == os.geteuid())


def _error_to_wire(e: HarnessError) -> dict[str, Any]:
    return {"type": type(e).__name__, "message": e.message, "hint": e.hint}


def _error_from_wire(err: Any) -> HarnessError:
    """The same HarnessError class the server raised (TargetError if the name is unknown)."""
    if not isinstance(err, dict):
        return TargetError("the harness mux server sent a malformed error")
    cls = getattr(errors, str(err.get("type")), None)
    if not (isinstance(cls, type) and issubclass(cls, HarnessError)):
        cls = TargetError
    hint = err.get("hint")
    return cls(str(err.get("message", "")), None if hint is None else str(hint))


# -- locking and liveness ------------------------------------------------------------------


@contextlib.contextmanager
def _name_lock(path: str) -> Iterator[None]:
    """``flock`` on ``NAME.lock``: binding, stale removal and unlinking never interleave."""
    import fcntl

    fd = os.open(_sibling(path, ".lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _sibling(path: str, suffix: str) -> str:
    return path[: -len(".sock")] + suffix if path.endswith(".sock") else path + suffix


def _alive(path: str) -> bool:
    """Someone listens on ``path`` (a refused connect means a stale file)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(1.0)
        try:
            s.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):
            return False
        except OSError:
            return True  # e.g. a full backlog: somebody is there; do not remove it
        return True


def _remove_stale(path: str) -> None:
    """Remove a socket file nobody listens on; checked again under the lock (no races)."""
    with contextlib.suppress(OSError), _name_lock(path):
        if not _alive(path):
            os.unlink(path)


# -- client --------------------------------------------------------------------------------


def _open(
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
            _remove_stale(path)
            raise MuxUnavailable("stale socket") from None
        except OSError as e:
            raise MuxUnavailable(f"cannot connect: {e}") from None
        if not _peer_is_us(sock):
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
            sock, hello = _open(path, wait, expect)
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
        return CommandResult(
            argv,
            int(head["exit_code"]),
            body.get("stdout", b""),
            body.get("stderr", b""),
            float(head.get("duration", 0.0)),
        )

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
        argv = (str(head.get("python", "python")), "-B", "-c", "<probe>")
        return CommandResult(
            argv,
            int(head["exit_code"]),
            body.get("stdout", b""),
            body.get("stderr", b""),
            float(head.get("duration", 0.0)),
        )

    def read_bytes(self, path: str) -> bytes:
        _, body = self._call("read", {"path": path}, [], None, f"reading {path}")
        return body.get("data", b"")

    def stat(self, path: str) -> FileStat | None:
        head, _ = self._call("stat", {"path": path}, [], None, f"reading {path}")
        st = head.get("stat")
        if st is None:
            return None
        return FileStat(str(st[0]), int(st[1]), int(st[2]), float(st[3]))

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
        sock, _ = _open(self.path, self.wait, self.expect)
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
            raise _error_from_wire(head.get("error"))
        return head, body

    def _lost(self, what: str, reason: str) -> ConnectError:
        return ConnectError(
            f"connection to {self.label} lost while {what}: {reason}",
            hint="the shared connection (harness mux server) went away; rerun, the next "
            "command reconnects",
        )


def ping(path: str, wait: float = 2.0) -> dict[str, Any] | None:
    """The hello of the server at ``path`` (label, pid, version), or ``None``."""
    try:
        sock, hello = _open(path, wait)
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


def host_to_json(host: HostConfig) -> dict[str, Any]:
    """A HostConfig as plain JSON values (paths made absolute: the server runs elsewhere)."""
    data = {f.name: getattr(host, f.name) for f in dataclasses.fields(host)}
    data["env"] = dict(host.env)
    data["identity"] = _abs(host.identity)
    data["known_hosts"] = _abs(host.known_hosts)
    return data


def host_from_json(data: Mapping[str, Any]) -> HostConfig:
    names = {f.name for f in dataclasses.fields(HostConfig)}
    return HostConfig(**{k: v for k, v in data.items() if k in names})


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
        "ssh_config_path": _abs(ssh_config_path),
        "connect_timeout": connect_timeout,
        "idle": idle,
    }
    log_path = _sibling(path, ".log")
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


# -- server --------------------------------------------------------------------------------


def _log(message: str) -> None:
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    sys.stderr.write(f"{stamp} harness-mux[{os.getpid()}] {message}\n")
    sys.stderr.flush()


def claim(path: str) -> socket.socket | None:
    """Bind and listen on ``path``; ``None`` when a live server already has it.

    Race handling (documented here because it is the subtle part): bind() on an existing
    path fails with EADDRINUSE whether or not anyone listens there, so under the name's
    ``flock`` we ask: is someone listening? Yes -> another server won; we exit. No -> the
    file is stale; unlink and bind. Every server binds under the same lock and clients only
    remove stale files under it too, so exactly one server ever owns the name.
    """
    with _name_lock(path):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            try:
                sock.bind(path)
            except OSError as e:
                if e.errno != errno.EADDRINUSE:
                    raise
                if _alive(path):
                    sock.close()
                    return None
                os.unlink(path)
                sock.bind(path)
            os.chmod(path, 0o600)
            sock.listen(64)
        except BaseException:
            sock.close()
            raise
        return sock


class MuxServer:
    """Serves one connected SshTarget on a bound Unix socket until idle, dropped or told.

    Args:
        target: connected, with ``reconnect=False`` (a dropped link ends the server).
        path: the socket ``listener`` is bound to (removed on exit if still ours).
        listener: from :func:`claim`.
        idle: seconds without requests before exiting.
    """

    def __init__(
        self,
        target: SshTarget,
        path: str,
        listener: socket.socket,
        idle: float,
        identity: Mapping[str, Any] | None = None,
    ) -> None:
        self.target = target
        self.identity = dict(identity or {})
        self.path = path
        self.listener = listener
        self.idle = idle
        self._inode = os.stat(path).st_ino
        self._stop = threading.Event()
        self._reason = "stopped"
        self._state = threading.Condition()
        self._active = 0
        self._last = time.monotonic()
        self._retired = False
        #: harness.targets.zygote.ProbeWorker per interpreter, made on its first probe
        self._workers: dict[str, Any] = {}

    def serve_forever(self) -> None:
        """Accept in a thread; watch the link and the idle clock here; clean up on the way out."""
        threading.Thread(target=self._accept_loop, name="mux-accept", daemon=True).start()
        while not self._stop.wait(POLL_S):
            if not self.target.connected:
                self.retire("the SSH connection dropped")
                break
            with self._state:
                idle_for = time.monotonic() - self._last if self._active == 0 else 0.0
            if idle_for >= self.idle:
                self.retire(f"idle for {self.idle:g}s")
                break
        self.retire(self._reason)
        with contextlib.suppress(OSError):
            self.listener.close()
        self.target.close()  # in-flight commands fail fast and answer ConnectError
        with self._state:
            self._state.wait_for(lambda: self._active == 0, timeout=DRAIN_S)
        _log(f"exiting: {self._reason}")

    def retire(self, reason: str) -> None:
        """Remove our socket (so clients connect directly from now on) and ask to stop."""
        with self._state:
            if self._retired:
                return
            self._retired = True
            self._reason = reason
        with contextlib.suppress(OSError), _name_lock(self.path):
            if os.stat(self.path).st_ino == self._inode:
                os.unlink(self.path)
        self._stop.set()

    def _accept_loop(self) -> None:
        self.listener.settimeout(POLL_S)
        while not self._stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                if self._stop.is_set():
                    return
                time.sleep(POLL_S)  # e.g. EMFILE: do not spin
                continue
            with self._state:
                self._active += 1
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        try:
            with conn:
                if not _peer_is_us(conn):
                    _log("dropped a connection from another user")
                    return
                if not self.target.connected or self._stop.is_set():
                    return  # no hello: the client connects directly, nothing ran here
                conn.settimeout(REQUEST_WAIT_S)
                send_frame(conn, self._hello())
                request = recv_frame(conn)
                if request is None:
                    return  # a liveness check or an attach: hello was all it wanted
                conn.settimeout(None)
                head, parts = self._dispatch(*request)
                conn.settimeout(REPLY_SEND_S)
                send_frame(conn, head, parts)
        except (OSError, ProtocolError) as e:
            _log(f"client connection: {e}")
        finally:
            with self._state:
                self._active -= 1
                self._last = time.monotonic()
                self._state.notify_all()

    def _hello(self) -> dict[str, Any]:
        return {
            "op": "hello",
            "protocol": PROTOCOL,
            "version": __version__,
            "label": self.target.label,
            "pid": os.getpid(),
            "idle": self.idle,
            "identity": self.identity,
        }

    def _dispatch(
        self, head: dict[str, Any], parts: dict[str, bytes]
    ) -> tuple[dict[str, Any], list[tuple[str, bytes]]]:
        op = head.get("op")
        if op == "shutdown":
            self.retire("asked to shut down")
            return {"ok": True}, []
        if not self.target.connected:
            self.retire("the SSH connection dropped")
            return {"ok": False, "retry": True}, []
        try:
            return self._do(op, head, parts)
        except HarnessError as e:
            if isinstance(e, ConnectError):
                # The link is gone and we never reconnect: step aside first, so that the
                # client's next command finds no socket and connects directly.
                self.retire(f"connection lost: {e.message}")
            return {"ok": False, "error": _error_to_wire(e)}, []
        except Exception as e:
            _log(f"request {op!r} failed:\n{traceback.format_exc()}")
            err = TargetError(
                f"{self.target.label}: the harness mux server failed: {str(e) or type(e).__name__}",
                hint=f"set {PERSIST_ENV}=0 to connect directly; server log: "
                f"{_sibling(self.path, '.log')}",
            )
            return {"ok": False, "error": _error_to_wire(err)}, []

    def _python(self, python: str, code: str, stdin: bytes, timeout: float | None) -> CommandResult:
        """``python`` runs ``code``: through its warm worker, or the plain exec, same result."""
        from harness.targets.zygote import ProbeWorker, WorkerBroken

        with self._state:
            worker = self._workers.get(python)
            if worker is None:
                worker = self._workers[python] = ProbeWorker(self.target.transport(), python)
        try:
            r: CommandResult = worker.call(code, stdin, timeout)
        except WorkerBroken as e:
            debug(f"probe worker: {e}; plain exec")
            return self.target.run([python, "-B", "-c", code], stdin=stdin, timeout=timeout)
        if r.exit_code == -9 and timeout is not None:
            raise TargetError(
                f"{python} on {self.target.label} timed out after {timeout:g}s",
                hint="it was killed (with its children); allow more time if it is just slow",
            )
        return r

    def _do(
        self, op: Any, head: dict[str, Any], parts: dict[str, bytes]
    ) -> tuple[dict[str, Any], list[tuple[str, bytes]]]:
        if op == "run":
            argv, env = head.get("argv"), head.get("env")
            cwd, timeout = head.get("cwd"), head.get("timeout")
            if not (isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv)):
                raise TargetError("harness mux: bad argv in request")
            if env is not None and not (
                isinstance(env, dict)
                and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())
            ):
                raise TargetError("harness mux: bad env in request")
            if cwd is not None and not isinstance(cwd, str):
                raise TargetError("harness mux: bad cwd in request")
            if timeout is not None and not isinstance(timeout, (int, float)):
                raise TargetError("harness mux: bad timeout in request")
            r = self.target.run(argv, stdin=parts.get("stdin"), timeout=timeout, env=env, cwd=cwd)
            reply = {"ok": True, "exit_code": r.exit_code, "duration": r.duration}
            return reply, [("stdout", r.stdout), ("stderr", r.stderr)]
        if op == "python":
            code, timeout, python = head.get("code"), head.get("timeout"), head.get("python")
            if not isinstance(code, str):
                raise TargetError("harness mux: bad code in request")
            if timeout is not None and not isinstance(timeout, (int, float)):
                raise TargetError("harness mux: bad timeout in request")
            if not (isinstance(python, str) and python):
                raise TargetError("harness mux: bad python in request")
            r = self._python(python, code, parts.get("stdin") or b"", timeout)
            answer: dict[str, Any] = {
                "ok": True,
                "exit_code": r.exit_code,
                "duration": r.duration,
                "python": python,
            }
            return answer, [("stdout", r.stdout), ("stderr", r.stderr)]
        path = head.get("path")
        if op in ("read", "stat") and not isinstance(path, str):
            raise TargetError("harness mux: bad path in request")
        if op == "read":
            return {"ok": True}, [("data", self.target.read_bytes(str(path)))]
        if op == "stat":
            st = self.target.stat(str(path))
            value = None if st is None else [st.path, st.size, st.mode, st.mtime]
            return {"ok": True, "stat": value}, []
        raise TargetError(f"harness mux: unknown request {op!r}")


def serve(config: Mapping[str, Any]) -> int:
    """The server process: claim the socket, connect, serve until idle or dropped."""
    import signal

    path = str(config["socket"])
    directory = mux_dir()
    if directory is None or os.path.dirname(path) != str(directory):
        _log(f"refusing {path}: not in a private mux folder")
        return 1
    listener = claim(path)
    if listener is None:
        _log("another server already serves this host; exiting")
        return 0
    inode = os.stat(path).st_ino

    def release() -> None:
        with contextlib.suppress(OSError), _name_lock(path):
            if os.stat(path).st_ino == inode:
                os.unlink(path)
        listener.close()

    from harness.targets.ssh import SshTarget

    host = host_from_json(config["host"])
    target = SshTarget(
        host,
        connect_timeout=float(config.get("connect_timeout", 10.0)),
        ssh_config_path=config.get("ssh_config_path"),
        persist=False,
        reconnect=False,
    )
    try:
        target.connect()
    except HarnessError as e:
        _log(f"cannot connect to {host.name}: {e}")
        release()
        target.close()
        return 1
    except BaseException:
        release()
        raise
    server = MuxServer(
        target,
        path,
        listener,
        float(config.get("idle", DEFAULT_PERSIST_S)),
        identity=config.get("identity"),
    )

    def on_signal(signum: int, _frame: Any) -> None:
        server.retire(f"signal {signum}")

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, on_signal)
    _log(f"serving {target.label} on {path} (idle timeout {server.idle:g}s)")
    server.serve_forever()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m harness.targets.mux serve JSON`` (what :func:`spawn` runs) or ``stop``.

    Users stop kept connections with ``harness hosts --disconnect``; ``stop`` stays for
    scripts that used it.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["stop"]:
        print(f"stopped {stop_all()} harness mux server(s)")
        return 0
    if len(args) != 2 or args[0] != "serve":
        sys.stderr.write("usage: python -m harness.targets.mux serve CONFIG_JSON | stop\n")
        return 2
    try:
        code = serve(json.loads(args[1]))
    except Exception:
        _log(f"crashed:\n{traceback.format_exc()}")
        code = 1
    sys.stderr.flush()
    # Daemon threads (Paramiko's, handlers') may still be blocked; do not wait for them.
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
