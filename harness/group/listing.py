"""``harness runs`` / ``harness stop`` over several hosts: one row per run, every host's part
(data back; :mod:`harness.views.group` draws it)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from harness.group.result import GroupResult, run_each
from harness.runs.record.lifecycle import RunState


def _listing(make_ctx: Callable[[str], Any], names: Sequence[str]) -> GroupResult[Any]:
    from harness.runs.target import remote
    from harness.runs.target.context import workdir_for

    def one(name: str) -> Any:
        ctx = make_ctx(name)
        with ctx.open() as t:
            return remote.list_runs(t, workdir_for(t, ctx.workdir, absolute=False)).runs

    return run_each(list(names), one)


@dataclass(frozen=True)
class GroupRun:
    """One run as the group sees it: its id, step, and each host's state."""

    id: str
    step: str
    spread: str | None
    states: dict[str, str]  # host -> state label
    started: float | None

    @property
    def state(self) -> str:
        seen = set(self.states.values())
        if len(seen) == 1:
            return next(iter(seen))
        for worst in (RunState.RUNNING, RunState.FAILED, RunState.KILLED, RunState.LOST):
            if any(v.startswith(str(worst)) for v in seen):
                return str(worst)
        return "mixed"


def group_runs(listed: dict[str, Sequence[Any]]) -> list[GroupRun]:
    """Pure: runs per host -> one row per run id (a spread run's hosts folded into one row;
    the Ray cluster's own runs are part of their step's row, not rows of their own)."""
    from harness.runs.record.lifecycle import state_label

    rows: dict[str, GroupRun] = {}
    for host, runs in listed.items():
        for r in runs:
            group = r.record.group
            if group is not None and group.role is not None and group.role.cluster:
                continue
            rid = (group and group.id) or r.id
            row = rows.get(rid) or GroupRun(
                rid, r.record.step, group and group.spread, {}, r.started_at
            )
            row.states[host] = state_label(r)
            rows[rid] = row
    return sorted(rows.values(), key=lambda g: (g.started or 0.0, g.id))


@dataclass(frozen=True)
class Listing:
    """``harness runs -t GROUP``: one row per run, and the hosts that could not be listed."""

    rows: list[GroupRun]
    failed: tuple[tuple[str, str], ...]  # (host, error)

    def to_list(self) -> list[dict[str, Any]]:
        return [
            {
                "id": g.id,
                "step": g.step,
                "spread": g.spread,
                "state": g.state,
                "hosts": g.states,
                "started_at": g.started,
            }
            for g in self.rows
        ]


def list_on(make_ctx: Callable[[str], Any], names: Sequence[str]) -> Listing:
    """The runs on every host, a spread run's hosts folded into one row."""
    got = _listing(make_ctx, names)
    rows = group_runs({r.host: r.unwrap() for r in got.succeeded})
    return Listing(rows, tuple((r.host, r.error or "") for r in got.failed))


def stop_on(
    make_ctx: Callable[[str], Any], names: Sequence[str], run: str, grace: float | None
) -> GroupResult[list[str]]:
    """Stop the run on every host that has it, and the Ray cluster it started, if any; per
    host, the runs stopped there."""
    from harness.runs.target import remote
    from harness.runs.target.context import workdir_for

    def one(name: str) -> list[str]:
        ctx = make_ctx(name)
        stopped = []
        with ctx.open() as t:
            wd = workdir_for(t, ctx.workdir, absolute=False)
            for r in remote.list_runs(t, wd).runs:
                gid = None if r.record.group is None else r.record.group.id
                if r.id == run or gid == run:
                    if r.state == RunState.RUNNING:
                        wait = ctx.timings.stop_grace if grace is None else grace
                        remote.stop(t, wd, r.id, timings=ctx.timings, grace=wait)
                    stopped.append(r.id)
        return stopped

    return run_each(list(names), one)
