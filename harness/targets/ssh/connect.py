"""Building and opening the Fabric connection: our host-key policy, keys, timeouts, hops.

Fabric resolves ``~/.ssh/config`` (alias, HostName, User, Port, IdentityFile, ProxyJump); we
replace its ``AutoAddPolicy`` with :class:`~harness.targets.hostkeys.HostKeyPolicy` on every
hop, pass our timeouts to Paramiko, and turn each hop's failure into one ConnectError naming
``user@host:port`` and the fix. Fabric and Paramiko are imported inside the functions.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import socket
from collections.abc import Iterator
from typing import Any

from harness.errors import ConfigError, ConnectError, HarnessError, HostKeyError, TargetError
from harness.targets.ssh.channel import SFTP_TIMEOUT_S, reason
from harness.targets.ssh.entry import HostConfig
from harness.targets.timeouts import MORE_CONNECT_TIME

#: Seconds between SSH keepalive packets; a dead link then fails a write instead of idling.
KEEPALIVE_S = 15
#: A socket with unacknowledged data for this long is declared dead (Linux TCP_USER_TIMEOUT).
TCP_USER_TIMEOUT_S = 60


def build_connection(
    host: HostConfig,
    ssh_config_path: str | None,
    *,
    accept_new: bool,
    connect_timeout: float,
    hop_files: dict[int, Any],
) -> Any:
    """The Fabric ``Connection`` for ``host``, every hop hardened (no I/O).

    ``hop_files`` receives each hop's known_hosts files (keyed by ``id(hop)``), for the
    changed-key message if its handshake fails.
    """
    import paramiko
    from fabric import Config, Connection

    quiet_paramiko_logging()
    where = host.source or f"hosts.{host.name}"
    try:
        config = Config(runtime_ssh_path=ssh_config_path)
    except FileNotFoundError as e:
        raise ConfigError(f"ssh config file {ssh_config_path} not found") from e
    except (paramiko.SSHException, ValueError, OSError) as e:
        raise ConfigError(f"cannot read ssh config: {reason(e)}") from e
    try:
        conn = Connection(host.address, user=host.user, port=host.port, config=config)
    except (ValueError, paramiko.SSHException) as e:
        raise ConfigError(f"{where}: bad address {host.address!r}: {e}") from e

    identity = host.identity
    if identity is not None:
        _check_identity(identity, host.where.get("identity") or where)
    for hop in chain(conn):
        _harden(
            hop,
            host,
            identity if hop is conn else None,
            accept_new=accept_new,
            connect_timeout=connect_timeout,
            hop_files=hop_files,
        )
    return conn


def _check_identity(identity: str, where: str) -> None:
    """The ``identity =`` file must be a private key file; say which line if not."""
    path = os.path.expanduser(identity)
    if os.path.isdir(path):
        raise ConfigError(
            f"{where}: identity = {identity!r} is a directory, not a private key file",
            hint=f"name the key file in it, e.g. identity = "
            f'"{os.path.join(identity, "id_ed25519")}"',
        )
    if not os.path.isfile(path):
        raise ConfigError(
            f"{where}: identity file {identity} does not exist",
            hint="fix 'identity' in hosts.toml or remove it to use ~/.ssh/config / ssh-agent",
        )


def _harden(
    conn: Any,
    host: HostConfig,
    identity: str | None,
    *,
    accept_new: bool,
    connect_timeout: float,
    hop_files: dict[int, Any],
) -> None:
    """Put our host-key policy, known_hosts, keys and timeouts on one (hop) Connection."""
    from harness.targets.hostkeys import HostKeyPolicy, KnownHostsFiles

    cfg = conn.ssh_config
    user_file = (cfg.get("userknownhostsfile") or "").split()
    files = KnownHostsFiles.resolve(
        host.known_hosts,
        ssh_config_file=user_file[0] if user_file else None,
        hash_names=str(cfg.get("hashknownhosts", "no")).lower() == "yes",
    )
    try:
        files.load_into(conn.client)
    except Exception as e:
        raise ConfigError(f"cannot read known_hosts file: {reason(e)}") from e
    conn.client.set_missing_host_key_policy(HostKeyPolicy(files, accept_new=accept_new))
    # Not an attribute on the Connection: Fabric would store unknown attributes in its
    # config (DataProxy) and copy them to every hop.
    hop_files[id(conn)] = files

    kwargs = dict(conn.connect_kwargs)
    if identity is not None:
        keys = [os.path.expanduser(identity)]
    else:
        # OpenSSH silently skips IdentityFile entries that do not exist; Paramiko would
        # raise FileNotFoundError mid-handshake.
        keys = [k for k in kwargs.get("key_filename") or [] if os.path.isfile(k)]
    if keys:
        kwargs["key_filename"] = keys
    else:
        kwargs.pop("key_filename", None)
    if str(cfg.get("identitiesonly", "no")).lower() == "yes" and keys:
        kwargs["allow_agent"] = False
        kwargs["look_for_keys"] = False
    # Fabric would int() the connect timeout (0.5 -> no timeout); pass ours to Paramiko.
    conn.connect_timeout = None
    kwargs["timeout"] = connect_timeout
    # A little shorter than the handshake's own timeout, so that a silent port reports
    # the missing banner rather than Paramiko's vague "No existing session".
    kwargs["banner_timeout"] = connect_timeout * 0.9
    kwargs["auth_timeout"] = connect_timeout
    kwargs["channel_timeout"] = connect_timeout
    conn.connect_kwargs = kwargs


def open_hops(conn: Any, hop_files: dict[int, Any]) -> None:
    """Connect every hop, innermost first, so errors can name the hop that failed."""
    for hop in reversed(list(chain(conn))):
        try:
            hop.open()
        except HostKeyError:
            raise
        except Exception as e:
            files = hop_files.get(id(hop))
            raise connect_error(e, hop, files, jump=hop is not conn) from e
    for hop in chain(conn):
        hop.transport.set_keepalive(KEEPALIVE_S)
        tune_socket(hop.transport.sock)


def chain(conn: Any) -> Iterator[Any]:
    """The Connection, then each ProxyJump hop it goes through (outermost last)."""
    while conn is not None and not isinstance(conn, (str, bool)):
        yield conn
        conn = conn.gateway


def quiet_paramiko_logging() -> None:
    """Keep Paramiko's own error logs (with tracebacks) off the user's terminal.

    Its transport thread logs every failed handshake at ERROR with a traceback; with no
    logging configured, Python's last-resort handler prints that to stderr, next to the one
    clear line we report for the same failure. Left alone if someone set a level on purpose
    (``logging.getLogger("paramiko").setLevel(logging.DEBUG)`` to debug a connection).
    """
    logger = logging.getLogger("paramiko")
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.CRITICAL)
        logger.addHandler(logging.NullHandler())


def tune_socket(sock: Any) -> None:
    """TCP keepalive + user timeout: a vanished peer fails the socket instead of hanging it."""
    if not isinstance(sock, socket.socket):
        return  # ProxyJump channel or ProxyCommand: the outer hop's socket carries it
    opts = [(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)]
    for name, value in (
        ("TCP_KEEPIDLE", KEEPALIVE_S),
        ("TCP_KEEPINTVL", 5),
        ("TCP_KEEPCNT", 3),
        ("TCP_USER_TIMEOUT", TCP_USER_TIMEOUT_S * 1000),
    ):
        if hasattr(socket, name):
            opts.append((socket.IPPROTO_TCP, getattr(socket, name), value))
    for level, opt, value in opts:
        with contextlib.suppress(OSError):
            sock.setsockopt(level, opt, value)


def connect_error(e: BaseException, conn: Any, files: Any, *, jump: bool) -> HarnessError:
    """Map one hop's connect failure to a domain error naming user@host:port and the fix."""
    import paramiko
    from paramiko.ssh_exception import NoValidConnectionsError

    from harness.targets.hostkeys import KnownHostsFiles, changed_key_error

    host, port, user = conn.host, int(conn.port), conn.user
    where = f"{host}:{port}" + (" (ProxyJump hop)" if jump else "")
    timeout = conn.connect_kwargs.get("timeout")
    if isinstance(e, paramiko.BadHostKeyException):
        return changed_key_error(
            host, port, e.expected_key, e.key, files or KnownHostsFiles.resolve(None)
        )
    if isinstance(e, paramiko.PasswordRequiredException):
        return ConnectError(
            f"authentication failed for {user}@{where}: the private key is encrypted",
            hint="load it into ssh-agent (ssh-add KEYFILE) and rerun",
        )
    if isinstance(e, paramiko.AuthenticationException):
        keys = conn.connect_kwargs.get("key_filename") or []
        tried = ", ".join(keys) if keys else "no identity file"
        agent = "ssh-agent" if os.environ.get("SSH_AUTH_SOCK") else "no ssh-agent running"
        return ConnectError(
            f"authentication failed for {user}@{where}",
            hint=f"tried {tried}; {agent}. Set 'identity' in hosts.toml or IdentityFile in "
            f"~/.ssh/config to a key in {user}'s authorized_keys on the host",
        )
    if isinstance(e, NoValidConnectionsError):
        return ConnectError(
            f"connection refused by {where}",
            hint="is sshd running there, and is the port right?",
        )
    if isinstance(e, socket.gaierror):
        return ConnectError(
            f"cannot resolve host name {host!r}" + (" (ProxyJump hop)" if jump else ""),
            hint="check 'address' in hosts.toml or HostName in ~/.ssh/config",
        )
    if isinstance(e, (socket.timeout, TimeoutError)):
        return ConnectError(
            f"timed out connecting to {where} after {timeout:g}s",
            hint="is the host up and the port reachable from here (VPN, firewall)? "
            f"If it is only slow: {MORE_CONNECT_TIME}",
        )
    if isinstance(e, paramiko.ChannelException):
        return ConnectError(
            f"the ProxyJump hop could not open a tunnel to {where}: {reason(e)}",
            hint="check the jump host can reach it and allows TCP forwarding",
        )
    if isinstance(e, paramiko.SSHException):
        # The handshake runs in Paramiko's transport thread; the caller may only see a vague
        # "No existing session" while the thread saved the real cause (e.g. no banner).
        transport = conn.client.get_transport()
        cause = transport.get_exception() if transport is not None else None
        text = reason(cause or e)
        if "banner" in text.lower():
            return ConnectError(
                f"{where} did not answer as an SSH server ({text})",
                hint="is the port right? is the server overloaded (MaxStartups)? If it is "
                f"only slow: {MORE_CONNECT_TIME}",
            )
        if "no existing session" in text.lower():
            return ConnectError(
                f"SSH handshake with {where} did not finish within {timeout:g}s",
                hint=f"the server or the link is very slow; {MORE_CONNECT_TIME}",
            )
        return ConnectError(f"SSH handshake with {where} failed: {text}")
    if isinstance(e, EOFError):
        return ConnectError(f"{where} closed the connection during the SSH handshake")
    if isinstance(e, OSError):
        return ConnectError(f"cannot connect to {where}: {e.strerror or reason(e)}")
    return ConnectError(f"cannot connect to {user}@{where}: {reason(e)}")


