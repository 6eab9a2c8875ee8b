"""The mux wire format: one frame is a ``!IQ`` prefix, a JSON header, then named byte parts.

No pickle: a peer can make us allocate, never run code. Errors travel as ``{"type", "message",
"hint"}`` and are raised again as the same :mod:`harness.errors` class. Stdlib only.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import struct
from collections.abc import Mapping, Sequence
from typing import Any

from harness import errors
from harness.errors import HarnessError, TargetError
from harness.targets.ssh.entry import HostConfig

#: Bumped when the framing or the request set changes (it is part of the socket name too).
#: 2: the hello carries the server's identity; a probe request names its interpreter.
#: 3: ``stream`` requests (a command's output relayed as it comes).
PROTOCOL = 3
#: A header is JSON with an argv and an env in it; anything bigger is a broken peer.
MAX_HEADER = 16 * 1024 * 1024

_PREFIX = struct.Struct("!IQ")


def absolute(path: str | None) -> str | None:
    return None if path is None else os.path.abspath(os.path.expanduser(path))


class ProtocolError(Exception):
    """Internal: a peer sent something that is not a frame."""


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


def peer_is_us(sock: socket.socket) -> bool:
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


def error_to_wire(e: HarnessError) -> dict[str, Any]:
    return {"type": type(e).__name__, "message": e.message, "hint": e.hint}


def error_from_wire(err: Any) -> HarnessError:
    """The same HarnessError class the server raised (TargetError if the name is unknown)."""
    if not isinstance(err, dict):
        return TargetError("the harness mux server sent a malformed error")
    cls = getattr(errors, str(err.get("type")), None)
    if not (isinstance(cls, type) and issubclass(cls, HarnessError)):
        cls = TargetError
    hint = err.get("hint")
    return cls(str(err.get("message", "")), None if hint is None else str(hint))


def host_to_json(host: HostConfig) -> dict[str, Any]:
    """A HostConfig as plain JSON values (paths made absolute: the server runs elsewhere)."""
    data = {f.name: getattr(host, f.name) for f in dataclasses.fields(host)}
    data["env"] = dict(host.env)
    data["identity"] = absolute(host.identity)
    data["known_hosts"] = absolute(host.known_hosts)
    return data


def host_from_json(data: Mapping[str, Any]) -> HostConfig:
    names = {f.name for f in dataclasses.fields(HostConfig)}
    return HostConfig(**{k: v for k, v in data.items() if k in names})
