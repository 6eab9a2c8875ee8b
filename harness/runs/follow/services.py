"""Service steps seen from the laptop: which live run of a service a step can use, and
following one's start until it is ready.

A service run is "the same" as the one a step would start when its resolved command, cwd,
environment and service settings are (its own run id and run directory aside):
:func:`harness.runs.pipeline.digest.service_digest`, recorded in its ``run.json`` at launch.
What happens on the target (the health poll, ``ready.json``, the stop when the steps that
needed it end) is ``probes/runs/_service.py``'s.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.cache import cache_root
from harness.errors import RunError
from harness.runs.follow.attach import follow_run
from harness.runs.follow.decode import last_lines
from harness.runs.follow.stream import LocalCopy, copy_path
from harness.runs.follow.view import Screen
from harness.runs.pipeline.steps import UNCLAIMED_MINUTES
from harness.runs.record.lifecycle import RunState, state_label
from harness.runs.record.models import RunInfo
from harness.runs.target import remote
from harness.runs.target.context import Context
from harness.targets.base import Target


def live_service(
    runs: Sequence[RunInfo], step: str, digest: str, smoke: bool = False
) -> RunInfo | None:
    """The run of ``step`` with this digest that is still running -- a ready one first, else
    the newest starting one (a second server on its port would only fail). A smoke run uses
    only a smoke service, a real run only a real one. Pure."""
    same = [
        r
        for r in runs
        if r.record.step == step
        and r.record.service is not None
        and r.record.service.digest == digest
        and r.state == RunState.RUNNING
        and bool(r.record.smoke) == smoke
    ]
    same.sort(key=lambda r: (r.ready is not None, r.started_at or 0.0, r.id))
    return same[-1] if same else None


def users_of(runs: Sequence[RunInfo], service_id: str) -> list[str]:
    """The live runs that use the service ``service_id`` (their ``services`` name it). Pure."""
    return [
        r.id
        for r in sorted(runs, key=lambda r: (r.started_at or 0.0, r.id))
        if r.state == RunState.RUNNING
        and any(s.run_id == service_id for s in r.record.services or ())
    ]


def until_ready(
    ctx: Context,
    target: Target,
    workdir: str,
    info: RunInfo,
    screen: Screen,
    needed_by: str,
    keep: bool = False,
) -> RunInfo:
    """Show the service's log as it starts, until it is ready; the run as it is then.

    ``keep`` (``--keep-service``): a start interrupted here goes on (the launch stops it
    otherwise), and the words say which.

    Raises:
        RunError: it ended (exited, timed out, was stopped) before it was ready, with the
            server's last lines; or following was detached before it was ready.
    """
    code = 0
    if info.ready is None:
        code = follow_run(ctx, target, info, start=0, follow=True, screen=screen, until_ready=True)
    (now,) = remote.list_runs(target, workdir, ids=[info.id]).runs
    if now.state == RunState.RUNNING and now.ready is not None and code != 130:
        return now
    if now.state == RunState.RUNNING:
        service = now.record.service
        minutes = (service and service.unclaimed_minutes) or UNCLAIMED_MINUTES
        why = " (Ctrl-C)" if code == 130 else ""
        if not keep:
            raise RunError(
                f"{needed_by} was not launched{why}: the service {now.id}, started for it, "
                "is stopped now",
                f"harness run {needed_by} --keep-service keeps a service it started when "
                "interrupted, for the next run to reuse",
            )
        raise RunError(
            f"{needed_by} was not launched{why}: the service {now.id} keeps starting "
            f"(--keep-service); it stops by itself if no run uses it within {minutes:g} min "
            "of being ready",
            f"see it with: harness logs {now.id}{ctx.flag} --follow; harness run {needed_by} "
            f"reuses it; harness stop {now.id}{ctx.flag} ends it now",
        )
    copy = LocalCopy(copy_path(cache_root(), target.name, now.id))
    try:
        tail = last_lines(
            copy.read(max(0, copy.size - 64 * 1024), 64 * 1024).decode("utf-8", "replace")
        )
    finally:
        copy.close()
    said = f"; its last lines: {' | '.join(tail)}" if tail else ""
    raise RunError(
        f"{needed_by} was not launched: the service {now.id} {state_label(now)}{said}",
        f"read its whole log: harness logs {now.id}{ctx.flag}",
    )