def sftp_error(e: BaseException, label: str, path: str) -> tuple[HarnessError, bool]:
    """One SFTP failure as a domain error, and whether the link is presumed dead."""
    import paramiko

    if isinstance(e, HarnessError):
        return e, False
    if isinstance(e, OSError) and e.errno is not None:
        if e.errno == errno.ENOENT:
            return TargetError(f"{label}: no such file {path}"), False
        if e.errno == errno.EACCES:
            return TargetError(f"{label}: permission denied reading {path}"), False
        return TargetError(f"{label}: cannot read {path}: {e.strerror or e}"), False
    drop = isinstance(e, (socket.timeout, TimeoutError, paramiko.SSHException, EOFError, OSError))
    if isinstance(e, (socket.timeout, TimeoutError)):
        return ConnectError(
            f"{label} did not answer an SFTP request for {path} within {SFTP_TIMEOUT_S:g}s",
            hint="the host or the link may be down; rerun to reconnect",
        ), drop
    if isinstance(e, (paramiko.SSHException, EOFError, OSError)):
        # Paramiko's words for a dead link: "Server connection dropped", EOFError,
        # socket.error("Socket is closed") (an OSError without errno).
        return ConnectError(
            f"connection to {label} lost while reading {path}: {reason(e)}",
            hint="rerun; the next access reconnects",
        ), drop
    return TargetError(f"{label}: cannot read {path}: {reason(e)}"), drop
