"""Who listens on a TCP port, read from /proc: a service's port is checked before its server
starts (anything already there is named, and the server is not started) and again when its
health answers (ready only when its own process tree holds the port) -- a kept server with
other settings on the same port must never be taken for the new one.

Part of the run program (see :mod:`probes.runs.supervisor`), copied into every run directory.
Stdlib only.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from probes.runs._proctree import all_pids, cmdline, environ_value
from probes.runs._rundir import RUN_ID_ENV, read_json

#: /proc/net/tcp's state column for a listening socket
_LISTEN = "0A"


def listening_inodes(port: int) -> set[str]:
    """The socket inodes listening on ``port`` (IPv4 and IPv6, any address)."""
    out = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii", errors="replace") as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            if len(cols) < 10 or cols[3] != _LISTEN:
                continue
            try:
                if int(cols[1].rsplit(":", 1)[1], 16) == port:
                    out.add(cols[9])
            except (IndexError, ValueError):
                continue
    return out


def listeners(port: int) -> list[dict[str, Any]]:
    """The processes listening on ``port``: ``{"pid", "command", "run_id"}`` each; a socket
    whose holder cannot be read (another user's) is ``{"pid": None, ...}``."""
    inodes = listening_inodes(port)
    if not inodes:
        return []
    wanted = {f"socket:[{i}]" for i in inodes}
    found, out = set(), []
    for pid in all_pids():
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if link in wanted:
                found.add(link)
                out.append({"pid": pid, "command": cmdline(pid, 200),
                            "run_id": environ_value(pid, RUN_ID_ENV)})  # fmt: skip
                break
    if found != wanted and not out:
        out.append({"pid": None, "command": "", "run_id": None})
    return out


def held_by(port: int, runs_root: str) -> str | None:
    """Words for whoever already listens on ``port`` (``None``: nobody): a harness run by its
    id, step and command; any other process by its pid and command."""
    got = listeners(port)
    if not got:
        return None
    first = got[0]
    run_id = first.get("run_id")
    if run_id:
        record = read_json(os.path.join(runs_root, os.path.basename(run_id), "run.json")) or {}
        argv = " ".join(str(a) for a in record.get("argv") or ()) or first["command"]
        step = record.get("step") or "?"
        return f"run {run_id} (step {step}: {argv})"
    if first.get("pid") is None:
        return "a process of another user"
    return f"pid {first['pid']} ({first['command']})"


def first_bytes(port: int, limit: int = 60, timeout: float = 2.0) -> str:
    """What ``port`` on 127.0.0.1 says first (an HTTP request sent if it waits): its first
    bytes, escaped as in a Python bytes literal."""
    data = b""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.settimeout(timeout)
            try:
                data = s.recv(limit)
            except OSError:
                data = b""
            if not data:
                s.sendall(b"GET / HTTP/1.0\r\n\r\n")
                data = s.recv(limit)
    except OSError:
        pass
    return repr(data[:limit].rstrip())[2:-1]  # b'...' without its b and quotes


def owned(port: int, members: set[int]) -> bool:
    """A process among ``members`` (a service's own tree) listens on ``port``."""
    return any(x.get("pid") in members for x in listeners(port))
