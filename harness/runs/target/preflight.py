"""Preflight verdicts: one line per check, decided from the facts the target reported (pure).

The patch series' state is the pre-run review's to judge (:mod:`harness.report`), not a
preflight line.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.models import AskedFacts
from harness.runs.record.lifecycle import RunState
from harness.runs.record.models import GpuHolder, Level, Verdict
from harness.runs.record.state import classify_holders, describe_holder
from harness.runs.target.remote import PreflightFacts

#: Less space than this left where the run directory goes: the disk is full (as the
#: supervisor judges it, ``FULL_BELOW`` in probes/runs/_rundir.py).
FULL_BELOW = 256 * 1024


@dataclass(frozen=True)
class Preflight:
    verdicts: tuple[Verdict, ...]
    stale: tuple[GpuHolder, ...]  # to end first, when --kill-stale allows it
    #: the review's facts, when the preflight's round trip was asked for them too
    facts: AskedFacts | None = None

    @property
    def ok(self) -> bool:
        return all(v.level != Level.FAIL for v in self.verdicts)


def decide(
    facts: PreflightFacts,
    target_label: str,
    *,
    kill_stale: bool,
    tensor_parallel: int | None = None,
    visible: str | None = None,
    shipped: frozenset[str] = frozenset(),
) -> Preflight:
    """Pure: the facts -> verdict lines, and the stale GPU holders (if any).

    ``tensor_parallel``: the step's ``--tensor-parallel-size``; more than the GPUs the step
    can see (all of the target's, or those ``CUDA_VISIBLE_DEVICES`` = ``visible`` names) is
    refused here, before a model load finds out. ``shipped``: scripts harness writes into
    the run directory at launch (not there yet, not missing).
    """
    out = [
        Verdict(
            "target",
            Level.OK,
            f"{target_label}: Python {facts.python_version} at {facts.python}",
        )
    ]
    out.append(_workdir(facts))
    out.append(_command(facts, shipped))
    out.append(_gpus(facts))
    tp = _tensor_parallel(facts, tensor_parallel, visible)
    if tp is not None:
        out.append(tp)
    stale, busy, others = classify_holders(facts.holders, facts.runs)
    if stale and not kill_stale:
        shown = "; ".join(describe_holder(h) for h in stale[:3])
        more = f" and {len(stale) - 3} more" if len(stale) > 3 else ""
        out.append(
            Verdict(
                "stale GPU",
                Level.FAIL,
                f"{len(stale)} stale process(es) hold GPU devices: {shown}{more}",
                "rerun with --kill-stale to end them (SIGTERM, then SIGKILL after the grace "
                "period), or end them yourself",
            )
        )
    elif stale:
        shown = ", ".join(str(h.pid) for h in stale)
        out.append(
            Verdict("stale GPU", Level.WARN, f"ending {len(stale)} stale process(es): {shown}")
        )
    for h, why in busy:
        out.append(Verdict("GPU in use", Level.WARN, f"{describe_holder(h)}: {why}"))
    for h in others:
        out.append(
            Verdict(
                "GPU in use", Level.WARN, f"{describe_holder(h)} (its parent is alive; left alone)"
            )
        )
    if not facts.holders and facts.gpus_available:
        out.append(Verdict("stale GPU", Level.OK, "no process holds a GPU device"))
    live = [r for r in facts.step_runs if r.state == RunState.RUNNING]
    if live:
        out.append(
            Verdict(
                RunState.RUNNING.value,
                Level.WARN,
                f"already running here: {', '.join(r.id for r in live)}; this starts another",
                f"follow it with: harness logs {live[0].id} -f, or end it with: harness stop "
                f"{live[0].id}",
            )
        )
    return Preflight(tuple(out), tuple(stale) if kill_stale else (), facts.facts)


def _workdir(facts: PreflightFacts) -> Verdict:
    hint = "set workdir in hosts.toml (or --workdir) to a folder you can write"
    blocked = facts.workdir_blocked_by
    if blocked is not None:
        what = f"cannot be created: {blocked} is a file"
        if blocked == facts.workdir:
            what = "is a file"
        return Verdict("workdir", Level.FAIL, f"{facts.workdir} {what}, not a folder", hint)
    left = facts.workdir_space_left
    if left is not None and left < FULL_BELOW:
        return Verdict(
            "workdir",
            Level.FAIL,
            f"no space left on the disk that holds {facts.workdir} ({left // 1024:,} KiB free)",
            f"free space there (df -h {facts.workdir_parent or facts.workdir}), or set another "
            "workdir (hosts.toml, or --workdir)",
        )
    if not facts.workdir_exists and not facts.workdir_creatable:
        return Verdict(
            "workdir",
            Level.FAIL,
            f"{facts.workdir} does not exist and cannot be created ({facts.workdir_parent} "
            "is not writable)",
            hint,
        )
    if not facts.workdir_exists:
        return Verdict(
            "workdir", Level.WARN, f"{facts.workdir} does not exist yet; it will be created"
        )
    if not facts.workdir_writable:
        return Verdict(
            "workdir",
            Level.FAIL,
            f"{facts.workdir} is not writable",
            hint,
        )
    return Verdict("workdir", Level.OK, facts.workdir)


def _command(facts: PreflightFacts, shipped: frozenset[str] = frozenset()) -> Verdict:
    if not facts.cwd_exists and facts.cwd != facts.workdir:
        return Verdict(
            "command",
            Level.FAIL,
            f"the step's cwd {facts.cwd} does not exist",
            "fix the step's cwd in the pipeline file, or create the folder",
        )
    if facts.resolved is None:
        return Verdict(
            "command",
            Level.FAIL,
            f"{facts.argv0!r} not found (PATH of the step, cwd {facts.cwd})",
            "give a full path or fix PATH in the step's env / hosts.toml env",
        )
    if facts.script in shipped:
        own = f"{facts.resolved}; script {facts.script} is harness's own"
        return Verdict("command", Level.OK, own)
    if facts.script is not None and not facts.script_exists:
        return Verdict(
            "command",
            Level.FAIL,
            f"script {facts.script} not found",
            "check the path parameters (e.g. --set speculators=/path/to/checkout)",
        )
    found = f"; script {facts.script} found" if facts.script else ""
    return Verdict("command", Level.OK, f"{facts.resolved}{found}")


def _tensor_parallel(facts: PreflightFacts, tp: int | None, visible: str | None) -> Verdict | None:
    if not tp or tp <= 1 or not facts.gpus_available:
        return None
    seen = len(facts.gpus)
    where = f"{seen} GPU(s) on the target"
    if visible is not None and visible.strip() not in ("", "all"):
        seen = min(seen, len([d for d in visible.split(",") if d.strip()]))
        where = f"{seen} GPU(s) visible (CUDA_VISIBLE_DEVICES={visible})"
    if tp > seen:
        return Verdict(
            "tensor-parallel",
            Level.FAIL,
            f"tensor-parallel size {tp} needs {tp} GPUs; the step sees {where}",
            f"--set tp={seen}, or run on a target with {tp} GPUs",
        )
    return Verdict("tensor-parallel", Level.OK, f"size {tp} on {where}")


def _gpus(facts: PreflightFacts) -> Verdict:
    if not facts.gpus_available:
        why = facts.gpus_reason or "none found"
        return Verdict("GPUs", Level.SKIP, f"no GPU on the target ({why}); continuing")
    parts = [
        f"{g.index}: {g.name} {(g.memory_free_mib or 0) / 1024:.1f}/"
        f"{(g.memory_total_mib or 0) / 1024:.1f} GiB free"
        for g in facts.gpus
    ]
    return Verdict("GPUs", Level.OK, f"{len(facts.gpus)} GPU(s) -- " + "; ".join(parts))


# -- the patch series hook -----------------------------------------------------------------
