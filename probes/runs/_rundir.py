"""A run directory's records and the liveness of the processes they name.

Part of the run program (see :mod:`probes.runs.supervisor`): written into each run directory beside
``supervisor.py``, and shipped with the ``runs`` probe, whose operations read the same files.
Stdlib only; nothing here imports another probe.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from typing import Any

#: Set on the step; every descendant inherits it, even one that called ``setsid``.
RUN_ID_ENV = "HARNESS_RUN_ID"
#: Disk space a run sets aside at its start for its status and stop records (a step that
#: fills the disk would otherwise leave its run "lost"); given back when the run ends.
RESERVE = "reserve"
RESERVE_SIZE = 64 * 1024
#: Under this much space left, the filesystem is reported as full.
FULL_BELOW = 256 * 1024
#: smoke mode's ``sitecustomize`` lives here, inside the run directory, while the step runs
HOOK_DIR = "smoke-hook"


# -- small file helpers --------------------------------------------------------------------


def write_json_atomic(path: str, obj: Any) -> None:
    """temp file -> fsync -> rename -> fsync folder: a reader sees the old file or the new."""
    tmp = f"{path}.tmp{os.getpid()}"
    data = json.dumps(obj, indent=1, sort_keys=True).encode("utf-8")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    os.replace(tmp, path)
    with contextlib.suppress(OSError):
        dfd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def make_reserve(run_dir: str) -> None:
    """Set disk space aside for the run's own small records (status, verify, stop): a step
    that fills the disk must still get a status, and ``stop`` its stop.json."""
    with contextlib.suppress(OSError), open(os.path.join(run_dir, RESERVE), "wb") as f:
        f.write(b"\0" * RESERVE_SIZE)  # written, not sparse: the blocks are taken now
        f.flush()
        os.fsync(f.fileno())


def write_record(run_dir: str, name: str, obj: Any) -> bool:
    """:func:`write_json_atomic` into the run directory; on a full disk, give back part of
    the reserve and try again. True when the disk was full."""
    path, reserve = os.path.join(run_dir, name), os.path.join(run_dir, RESERVE)
    full = False
    while True:
        try:
            write_json_atomic(path, obj)
            return full
        except OSError as exc:
            if exc.errno != errno.ENOSPC or not os.path.exists(reserve):
                raise
            full = True
            size = os.path.getsize(reserve)
            if size <= RESERVE_SIZE // 4:
                os.unlink(reserve)
            else:
                os.truncate(reserve, size - RESERVE_SIZE // 4)


def space_left(path: str) -> int | None:
    """Bytes an unprivileged writer may still use on the filesystem holding ``path``."""
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def read_json(path: str) -> Any:
    """The parsed file, or ``None`` when it is missing or half-written (never raises)."""
    try:
        with open(path, "rb") as f:
            return json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError):
        return None


def read_text(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        return None


# -- /proc ---------------------------------------------------------------------------------


def parse_stat(text: str) -> dict[str, Any] | None:
    """Pure: ``/proc/PID/stat`` -> the fields we use; ``comm`` may hold spaces and parens."""
    head, sep, rest = text.rpartition(")")
    if not sep:
        return None
    pid_text, _, comm = head.partition(" (")
    fields = rest.split()
    try:
        return {
            "pid": int(pid_text),
            "comm": comm,
            "state": fields[0],
            "ppid": int(fields[1]),
            "pgrp": int(fields[2]),
            "session": int(fields[3]),
            "starttime": int(fields[19]),
        }
    except (IndexError, ValueError):
        return None


def proc_stat(pid: int) -> dict[str, Any] | None:
    text = read_text(f"/proc/{pid}/stat")
    return parse_stat(text) if text else None


def boot_id() -> str:
    """Changes on every reboot: a pid recorded before one means nothing after it."""
    return (read_text("/proc/sys/kernel/random/boot_id") or "").strip()


def is_alive(pid: Any, starttime: Any, boot: Any = None) -> bool:
    """The same process (pid *and* kernel start time, same boot) still exists, not a zombie."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    if boot and boot != boot_id():
        return False
    st = proc_stat(pid)
    if st is None or st["state"] in ("Z", "X"):
        return False
    return starttime is None or st["starttime"] == starttime


# -- a run's facts -------------------------------------------------------------------------


def run_facts(run_dir: str) -> dict[str, Any]:
    """What the laptop needs to name a run's state; the decision itself is made there."""
    sup = read_json(os.path.join(run_dir, "supervisor.json"))
    alive = None
    if isinstance(sup, dict):
        alive = is_alive(sup.get("pid"), sup.get("starttime"), sup.get("boot_id"))
    # Read the status *after* the liveness check: a supervisor that writes its status and
    # exits in between is then seen as finished, never as lost.
    status = read_json(os.path.join(run_dir, "status.json"))
    try:
        size = os.stat(os.path.join(run_dir, "log")).st_size
    except OSError:
        size = None
    return {
        "run_dir": run_dir,
        "record": read_json(os.path.join(run_dir, "run.json")),
        "supervisor": sup,
        "supervisor_alive": alive,
        "status": status,
        "stop": read_json(os.path.join(run_dir, "stop.json")),
        "log_size": size,
        "verify": read_json(os.path.join(run_dir, "verify.json")),
        "ready": read_json(os.path.join(run_dir, "ready.json")),  # a service's
        "progress": read_json(os.path.join(run_dir, "progress.json")),  # a budgeted step's
    }
