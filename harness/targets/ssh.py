"""A host from hosts.toml, reached over one SSH connection (Fabric for config, Paramiko for I/O).

Why it is built the way it is:

* **One connection per process.** The TCP + key exchange + auth handshake costs more than most
  commands we run, so it is made lazily on first use and reused for every command and for the
  single SFTP session (a stat is ~5 ms, an exec ~100 ms on loopback).
* **Fabric only to connect.** ``fabric.Connection`` resolves ``~/.ssh/config`` (aliases,
  HostName, User, Port, IdentityFile, ProxyJump); commands then go straight onto a Paramiko
  session channel, because Fabric's ``run()`` (watchers, threads, per-byte decoding) is ~70x
  slower on large output.
* **Host keys verified.** Fabric hard-codes ``AutoAddPolicy``; we replace it with
  :class:`harness.targets.hostkeys.HostKeyPolicy` on every hop before connecting.
* **No hangs, no tracebacks.** Every wait has a deadline or a liveness check (SSH keepalive,
  TCP keepalive, channel timeouts); every socket/Paramiko failure becomes a
  :class:`~harness.errors.ConnectError` / :class:`~harness.errors.TargetError` naming the host.
* **One connection across processes, too** (:mod:`harness.targets.mux`). Importing Paramiko
  and the handshake cost ~0.6 s per ``harness`` process, more than the remote work. So a
  target first looks for a live mux server for its host and, if there is one, sends its
  requests there without importing Paramiko. Otherwise it connects directly (so host-key and
  auth errors appear in the foreground as before) and, when closed with the link still
  healthy, starts that server for the next command. ``HARNESS_SSH_PERSIST=0`` turns it off.

Fabric and Paramiko are imported inside methods only: importing this module must stay cheap
(``harness --help``).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import select
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from harness.config import HostConfig
from harness.errors import ConfigError, ConnectError, HarnessError, HostKeyError, TargetError
from harness.targets import shell
from harness.targets.base import CommandResult, FileStat, Target

if TYPE_CHECKING:
    from harness.targets.mux import MuxClient

_T = TypeVar("_T")

#: Seconds between SSH keepalive packets; a dead link then fails a write instead of idling.
KEEPALIVE_S = 15
#: A socket with unacknowledged data for this long is declared dead (Linux TCP_USER_TIMEOUT).
TCP_USER_TIMEOUT_S = 60
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


class SshTarget(Target):
    """A ``[hosts.NAME]`` entry: run argv lists and read files over one SSH connection.

    Args:
        host: the host's config; ``user``/``port``/``identity``/``known_hosts`` set there win
            over ``~/.ssh/config``, which fills in what is left ``None``.
        accept_new_host_key: append an unknown host key to known_hosts instead of refusing
            (``--accept-new-host-key``); a *changed* key is refused regardless.
        connect_timeout: seconds allowed for TCP connect, SSH banner and authentication each.
        ssh_config_path: read this ssh_config instead of ``~/.ssh/config`` +
            ``/etc/ssh/ssh_config`` (like ``ssh -F``).
        persist: share connections between processes through a mux server
            (:mod:`harness.targets.mux`), unless ``$HARNESS_SSH_PERSIST`` is ``0``. The mux
            server's own target passes ``False``.
        reconnect: reconnect on the next call after the link dropped. The mux server passes
            ``False``: it must end with its link, not reconnect in the background, where no
            one would see a host-key or auth error.
    """

    def __init__(
        self,
        host: HostConfig,
        *,
        accept_new_host_key: bool = False,
        connect_timeout: float = 10.0,
        ssh_config_path: str | None = None,
        persist: bool = True,
        reconnect: bool = True,
    ) -> None:
        self.host = host
        self.accept_new_host_key = accept_new_host_key
        self.connect_timeout = connect_timeout
        self.ssh_config_path = ssh_config_path
        self.persist = persist
        self.reconnect = reconnect
        self._lock = threading.RLock()
        #: Paramiko's SFTPClient is not safe for concurrent requests (a thread waiting for
        #: its reply can consume and drop another thread's); the mux server has many callers.
        self._sftp_lock = threading.Lock()
        self._conn: Any = None  # fabric.Connection, built (not necessarily open)
        self._sftp: Any = None  # paramiko.SFTPClient, opened on first file access
        self._label: str | None = None
        self._ever_connected = False
        #: known_hosts files per hop (keyed by id(Connection)), for changed-key messages.
        self._hop_files: dict[int, Any] = {}
        self._route_decided = False  # looked for a mux server since the last close()?
        self._mux: MuxClient | None = None  # the server this target talks through
        self._spawn_path: str | None = None  # start a server there on close()

    # -- naming ---------------------------------------------------------------------------

    @property
    def label(self) -> str:
        """``name (user@host:port)`` after ``~/.ssh/config``, e.g. ``gpu (root@10.0.0.5:22)``."""
        if self._label is None and self.persist:
            # A live mux server knows the label: no Fabric import. A bad
            # $HARNESS_SSH_PERSIST is reported by the call that needs the connection.
            with contextlib.suppress(HarnessError):
                self._mux_route()
        if self._label is None:
            try:
                user, addr, port = self.endpoint()
            except HarnessError:
                # The config itself is broken; still give messages a readable name.
                user = self.host.user or "?"
                addr, port = self.host.address, self.host.port or 22
            self._label = f"{self.host.name} ({user}@{addr}:{port})"
        return self._label

    @label.setter
    def label(self, value: str) -> None:
        self._label = value

    def endpoint(self) -> tuple[str, str, int]:
        """``(user, hostname, port)`` after ``~/.ssh/config`` is applied; no network."""
        conn = self._connection()
        return conn.user, conn.host, int(conn.port)

    # -- Target interface -----------------------------------------------------------------

    def python_argv(self) -> list[str]:
        return [self.host.python]

    def run_python(self, code: str, stdin: bytes, timeout: float | None = None) -> CommandResult:
        """Probes: through the kept connection's warm worker when there is one."""
        python = self.host.python
        shared = self._via_mux(lambda mux: mux.run_python(code, stdin, timeout, python))
        if not isinstance(shared, _NoMux):
            return shared
        return super().run_python(code, stdin, timeout)

    def run(
        self,
        argv: Sequence[str],
        *,
        stdin: bytes | None = None,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> CommandResult:
        """Run ``argv`` on the host, in ``cwd`` with ``env`` added to the login environment.

        hosts.toml's ``workdir`` and ``env`` are for pipeline runs, which pass them here; a
        probe must work even where the workdir does not exist yet.

        The argv is quoted by :mod:`harness.targets.shell` and ``exec``'d by the remote
        shell, which first reports its pid on stderr (stripped from the result): on timeout
        that process group is SIGKILLed, so nothing is left running on the box.

        Returns:
            The result; ``exit_code`` is -1 when the program was killed by a signal
            (Paramiko does not decode OpenSSH's ``exit-signal``).

        Raises:
            ConnectError: cannot connect, or the link died before the command finished.
            TargetError: the command ran past ``timeout`` seconds (it is killed).
        """
        argv = tuple(argv)
        shared = self._via_mux(
            lambda mux: mux.run(argv, stdin=stdin, timeout=timeout, env=env, cwd=cwd)
        )
        if not isinstance(shared, _NoMux):
            return shared
        line = shell.command(argv, env=env or None, cwd=cwd, exec_=True, report_pid=True)
        transport = self.transport()
        start = time.monotonic()
        deadline = None if timeout is None else start + timeout
        try:
            chan = transport.open_session(window_size=WINDOW_SIZE, timeout=self.connect_timeout)
        except Exception as e:
            raise self._link_error(e, argv) from e
        try:
            try:
                chan.exec_command(line)
                stdout, stderr = _pump(chan, stdin, deadline)
                status = _wait_status(chan, transport, deadline, stderr)
            except _Deadline as d:
                chan.close()
                self._kill_group(shell.split_pid(d.stderr)[0])
                raise TargetError(
                    f"{argv[0]} on {self.label} timed out after {timeout:g}s",
                    hint="it was killed (with its children); allow more time if it is just slow",
                ) from None
            except Exception as e:
                raise self._link_error(e, argv) from e
        finally:
            chan.close()
        if status == -1 and (not chan.eof_received or not transport.is_active()):
            self._disconnect()  # the next call reconnects
            raise ConnectError(
                f"connection to {self.label} lost while running {argv[0]}",
                hint="the command may still be running there, or have been killed with "
                "the session; check the host",
            )
        _, stderr = shell.split_pid(stderr)
        return CommandResult(argv, status, stdout, stderr, time.monotonic() - start)

    def _kill_group(self, pid: int | None) -> None:
        """Best effort: SIGKILL a timed-out command's process group from a second session.

        Closing the channel alone would leave a program that does not write (a hung import,
        a sleep) running on the GPU box. OpenSSH's ``signal`` channel request would be the
        tidy way, but sshd refuses it for root logins, which GPU boxes often use.
        """
        if pid is None or pid <= 1:
            return
        try:
            chan = self.transport().open_session(timeout=self.connect_timeout)
            try:
                # The login shell's builtin kill: it accepts "-9 -PGID" in sh, dash, bash, zsh.
                chan.exec_command(shell.command(["kill", "-9", f"-{pid}"]))
                _pump(chan, None, time.monotonic() + self.connect_timeout)
            finally:
                chan.close()
        except Exception:
            pass  # the timeout is the error worth reporting, not a failed cleanup

    def read_bytes(self, path: str) -> bytes:
        """Read a whole file through the connection's one SFTP session (prefetched)."""
        shared = self._via_mux(lambda mux: mux.read_bytes(path))
        if not isinstance(shared, _NoMux):
            return shared
        sftp = self.sftp()
        _quiet_prefetch_thread()
        try:
            with self._sftp_lock, sftp.open(path, "rb") as f:
                f.prefetch()
                data: bytes = f.read()
                return data
        except Exception as e:
            raise self._file_error(e, path) from e

    def stat(self, path: str) -> FileStat | None:
        """Stat ``path`` (following symlinks) over SFTP; ``None`` when it does not exist."""
        shared = self._via_mux(lambda mux: mux.stat(path))
        if not isinstance(shared, _NoMux):
            return shared
        sftp = self.sftp()
        try:
            with self._sftp_lock:
                st = sftp.stat(path)
        except FileNotFoundError:
            return None
        except Exception as e:
            raise self._file_error(e, path) from e
        return FileStat(path, int(st.st_size or 0), int(st.st_mode or 0), float(st.st_mtime or 0))

    def close(self) -> None:
        """Close the connection (SFTP, ProxyJump hops); safe to call twice.

        If this target connected directly and the link is still healthy, a mux server is
        started now -- after the work, so the foreground command is not slowed -- and the
        next ``harness`` command for this host reuses its connection.
        """
        with self._lock:
            spawn = self._spawn_path if self.connected else None
            self._spawn_path = None
            self._route_decided = False
            self._mux = None
        self._disconnect()
        if spawn is not None:
            self._spawn_mux(spawn)

    @property
    def connected(self) -> bool:
        """A direct connection is open and its transport alive (no I/O, no reconnect)."""
        conn = self._conn
        transport = None if conn is None else conn.transport
        return transport is not None and bool(transport.is_active())

    def _disconnect(self) -> None:
        """Close SFTP, the connection and any ProxyJump hops; safe to call twice."""
        with self._lock:
            sftp, conn = self._sftp, self._conn
            self._sftp = self._conn = None
        # Closing a dead session must not mask the error that brought us here.
        if sftp is not None:
            with contextlib.suppress(Exception):
                sftp.close()
        for hop in _chain(conn):
            with contextlib.suppress(Exception):
                hop.close()
        self._hop_files.clear()

    # -- connection -----------------------------------------------------------------------

    def connect(self) -> None:
        """Connect now (otherwise the first run/read does); a no-op when connected."""
        self.transport()

    def transport(self) -> Any:
        """The live ``paramiko.Transport``, connecting (or reconnecting after a drop) first."""
        with self._lock:
            conn = self._conn
            if conn is not None and conn.transport is not None and conn.transport.is_active():
                return conn.transport
            if conn is not None and conn.transport is not None:
                self._disconnect()  # the link died earlier: start over with a fresh connection
            if self._ever_connected and not self.reconnect:
                raise ConnectError(
                    f"connection to {self.label} lost",
                    hint="rerun; the next command reconnects",
                )
            conn = self._connection()
            self._open(conn)
            self._ever_connected = True
            return conn.transport

    def sftp(self) -> Any:
        """The connection's one ``paramiko.SFTPClient``, opened on first use."""
        transport = self.transport()
        with self._lock:
            if self._sftp is None:
                try:
                    sftp = transport.open_sftp_client()
                except Exception as e:
                    raise ConnectError(
                        f"cannot open an SFTP session on {self.label}: {_reason(e)}",
                        hint="the server needs an sftp Subsystem (OpenSSH has one by default)",
                    ) from e
                sftp.get_channel().settimeout(SFTP_TIMEOUT_S)
                self._sftp = sftp
            return self._sftp

    def _connection(self) -> Any:
        """Build (once) the Fabric ``Connection`` with our policy, keys and timeouts; no I/O."""
        with self._lock:
            if self._conn is None:
                self._conn = self._build_connection()
            return self._conn

    def _build_connection(self) -> Any:
        import paramiko
        from fabric import Config, Connection

        _quiet_paramiko_logging()
        where = self.host.source or f"hosts.{self.host.name}"
        try:
            config = Config(runtime_ssh_path=self.ssh_config_path)
        except FileNotFoundError as e:
            raise ConfigError(f"ssh config file {self.ssh_config_path} not found") from e
        except (paramiko.SSHException, ValueError, OSError) as e:
            raise ConfigError(f"cannot read ssh config: {_reason(e)}") from e
        try:
            conn = Connection(
                self.host.address, user=self.host.user, port=self.host.port, config=config
            )
        except (ValueError, paramiko.SSHException) as e:
            raise ConfigError(f"{where}: bad address {self.host.address!r}: {e}") from e

        identity = self.host.identity
        if identity is not None:
            self._check_identity(identity, self.host.where.get("identity") or where)
        for hop in _chain(conn):
            self._harden(hop, identity if hop is conn else None)
        return conn

    @staticmethod
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

    def _harden(self, conn: Any, identity: str | None) -> None:
        """Put our host-key policy, known_hosts, keys and timeouts on one (hop) Connection."""
        from harness.targets.hostkeys import HostKeyPolicy, KnownHostsFiles

        cfg = conn.ssh_config
        user_file = (cfg.get("userknownhostsfile") or "").split()
        files = KnownHostsFiles.resolve(
            self.host.known_hosts,
            ssh_config_file=user_file[0] if user_file else None,
            hash_names=str(cfg.get("hashknownhosts", "no")).lower() == "yes",
        )
        try:
            files.load_into(conn.client)
        except Exception as e:
            raise ConfigError(f"cannot read known_hosts file: {_reason(e)}") from e
        conn.client.set_missing_host_key_policy(
            HostKeyPolicy(files, accept_new=self.accept_new_host_key)
        )
        # Not an attribute on the Connection: Fabric would store unknown attributes in its
        # config (DataProxy) and copy them to every hop.
        self._hop_files[id(conn)] = files

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
        kwargs["timeout"] = self.connect_timeout
        # A little shorter than the handshake's own timeout, so that a silent port reports
        # the missing banner rather than Paramiko's vague "No existing session".
        kwargs["banner_timeout"] = self.connect_timeout * 0.9
        kwargs["auth_timeout"] = self.connect_timeout
        kwargs["channel_timeout"] = self.connect_timeout
        conn.connect_kwargs = kwargs

    def _open(self, conn: Any) -> None:
        """Connect every hop, innermost first, so errors can name the hop that failed."""
        try:
            for hop in reversed(list(_chain(conn))):
                try:
                    hop.open()
                except HostKeyError:
                    raise
                except Exception as e:
                    files = self._hop_files.get(id(hop))
                    raise _connect_error(e, hop, files, jump=hop is not conn) from e
        except BaseException:
            self._disconnect()
            raise
        for hop in _chain(conn):
            hop.transport.set_keepalive(KEEPALIVE_S)
            _tune_socket(hop.transport.sock)

    # -- connection sharing (harness.targets.mux) -----------------------------------------

    def _via_mux(self, call: Callable[[MuxClient], _T]) -> _T | _NoMux:
        """``call`` through the host's mux server; :data:`_NO_MUX` means: do it directly.

        A server that vanished before it received the request ran nothing, so the caller
        falls back to a direct connection (and this target starts a new server on close).
        A ConnectError (the server's link died mid-request) is the caller's, as it would be
        on a direct connection; the next call looks afresh.
        """
        mux = self._mux_route()
        if mux is None:
            return _NO_MUX
        from harness.targets.mux import MuxUnavailable, debug

        try:
            return call(mux)
        except MuxUnavailable as e:
            debug(f"{self.host.name}: mux server at {mux.path} went away ({e}); connecting")
            with self._lock:
                self._mux = None
                self._spawn_path = mux.path
            return _NO_MUX
        except ConnectError:
            with self._lock:
                self._route_decided = False
                self._mux = None
            raise

    def _mux_route(self) -> MuxClient | None:
        """The live mux server to use, decided once per connection; ``None``: go direct."""
        if not self.persist:
            return None
        with self._lock:
            if not self._route_decided:
                self._route_decided = True
                self._mux = self._attach_mux()
            return self._mux

    def _attach_mux(self) -> MuxClient | None:
        """Find the host's live mux server, or note where to start one after going direct."""
        if self._conn is not None and self._conn.transport is not None:
            return None  # already connected directly in this process: keep using that
        from harness.targets import mux

        if mux.persist_seconds() <= 0:
            return None
        path = mux.socket_path(self.host, self.ssh_config_path)
        if path is None:
            mux.debug(f"{self.host.name}: no private socket folder; connecting directly")
            return None
        expect = mux.identity_of(self.host, self.ssh_config_path).to_dict()
        client = mux.MuxClient.attach(path, wait=self.connect_timeout + 5.0, expect=expect)
        if client is None:
            self._spawn_path = path
            mux.debug(f"{self.host.name}: connecting directly")
            return None
        if self._label is None:
            self._label = client.label
        mux.debug(f"{self.host.name}: via mux {path} (pid {client.pid})")
        return client

    def _spawn_mux(self, path: str) -> None:
        """Best effort: the command already worked; a failed start only costs speed later."""
        from harness.targets import mux

        try:
            pid = mux.spawn(
                self.host,
                path=path,
                ssh_config_path=self.ssh_config_path,
                connect_timeout=self.connect_timeout,
                idle=mux.persist_seconds(),
            )
        except (OSError, HarnessError) as e:
            mux.debug(f"{self.host.name}: cannot start a mux server: {e}")
            return
        mux.debug(f"{self.host.name}: started mux server pid {pid} for {path}")

    # -- error mapping --------------------------------------------------------------------

    def _link_error(self, e: BaseException, argv: Sequence[str]) -> HarnessError:
        if isinstance(e, HarnessError):
            return e
        # Paramiko may still call the transport active for a moment; start afresh next time.
        self._disconnect()
        return ConnectError(
            f"connection to {self.label} lost while running {argv[0]}: {_reason(e)}",
            hint="rerun; if it keeps happening, check the network and the host's sshd",
        )

    def _file_error(self, e: BaseException, path: str) -> HarnessError:
        import paramiko

        if isinstance(e, HarnessError):
            return e
        if isinstance(e, OSError) and e.errno is not None:
            if e.errno == errno.ENOENT:
                return TargetError(f"{self.label}: no such file {path}")
            if e.errno == errno.EACCES:
                return TargetError(f"{self.label}: permission denied reading {path}")
            return TargetError(f"{self.label}: cannot read {path}: {e.strerror or e}")
        if isinstance(e, (socket.timeout, TimeoutError, paramiko.SSHException, EOFError, OSError)):
            # Paramiko may still call the transport active for a moment; start afresh next time.
            self._disconnect()
        if isinstance(e, (socket.timeout, TimeoutError)):
            return ConnectError(
                f"{self.label} did not answer an SFTP request for {path} "
                f"within {SFTP_TIMEOUT_S:g}s",
                hint="the host or the link may be down; rerun to reconnect",
            )
        if isinstance(e, (paramiko.SSHException, EOFError, OSError)):
            # Paramiko's words for a dead link: "Server connection dropped", EOFError,
            # socket.error("Socket is closed") (an OSError without errno).
            return ConnectError(
                f"connection to {self.label} lost while reading {path}: {_reason(e)}",
                hint="rerun; the next access reconnects",
            )
        return TargetError(f"{self.label}: cannot read {path}: {_reason(e)}")


# -- helpers (module level: small, and testable on their own) ------------------------------


class _NoMux:
    """Sentinel type: no mux server took the request; do it over a direct connection."""


_NO_MUX = _NoMux()


class _Deadline(Exception):
    """Internal: the caller's timeout passed while the command was still running."""

    def __init__(self, stderr: bytes = b"") -> None:
        super().__init__("deadline")
        self.stderr = stderr  # what arrived so far: it holds the pid line


def _chain(conn: Any) -> Iterator[Any]:
    """The Connection, then each ProxyJump hop it goes through (outermost last)."""
    while conn is not None and not isinstance(conn, (str, bool)):
        yield conn
        conn = conn.gateway


def _pump(chan: Any, stdin: bytes | None, deadline: float | None) -> tuple[bytes, bytes]:
    """Feed stdin and drain stdout and stderr together until the remote side sends EOF.

    Both streams are read in one loop (and stdin is written in the same loop, never with a
    blocking ``sendall``) so that a full window on any of the three cannot deadlock the
    others. ``select`` on the channel's pipe wakes us when data, EOF or close arrive.
    """
    out, err = bytearray(), bytearray()
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
                raise _Deadline(bytes(err))
        if pos < len(data):
            wait = min(wait, 0.005)  # window full: poll, the pipe only signals reads
        select.select([chan], [], [], wait)


def _wait_status(chan: Any, transport: Any, deadline: float | None, stderr: bytes) -> int:
    """Wait for exit-status (or close) after EOF; -1 when the server sent none.

    EOF comes first when the program closed its output but has not exited yet.
    """
    while not chan.status_event.wait(0.5):
        if not transport.is_active():
            break
        if deadline is not None and time.monotonic() > deadline:
            raise _Deadline(stderr)
    return int(chan.exit_status)


def _quiet_paramiko_logging() -> None:
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


def _quiet_prefetch_thread() -> None:
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


def _tune_socket(sock: Any) -> None:
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


def _reason(e: BaseException) -> str:
    """A one-line reason from any exception (some Paramiko ones have empty str())."""
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0]


