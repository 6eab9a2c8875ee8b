"""The processes of a run and of the GPUs, read from /proc: who holds a GPU device, which
processes belong to a run's step, and how a list of them is ended (TERM, grace, KILL).

Used by the ``runs`` probe's operations (preflight, holders, launch, stop); the run program
in a run directory never needs it, so it is not copied there.
"""

from __future__ import annotations

import glob
import os
import signal
import time
from typing import Any

from probes.runs._rundir import RUN_ID_ENV, is_alive, proc_stat

#: Processes that hold GPU device files by design; never stale, never killed.
GPU_DAEMONS = frozenset(
    {"nvidia-persistenced", "nvidia-smi", "nv-hostengine", "Xorg", "Xwayland", "dcgm"}
)


def all_pids() -> list[int]:
    try:
        return sorted(int(n) for n in os.listdir("/proc") if n.isdigit())
    except OSError:
        return []


def environ_value(pid: int, name: str) -> str | None:
    """One variable of another process's environment (needs the same uid, or root)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            data = f.read()
    except OSError:
        return None
    prefix = name.encode() + b"="
    for item in data.split(b"\0"):
        if item.startswith(prefix):
            return item[len(prefix) :].decode("utf-8", "replace")
    return None


def cmdline(pid: int, limit: int = 300) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read(limit * 4)
    except OSError:
        return ""
    text = raw.rstrip(b"\0").replace(b"\0", b" ").decode("utf-8", "replace")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def orphaned_runs(root: str) -> list[dict[str, Any]]:
    """Supervisors still running a run whose directory under ``root`` was deleted: each
    ``{"id", "pid", "starttime", "run_dir"}`` (a supervisor is ``python -B
    RUN_DIR/supervisor.py supervise RUN_DIR``; its run directory is its last argument)."""
    out = []
    for pid in all_pids():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read(65536).rstrip(b"\0").split(b"\0")
        except OSError:
            continue
        if len(argv) < 3 or argv[-2] != b"supervise" or not argv[-3].endswith(b"supervisor.py"):
            continue
        run_dir = os.fsdecode(argv[-1])
        st = proc_stat(pid)
        if os.path.dirname(run_dir) != root or os.path.isdir(run_dir) or st is None:
            continue
        if st["state"] not in ("Z", "X"):
            out.append(
                {"id": os.path.basename(run_dir), "pid": pid, "starttime": st["starttime"],
                 "run_dir": run_dir}
            )  # fmt: skip
    return out


def gpu_holders(device_glob: str = "/dev/nvidia*") -> list[dict[str, Any]]:
    """Every process with an open fd on a GPU device file, with what decides if it is stale.

    Inside containers ``nvidia-smi`` lists no processes (another pid namespace), so the
    file descriptors are the only reliable witness. The glob is injectable so that tests
    can stand in an ordinary file for a GPU.
    """
    devices = set(glob.glob(device_glob))
    if not devices:
        return []
    me = os.getpid()
    out = []
    for pid in all_pids():
        if pid == me:
            continue
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        held = set()
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target in devices:
                held.add(target)
        if not held:
            continue
        st = proc_stat(pid)
        if st is None:
            continue
        parent = proc_stat(st["ppid"]) if st["ppid"] > 0 else None
        out.append(
            {
                "pid": pid,
                "starttime": st["starttime"],
                "comm": st["comm"],
                "cmdline": cmdline(pid),
                "ppid": st["ppid"],
                "parent_comm": parent["comm"] if parent else None,
                "run_id": environ_value(pid, RUN_ID_ENV),
                "devices": sorted(held),
            }
        )
    return out


def run_tree(
    run_id: str, roots: set[int], step_sid: Any, exclude: set[int]
) -> list[dict[str, Any]]:
    """Every live process that belongs to the step, each ``{"pid", "starttime", "comm"}``.

    A process belongs when any of these holds: it carries ``HARNESS_RUN_ID=<run_id>`` in its
    environment (inherited through ``setsid`` and double forks), it is in the step's session,
    or its parent chain reaches one of ``roots`` -- the step and the supervisor, which is a
    child subreaper, so orphans of the tree are re-parented to it rather than to init.
    ``roots`` must hold only processes verified alive by pid *and* start time: a recycled
    pid would otherwise hand us a stranger's children. A session id cannot be recycled while
    any process is still in that session, so ``step_sid`` is safe as it is.
    """
    stats = {}
    for pid in all_pids():
        st = proc_stat(pid)
        if st is not None:
            stats[pid] = st
    members = []
    for pid, st in stats.items():
        if pid in exclude or st["state"] in ("Z", "X"):
            continue
        belongs = isinstance(step_sid, int) and step_sid > 1 and st["session"] == step_sid
        belongs = belongs or _descends(pid, roots, stats)
        belongs = belongs or environ_value(pid, RUN_ID_ENV) == run_id
        if belongs:
            members.append({"pid": pid, "starttime": st["starttime"], "comm": st["comm"]})
    return members


def _descends(pid: int, roots: set[int], stats: dict[int, dict[str, Any]]) -> bool:
    """``pid`` is one of ``roots`` or has one of them among its ancestors."""
    seen: set[int] = set()
    cur = pid
    while cur > 1 and cur not in seen:
        if cur in roots:
            return True
        seen.add(cur)
        st = stats.get(cur)
        cur = st["ppid"] if st else 0
    return False


def self_and_ancestors() -> set[int]:
    out, pid = set(), os.getpid()
    while pid > 1 and pid not in out:
        out.add(pid)
        st = proc_stat(pid)
        pid = st["ppid"] if st else 0
    return out


def _signal_all(procs: list[dict[str, Any]], sig: int) -> list[int]:
    """Signal each process that is still the one we listed (pid reuse is checked)."""
    sent = []
    for p in procs:
        if not is_alive(p["pid"], p["starttime"]):
            continue
        try:
            os.kill(p["pid"], sig)
            sent.append(p["pid"])
        except ProcessLookupError:
            pass
        except PermissionError:
            pass  # not ours: reported as remaining below
    return sent


def _wait_gone(
    procs: list[dict[str, Any]], timeout: float, poll: float = 0.05
) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while True:
        left = [p for p in procs if is_alive(p["pid"], p["starttime"])]
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(poll)


def terminate(procs: list[dict[str, Any]], grace: float) -> dict[str, list[int]]:
    """SIGTERM, wait up to ``grace`` seconds, SIGKILL whoever is left; report who got what."""
    termed = _signal_all(procs, signal.SIGTERM)
    left = _wait_gone(procs, grace)
    killed = _signal_all(left, signal.SIGKILL)
    left = _wait_gone(left, 5.0)
    return {"terminated": termed, "killed": killed, "remaining": [p["pid"] for p in left]}
