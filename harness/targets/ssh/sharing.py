"""Connection sharing for an SshTarget: use the host's kept connection, or start one on close.

A mixin, so the route's state lives on the target itself (``_mux``, ``_spawn_path``,
``_route_decided``) beside its direct connection: one lock guards both. The client side of
:mod:`harness.targets.mux` is stdlib only, so a command that finds a live server imports no
Paramiko.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from harness.errors import ConnectError, HarnessError
from harness.targets.ssh.entry import HostConfig

if TYPE_CHECKING:
    from harness.targets.mux import MuxClient

_T = TypeVar("_T")


class NoMux:
    """Sentinel type: no mux server took the request; do it over a direct connection."""


NO_MUX = NoMux()


class SharedConnection:
    """The mux route of an SshTarget (see :mod:`harness.targets.mux`)."""

    host: HostConfig
    persist: bool
    ssh_config_path: str | None
    connect_timeout: float
    _lock: threading.RLock
    _conn: Any
    _label: str | None
    _route_decided: bool
    _mux: MuxClient | None
    _spawn_path: str | None

    def _via_mux(self, call: Callable[[MuxClient], _T]) -> _T | NoMux:
        """``call`` through the host's mux server; :data:`NO_MUX` means: do it directly.

        A server that vanished before it received the request ran nothing, so the caller
        falls back to a direct connection (and this target starts a new server on close).
        A ConnectError (the server's link died mid-request) is the caller's, as it would be
        on a direct connection; the next call looks afresh.
        """
        mux = self._mux_route()
        if mux is None:
            return NO_MUX
        from harness.targets.mux import MuxUnavailable, debug

        try:
            return call(mux)
        except MuxUnavailable as e:
            debug(f"{self.host.name}: mux server at {mux.path} went away ({e}); connecting")
            with self._lock:
                self._mux = None
                self._spawn_path = mux.path
            return NO_MUX
        except ConnectError:
            self._forget_route()
            raise

    def _forget_route(self) -> None:
        """The kept connection failed mid-request: look for a live one afresh next time."""
        with self._lock:
            self._route_decided = False
            self._mux = None

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
