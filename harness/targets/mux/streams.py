"""A streamed command through a kept connection: the server relays a session channel's
stdout (and, at the end, its stderr) to the client as frames; the client reads them as a
:class:`~harness.targets.base.ByteStream`.

One Unix connection per stream, held for its whole life (a run followed for days keeps the
server busy, so it never idles out under it). Frames after the request's ``started`` reply:
``data`` (a ``stdout`` part), ``end`` (the ``stderr`` part: the follower's end report) or
``lost`` (the server's SSH link dropped). The client closing its socket ends the command,
as closing a channel does. Stdlib only, like the rest of the client side.
"""

from __future__ import annotations

import contextlib
import select
import socket
from collections.abc import Callable

from harness.targets.base import ByteStream, LinkLost
from harness.targets.mux.wire import ProtocolError, recv_frame, send_frame

#: How long one relay step waits for the channel before it looks at the client again.
RELAY_POLL_S = 0.05
#: Longest wait for the rest of a frame once its first byte arrived.
FRAME_WAIT_S = 120.0


class MuxStream(ByteStream):
    """The client's end of a relayed stream; ``on_lost`` is told when the relay breaks."""

    def __init__(self, sock: socket.socket, on_lost: Callable[[], None]) -> None:
        self._sock = sock
        self._on_lost = on_lost
        self._err = b""
        self._ended = False

    def read(self, timeout: float) -> tuple[bytes, bool]:
        if self._ended:
            return b"", True
        try:
            ready, _, _ = select.select([self._sock], [], [], timeout)
            if not ready:
                return b"", False
            self._sock.settimeout(FRAME_WAIT_S)
            frame = recv_frame(self._sock)
        except (OSError, ProtocolError, ValueError) as e:
            raise self._lost(str(e) or type(e).__name__) from None
        if frame is None:
            raise self._lost("the harness mux server closed the stream")
        head, parts = frame
        op = head.get("op")
        if op == "data":
            return parts.get("stdout", b""), False
        if op == "end":
            self._err = parts.get("stderr", b"")
            self._ended = True
            return b"", True
        raise self._lost(str(head.get("reason") or f"unexpected frame {op!r}"))

    def _lost(self, reason: str) -> LinkLost:
        self._on_lost()
        return LinkLost(reason)

    def stderr(self) -> bytes:
        return self._err

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.close()


def relay(conn: socket.socket, source: ByteStream) -> None:
    """Server side: copy ``source`` to the client until it ends, breaks, or the client goes."""
    try:
        while True:
            try:
                data, ended = source.read(RELAY_POLL_S)
            except LinkLost as e:
                send_frame(conn, {"op": "lost", "reason": str(e)})
                return
            if data:
                send_frame(conn, {"op": "data"}, [("stdout", data)])
            if ended:
                send_frame(conn, {"op": "end"}, [("stderr", source.stderr())])
                return
            readable, _, _ = select.select([conn], [], [], 0)
            if readable and not conn.recv(1):
                return  # the client closed its end: stop the command
    finally:
        source.close()
