"""``harness runs``, ``logs`` and ``stop`` as use cases (callable from tests).

Each opens the target once, asks :mod:`~harness.runs.target.remote` for facts or an action, lets
the pure modules decide, and returns a model (:func:`list_runs`, :func:`stop_run`) for the
CLI to render; :func:`show_logs` follows a run live (:mod:`~harness.runs.follow.attach`) and returns
its exit code. ``harness run`` is :mod:`harness.launch`.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

from harness.cache import cache_root
from harness.errors import UsageError
from harness.runs.follow.attach import follow_run, show_copy
from harness.runs.follow.services import users_of
from harness.runs.follow.stream import COMPLETE, complete_copy, copy_path
from harness.runs.follow.view import Screen
from harness.runs.record.lifecycle import RunState
from harness.runs.record.models import GpuHolder, RunInfo
from harness.runs.record.state import classify_holders, match_run
from harness.runs.record.stopped import StopReport
from harness.runs.target import remote
from harness.runs.target.context import GPU_GLOB_ENV, Context, workdir_for
from harness.targets.base import Target


@dataclass(frozen=True)
class Listing:
    """The runs on a target (``harness runs``)."""

    target: str  # its label
    runs: tuple[RunInfo, ...]
    gone: tuple[remote.GoneRun, ...] = ()  # deleted while they ran; still running


def list_runs(ctx: Context) -> Listing:
    with ctx.open() as target:
        listing = remote.list_runs(target, workdir_for(target, ctx.workdir, absolute=False))
        return Listing(target.label, tuple(listing.runs), listing.gone)


def show_logs(
    ctx: Context,
    run: str,
    *,
    follow: bool = False,
    tail: int | None = None,
    offset: int | None = None,
    screen: Screen,
) -> int:
    if tail is not None and offset is not None:
        raise UsageError("--tail and --offset both say where to start; give one")
    if (tail is not None and tail < 0) or (offset is not None and offset < 0):
        raise UsageError("--tail and --offset take a number >= 0")
    with ctx.open() as target:
        listing = remote.list_runs(target, workdir_for(target, ctx.workdir, absolute=False))
        try:
            info = match_run(listing.runs, run)
        except UsageError:
            kept = _kept_copy(target, run)  # its run directory is gone; harness's copy is not
            if kept is None:
                raise
            why = f"{kept.id} is no longer on {target.label} (its run directory is gone)"
            path = copy_path(cache_root(), target.name, kept.id)
            return show_copy(
                ctx,
                target,
                kept,
                path,
                why,
                start=offset or 0,
                tail=tail,
                follow=follow,
                screen=screen,
            )
        past = offset is not None and offset > (info.log_size or 0)
        if past and info.state != RunState.RUNNING and info.log_size is not None:
            raise UsageError(
                f"--offset {offset} is past the end of {info.id}'s log ({info.log_size} bytes)"
            )
        return follow_run(
            ctx, target, info, start=offset or 0, tail=tail, follow=follow, screen=screen
        )


def _kept_copy(target: Target, run: str) -> RunInfo | None:
    """The run named by ``run`` (its id, or a unique prefix of one) among this machine's
    complete copies of ``target``'s logs -- the run as harness last saw it."""
    folder = cache_root() / "runs" / target.name
    ids = sorted(p.parent.name for p in folder.glob(f"*/{COMPLETE}"))
    found = [i for i in ids if i == run] or [i for i in ids if i.startswith(run)]
    if len(found) != 1:
        return None
    marker = complete_copy(copy_path(cache_root(), target.name, found[0]))
    return None if marker is None else RunInfo.from_dict(marker["run"])


def stop_run(
    ctx: Context, run: str, *, grace: float | None = None, force: bool = False
) -> StopReport:
    """Stop a run's whole tree; the report says what still holds a GPU. A service that live
    runs still use is stopped only with ``force`` (they would fail)."""
    if grace is not None and not (math.isfinite(grace) and grace >= 0):
        # before anything is signalled: "nan" would never SIGKILL, "inf" never return
        raise UsageError(
            f"--grace {grace}: give the seconds between SIGTERM and SIGKILL, a number >= 0",
            "e.g. --grace 30; 0 sends SIGKILL right after SIGTERM",
        )
    with ctx.open() as target:
        workdir = workdir_for(target, ctx.workdir, absolute=False)
        listing = remote.list_runs(target, workdir)
        try:
            run_id = match_run(listing.runs, run).id
        except UsageError as miss:
            run_id = _gone(listing.gone, run, miss)  # its directory was deleted while it ran
        users = [] if force else users_of(listing.runs, run_id)
        if users:
            raise UsageError(
                f"{run_id} is a service that {', '.join(users)} still use(s); stopping it "
                "fails them",
                f"stop them first (harness stop {users[0]}{ctx.flag}), or stop the service "
                f"anyway: harness stop {run_id}{ctx.flag} --force",
            )
        rep = remote.stop(
            target,
            workdir,
            run_id,
            grace=ctx.timings.stop_grace if grace is None else grace,
            timings=ctx.timings,
            device_glob=ctx.device_glob,
        )
    return rep


def _gone(gone: tuple[remote.GoneRun, ...], query: str, miss: UsageError) -> str:
    """The run ``query`` names among those deleted while they ran (an id, a unique prefix,
    a step name); else the miss ``match_run`` explained."""
    hits = [g.id for g in gone if g.id == query or g.id.startswith(query)]
    hits = hits or [g.id for g in gone if g.id.rsplit("-", 3)[0] == query][-1:]
    if len(hits) != 1:
        raise miss
    return hits[0]


def stale_holders(target: Target, workdir: str | None = None) -> list[GpuHolder]:
    """Stale GPU holders on ``target`` (what ``harness run`` would refuse to start next to);
    ``workdir`` holds the runs that explain a holder (default: the host's, $HARNESS_WORKDIR)."""
    workdir = workdir or workdir_for(target, os.environ.get("HARNESS_WORKDIR"), absolute=False)
    holders, runs = remote.gpu_holders(target, workdir, os.environ.get(GPU_GLOB_ENV))
    stale, _, _ = classify_holders(holders, runs)
    return list(stale)


def stale_gpu_holders(target: Target) -> list[dict[str, Any]]:
    """:func:`stale_holders` as the review writes them (with the command each runs)."""
    return [h.to_dict() | {"cmd": h.cmdline or h.comm} for h in stale_holders(target)]
