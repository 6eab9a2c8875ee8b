"""The SshTarget: run argv lists, read and stat files over one SSH connection (or a kept one).

Why it is built the way it is: see :mod:`harness.targets.ssh`.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from harness.errors import ConnectError, HarnessError, TargetError
from harness.targets import shell
from harness.targets.base import ByteStream, CommandResult, FileStat
from harness.targets.entries import EntryTarget
from harness.targets.ssh.channel import (
    SFTP_TIMEOUT_S,
    WINDOW_SIZE,
    ChannelStream,
    Deadline,
    Stopped,
    kill_group,
    pump,
    quiet_prefetch_thread,
    reason,
    wait_status,
)
from harness.targets.ssh.connect import build_connection, chain, open_hops, sftp_error
from harness.targets.ssh.entry import HostConfig
from harness.targets.ssh.sharing import NoMux, SharedConnection
from harness.targets.timeouts import MORE_TIME

if TYPE_CHECKING:
    from harness.targets.mux import MuxClient

_T = TypeVar("_T")


class SshTarget(SharedConnection, EntryTarget):
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

    kind = "ssh"
    on_this_machine = False

    @property
    def entry(self) -> HostConfig:
        return self.host

    @property
    def peer_address(self) -> str:
        return self.host.address

    def identity(self) -> dict[str, Any]:
        """The kept connection's identity (:mod:`harness.targets.identity`)."""
        from harness.targets.mux import identity_of

        return identity_of(self.host, self.ssh_config_path).to_dict()

    def stream(self, argv: Sequence[str]) -> ByteStream:
        """Through the kept connection's relay when there is one (no Paramiko import), else
        on a raw session channel of the direct connection."""
        argv = tuple(argv)
        shared = self._via_mux(lambda mux: mux.stream(argv, on_lost=self._forget_route))
        if not isinstance(shared, NoMux):
            return shared
        return ChannelStream(self.transport(), shell.command(argv), self.connect_timeout)

    def run_python(
        self, code: str, stdin: bytes, timeout: float | None = None, python: str | None = None
    ) -> CommandResult:
        """Probes: through the kept connection's warm worker when there is one."""
        python = python or self.host.python
        shared = self._via_mux(lambda mux: mux.run_python(code, stdin, timeout, python))
        if not isinstance(shared, NoMux):
            return shared
        return super().run_python(code, stdin, timeout, python)

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
        if not isinstance(shared, NoMux):
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
                stdout, stderr = pump(chan, stdin, deadline)
                status = wait_status(chan, transport, deadline, stderr)
            except Stopped as s:  # Ctrl-C: end it there too, then stop as asked
                chan.close()
                kill_group(self.transport(), shell.split_pid(s.stderr)[0], self.connect_timeout)
                raise
            except Deadline as d:
                chan.close()
                kill_group(self.transport(), shell.split_pid(d.stderr)[0], self.connect_timeout)
                raise TargetError(
                    f"{argv[0]} on {self.label} timed out after {timeout:g}s",
                    hint=f"it was killed (with its children); {MORE_TIME}",
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

    def read_bytes(self, path: str) -> bytes:
        """Read a whole file through the connection's one SFTP session (prefetched)."""
        shared = self._via_mux(lambda mux: mux.read_bytes(path))
        if not isinstance(shared, NoMux):
            return shared
        sftp = self.sftp()
        quiet_prefetch_thread()
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
        if not isinstance(shared, NoMux):
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
        for hop in chain(conn):
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
                        f"cannot open an SFTP session on {self.label}: {reason(e)}",
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
        return build_connection(
            self.host,
            self.ssh_config_path,
            accept_new=self.accept_new_host_key,
            connect_timeout=self.connect_timeout,
            hop_files=self._hop_files,
        )

    def _open(self, conn: Any) -> None:
        """Connect every hop (see :func:`.connect.open_hops`); on failure, close them all."""
        try:
            open_hops(conn, self._hop_files)
        except BaseException:
            self._disconnect()
            raise

    # -- error mapping --------------------------------------------------------------------

    def _link_error(self, e: BaseException, argv: Sequence[str]) -> HarnessError:
        if isinstance(e, HarnessError):
            return e
        # Paramiko may still call the transport active for a moment; start afresh next time.
        self._disconnect()
        return ConnectError(
            f"connection to {self.label} lost while running {argv[0]}: {reason(e)}",
            hint="rerun; if it keeps happening, check the network and the host's sshd",
        )

    def _file_error(self, e: BaseException, path: str) -> HarnessError:
        err, drop = sftp_error(e, self.label, path)
        if drop:
            # Paramiko may still call the transport active for a moment; start afresh next time.
            self._disconnect()
        return err
