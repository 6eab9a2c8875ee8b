"""Where kept connections live and who may touch them: settings, socket names, locks, liveness.

The socket folder is ``$XDG_RUNTIME_DIR/harness-mux/`` else ``~/.cache/harness/mux/``, ours
and ``0700`` or not used at all; a socket's name is the short hash of the connection's
identity (:mod:`harness.targets.identity`). Binding, stale-socket removal and a server's own
unlink happen under an ``flock`` on ``NAME.lock``. Stdlib only.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import stat
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

from harness.errors import ConfigError
from harness.targets.identity import ConnectionIdentity, connection_identity
from harness.targets.mux.wire import PROTOCOL
from harness.targets.ssh.entry import HostConfig

#: Seconds a mux server lingers unused; ``0`` disables connection sharing altogether.
PERSIST_ENV = "HARNESS_SSH_PERSIST"
DEFAULT_PERSIST_S = 600.0
#: Set to 1 to have the client say on stderr whether it went through the mux.
DEBUG_ENV = "HARNESS_MUX_DEBUG"
#: The kernel's limit for a Unix socket path (108 bytes with the NUL).
MAX_SOCKET_PATH = 107


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


@contextlib.contextmanager
def name_lock(path: str) -> Iterator[None]:
    """``flock`` on ``NAME.lock``: binding, stale removal and unlinking never interleave."""
    import fcntl

    fd = os.open(sibling(path, ".lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def sibling(path: str, suffix: str) -> str:
    return path[: -len(".sock")] + suffix if path.endswith(".sock") else path + suffix


def alive(path: str) -> bool:
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


def remove_stale(path: str) -> None:
    """Remove a socket file nobody listens on; checked again under the lock (no races)."""
    with contextlib.suppress(OSError), name_lock(path):
        if not alive(path):
            os.unlink(path)


def claim(path: str) -> socket.socket | None:
    """Bind and listen on ``path``; ``None`` when a live server already has it.

    Race handling (documented here because it is the subtle part): bind() on an existing
    path fails with EADDRINUSE whether or not anyone listens there, so under the name's
    ``flock`` we ask: is someone listening? Yes -> another server won; we exit. No -> the
    file is stale; unlink and bind. Every server binds under the same lock and clients only
    remove stale files under it too, so exactly one server ever owns the name.
    """
    with name_lock(path):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            try:
                sock.bind(path)
            except OSError as e:
                if e.errno != errno.EADDRINUSE:
                    raise
                if alive(path):
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
