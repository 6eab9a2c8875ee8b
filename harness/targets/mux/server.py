"""The mux server: one connected SshTarget served on a Unix socket until idle, dropped or told.

Run as ``python -m harness.targets.mux serve CONFIG_JSON`` by :func:`~.client.spawn`. It
never reconnects by itself (reconnecting is the foreground's job, where errors are seen) and
never accepts a new host key.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
import time
import traceback
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from harness import __version__
from harness.errors import ConnectError, HarnessError, TargetError
from harness.targets.base import CommandResult, LinkLost
from harness.targets.mux.client import REPLY_SEND_S, REQUEST_WAIT_S
from harness.targets.mux.paths import (
    PERSIST_ENV,
    debug,
    name_lock,
    sibling,
)
from harness.targets.mux.streams import relay
from harness.targets.mux.wire import (
    PROTOCOL,
    ProtocolError,
    error_to_wire,
    peer_is_us,
    recv_frame,
    send_frame,
)
from harness.targets.timeouts import MORE_TIME

if TYPE_CHECKING:
    from harness.targets.ssh import SshTarget

#: How often the server checks its SSH link and its idle time.
POLL_S = 0.25
#: How long a server waits for in-flight requests to answer before it exits.
DRAIN_S = 5.0


def log(message: str) -> None:
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    sys.stderr.write(f"{stamp} harness-mux[{os.getpid()}] {message}\n")
    sys.stderr.flush()


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
        self._client = threading.local()  # the connection each handler thread serves
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
        with self._state:
            workers = list(self._workers.values())
        for worker in workers:  # one still starting (a hung interpreter) would outlive us
            if not worker.ready:
                worker.cancel()
                worker.settle(10.0)  # the probe waiting for it kills it: not after we exit
                worker.kill()  # (nothing left to do if it did)
        self.target.close()  # in-flight commands fail fast and answer ConnectError
        with self._state:
            self._state.wait_for(lambda: self._active == 0, timeout=DRAIN_S)
        log(f"exiting: {self._reason}")

    def retire(self, reason: str) -> None:
        """Remove our socket (so clients connect directly from now on) and ask to stop."""
        with self._state:
            if self._retired:
                return
            self._retired = True
            self._reason = reason
        with contextlib.suppress(OSError), name_lock(self.path):
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
                if not peer_is_us(conn):
                    log("dropped a connection from another user")
                    return
                if not self.target.connected or self._stop.is_set():
                    return  # no hello: the client connects directly, nothing ran here
                conn.settimeout(REQUEST_WAIT_S)
                self._client.conn = conn
                send_frame(conn, self._hello())
                request = recv_frame(conn)
                if request is None:
                    return  # a liveness check or an attach: hello was all it wanted
                conn.settimeout(None)
                if request[0].get("op") == "stream":
                    self._stream(conn, request[0])
                    return
                head, parts = self._dispatch(*request)
                conn.settimeout(REPLY_SEND_S)
                send_frame(conn, head, parts)
        except (OSError, ProtocolError) as e:
            log(f"client connection: {e}")
        finally:
            with self._state:
                self._active -= 1
                self._last = time.monotonic()
                self._state.notify_all()

    def _stream(self, conn: socket.socket, head: dict[str, Any]) -> None:
        """Start the command on the SSH connection and relay its output (see .streams)."""
        argv = head.get("argv")
        try:
            if not (isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv)):
                raise TargetError("harness mux: bad argv in request")
            source = self.target.stream(argv)
        except HarnessError as e:
            if isinstance(e, ConnectError):
                self.retire(f"connection lost: {e.message}")
            send_frame(conn, {"ok": False, "error": error_to_wire(e)})
            return
        except LinkLost as e:
            send_frame(conn, {"ok": False, "retry": True, "reason": str(e)})
            return
        send_frame(conn, {"ok": True, "op": "started"})
        relay(conn, source)

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
            return {"ok": False, "error": error_to_wire(e)}, []
        except Exception as e:
            log(f"request {op!r} failed:\n{traceback.format_exc()}")
            err = TargetError(
                f"{self.target.label}: the harness mux server failed: {str(e) or type(e).__name__}",
                hint=f"set {PERSIST_ENV}=0 to connect directly; server log: "
                f"{sibling(self.path, '.log')}",
            )
            return {"ok": False, "error": error_to_wire(err)}, []

    def _python(self, python: str, code: str, stdin: bytes, timeout: float | None) -> CommandResult:
        """``python`` runs ``code``: through its warm worker, or the plain exec, same result."""
        from harness.targets.zygote import Cancelled, ProbeWorker, WorkerBroken

        with self._state:
            worker = self._workers.get(python)
            if worker is None:
                worker = self._workers[python] = ProbeWorker(self.target.transport(), python)
        try:
            r: CommandResult = worker.call(
                code, stdin, timeout, getattr(self._client, "conn", None)
            )
        except Cancelled:  # the client hung up (Ctrl-C): the probe was ended there
            with self._state:
                self._workers.pop(python, None)
            raise TargetError("harness mux: the client went away; its probe was ended") from None
        except WorkerBroken as e:
            debug(f"probe worker: {e}; plain exec")
            return self.target.run([python, "-B", "-c", code], stdin=stdin, timeout=timeout)
        if r.exit_code == -9 and timeout is not None:
            raise TargetError(
                f"{python} on {self.target.label} timed out after {timeout:g}s",
                hint=f"it was killed (with its children); {MORE_TIME}",
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