def _connect_error(e: BaseException, conn: Any, files: Any, *, jump: bool) -> HarnessError:
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
            hint="is the host up and the port reachable from here (VPN, firewall)?",
        )
    if isinstance(e, paramiko.ChannelException):
        return ConnectError(
            f"the ProxyJump hop could not open a tunnel to {where}: {_reason(e)}",
            hint="check the jump host can reach it and allows TCP forwarding",
        )
    if isinstance(e, paramiko.SSHException):
        # The handshake runs in Paramiko's transport thread; the caller may only see a vague
        # "No existing session" while the thread saved the real cause (e.g. no banner).
        transport = conn.client.get_transport()
        cause = transport.get_exception() if transport is not None else None
        text = _reason(cause or e)
        if "banner" in text.lower():
            return ConnectError(
                f"{where} did not answer as an SSH server ({text})",
                hint="is the port right? is the server overloaded (MaxStartups)?",
            )
        if "no existing session" in text.lower():
            return ConnectError(
                f"SSH handshake with {where} did not finish within {timeout:g}s",
                hint="the server or the link is very slow; raise the connect timeout",
            )
        return ConnectError(f"SSH handshake with {where} failed: {text}")
    if isinstance(e, EOFError):
        return ConnectError(f"{where} closed the connection during the SSH handshake")
    if isinstance(e, OSError):
        return ConnectError(f"cannot connect to {where}: {e.strerror or _reason(e)}")
    return ConnectError(f"cannot connect to {user}@{where}: {_reason(e)}")
