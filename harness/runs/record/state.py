"""Pure decisions about runs: their state, exit code, label, which run a name means, run ids.

No I/O: every function takes what the runs probe reported and returns a value, so the
rules are pinned by tables of cases in ``tests/unit/test_runs_state.py``.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence

from harness.errors import UsageError
from harness.runs.record.lifecycle import RunState
from harness.runs.record.models import GpuHolder, RunInfo

#: Process names of init systems: a GPU holder re-parented to one of them lost its parent.
INIT_NAMES = frozenset({"systemd", "init", "tini", "dumb-init", "docker-init", "catatonit"})
#: Processes that hold GPU device files by design (see probes/runs/_proctree.py GPU_DAEMONS).
GPU_DAEMONS = frozenset(
    {"nvidia-persistenced", "nvidia-smi", "nv-hostengine", "Xorg", "Xwayland", "dcgm"}
)
#: What ``harness logs`` / ``stop`` read as "the newest run": no step may be named so.
LATEST_WORDS = ("last", "latest")
_STEP_NAME = re.compile(r"[A-Za-z0-9_.-]+\Z")


def duration_of(info: RunInfo) -> float | None:
    """Seconds from start to end (or to ``observed_at`` while running)."""
    start = info.started_at
    if start is None:
        return None
    end = info.status.ended_at if info.status else None
    if end is None and info.state == RunState.RUNNING:
        end = info.observed_at
    return None if end is None else max(0.0, end - start)


def format_duration(seconds: float | None) -> str:
    """``1:02:03`` / ``2:03`` -- what a human compares at a glance."""
    if seconds is None:
        return "-"
    s = int(seconds)
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


def new_run_id(step: str, now: float | None = None, token: str | None = None) -> str:
    """``extract-20250107-142233-3fa9``: sortable by time, typeable by prefix, unique."""
    if not _STEP_NAME.match(step):
        raise UsageError(f"step name {step!r} cannot name a run directory")
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(time.time() if now is None else now))
    return f"{step}-{stamp}-{token or os.urandom(2).hex()}"


def match_run(runs: Sequence[RunInfo], query: str) -> RunInfo:
    """The run ``query`` names: an exact id, ``last``, a step name (its latest run), or a
    unique id prefix. Ambiguity and misses list the candidates instead of guessing.
    """
    if not runs:
        raise UsageError(
            f"no run {query!r}: this target has no runs yet", "start one with harness run STEP"
        )
    ordered = sorted(runs, key=lambda r: (r.started_at or 0.0, r.id))
    by_id = {r.id: r for r in ordered}
    if query in by_id:
        return by_id[query]
    if query in LATEST_WORDS:
        return ordered[-1]
    of_step = [r for r in ordered if r.record.step == query]
    if of_step:
        return of_step[-1]
    prefixed = [r for r in ordered if r.id.startswith(query)]
    if len(prefixed) == 1:
        return prefixed[0]
    if len(prefixed) > 1:
        shown = ", ".join(r.id for r in prefixed[-5:])
        raise UsageError(
            f"{query!r} matches {len(prefixed)} runs: {shown}", "give more of the run id"
        )
    import difflib  # only for a run id that matches none

    close = difflib.get_close_matches(query, list(by_id), n=3, cutoff=0.5)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    raise UsageError(
        f"no run {query!r} on this target",
        hint + "list them with harness runs; 'last' or a step name picks the latest",
    )


def classify_holders(
    holders: Sequence[GpuHolder], runs: Sequence[RunInfo]
) -> tuple[list[GpuHolder], list[tuple[GpuHolder, str]], list[GpuHolder]]:
    """Split GPU holders into (stale, busy-with-reason, others) before a launch.

    * **stale**: left over from a harness run that is over (finished, killed, lost), or a
      process whose parent died (re-parented to init): nobody is going to end it.
    * **busy**: a worker of a run that is still running -- not ours to kill.
    * **others**: a process with a live parent and no run: someone's notebook, perhaps;
      reported, never killed. GPU daemons (persistenced, DCGM) are left out entirely.
    """
    states = {r.id: r.state for r in runs}
    stale: list[GpuHolder] = []
    busy: list[tuple[GpuHolder, str]] = []
    others: list[GpuHolder] = []
    for h in holders:
        if h.comm in GPU_DAEMONS:
            continue
        state = states.get(h.run_id) if h.run_id else None
        if state == RunState.RUNNING:
            busy.append((h, f"run {h.run_id} is running"))
        elif state is not None or h.ppid <= 1 or (h.parent_comm or "") in INIT_NAMES:
            stale.append(h)
        else:
            others.append(h)
    return stale, busy, others


def describe_holder(h: GpuHolder) -> str:
    """``1234 python -m vllm... (run extract-..., parent gone)`` for one verdict line."""
    cmd = h.cmdline or h.comm
    if len(cmd) > 60:
        cmd = cmd[:59] + "…"
    why = []
    if h.run_id:
        why.append(f"run {h.run_id}")
    if h.ppid <= 1 or (h.parent_comm or "") in INIT_NAMES:
        why.append("parent gone")
    return f"{h.pid} {cmd}" + (f" ({', '.join(why)})" if why else "")


def tensor_parallel(argv: Sequence[str]) -> int | None:
    """The tensor-parallel size a command asks for (``--tensor-parallel-size 8``, ``-tp=8``)."""
    names = ("--tensor-parallel-size", "-tp", "--tp")
    for i, arg in enumerate(argv):
        name, eq, value = arg.partition("=")
        if name not in names:
            continue
        if not eq:
            value = argv[i + 1] if i + 1 < len(argv) else ""
        if value.isdigit():
            return int(value)
    return None
