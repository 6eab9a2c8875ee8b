"""``harness run``'s use case: review, preflight, launch detached -- a model back, no printing.

:func:`start_run` tells what happens as it happens through ``on_event`` (the CLI renders each
event as one or more lines, :mod:`harness.views.launch`) and returns a :class:`RunOutcome`;
a refusal (review not ready, preflight failure) is raised as its HarnessError, as before.
Following the launched run is :mod:`harness.runs.attach`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness.errors import NotReady, RunError
from harness.runs import remote
from harness.runs.context import Context, workdir_for
from harness.runs.describe import preflight_of, resolve_on
from harness.runs.models import GpuHolder, Level, RunInfo, Verdict
from harness.runs.preflight import Preflight
from harness.runs.state import new_run_id
from harness.runs.steps import Pipeline, ResolvedStep
from harness.targets.base import Target

if TYPE_CHECKING:
    from harness.report.model import Review
    from harness.runs.smoke import SmokePlan


# -- events (what the CLI shows while it happens) ------------------------------------------


@dataclass(frozen=True)
class Resolved:
    """The step and its command on the target; for a smoke run, where its outputs go."""

    step: str
    target: str
    command: str
    smoke: SmokePlan | None = None
    smoke_dir: str | None = None


@dataclass(frozen=True)
class Reviewed:
    review: Review
    forced: bool  # not ready, launched anyway (--force)


@dataclass(frozen=True)
class Preflighted:
    verdicts: tuple[Verdict, ...]


@dataclass(frozen=True)
class Launched:
    run: RunInfo
    killed: tuple[int, ...]  # stale GPU holders ended first
    kill_remaining: tuple[int, ...]  # ... that survived SIGKILL


RunEvent = Resolved | Reviewed | Preflighted | Launched


@dataclass(frozen=True)
class RunOutcome:
    """What ``harness run`` started: the run, the review it was started on."""

    run: RunInfo
    review: Review
    killed: tuple[int, ...] = ()
    kill_remaining: tuple[int, ...] = ()


def start_run(
    ctx: Context,
    target: Target,
    pipeline: Pipeline,
    step: str,
    *,
    overrides: dict[str, str],
    extra: Sequence[str] = (),
    pipeline_file: Path | None = None,
    patches: Path | None = None,
    kill_stale: bool = False,
    force: bool = False,
    require_smoke: bool = False,
    require_verified: bool = False,
    smoke: SmokePlan | None = None,
    on_event: Callable[[RunEvent], None] = lambda event: None,
) -> RunOutcome:
    """Resolve, review, preflight and launch ``step`` detached on ``target``.

    Raises:
        NotReady: the review says not ready and ``force`` is not set.
        RunError: a preflight check failed.
    """
    from harness.report.model import Gate
    from harness.runs import smoke as smoke_mode

    workdir = workdir_for(target, ctx.workdir, absolute=True)
    assert workdir is not None
    run_id = new_run_id(step)
    resolved = resolve_on(target, pipeline, step, workdir, run_id, overrides, extra, smoke)
    where = smoke_mode.smoke_dir(f"{remote.runs_root(workdir)}/{run_id}") if smoke else None
    on_event(Resolved(step, target.label, resolved.display(), smoke, where))
    review = gate_review(
        target, step, pipeline_file, overrides, patches, require_smoke, smoke, require_verified
    )
    blockers = [r for r in review.reasons if r.severity == Gate.BLOCKER]
    on_event(Reviewed(review, forced=bool(blockers) and force))
    if blockers and not force:
        raise NotReady(
            f"not launching {step}: the review says not ready ({len(blockers)} blocker(s))",
            f"read it with `harness report {step}`; fix the blockers, or pass --force",
        )
    stale = _preflight(ctx, target, workdir, resolved, kill_stale, on_event)
    launched = remote.launch(
        target,
        run_id,
        workdir,
        resolved,
        pipeline=pipeline.path,
        timings=ctx.timings,
        kill_first=stale,
        review=review.to_dict(),
        smoke=None
        if smoke is None
        else {**smoke.to_dict(), "fingerprint": smoke_mode.fingerprint(review)},
        hook=None if smoke is None else {"sitecustomize.py": smoke_mode.hook_source()},
        fingerprint={**smoke_mode.fingerprint(review), "entry": pipeline.entry_digest(step)},
    )
    killed, left = tuple(launched.killed), tuple(launched.kill_remaining)
    on_event(Launched(launched.run, killed, left))
    return RunOutcome(launched.run, review, killed, left)


def gate_review(
    target: Target,
    step: str,
    pipeline_file: Path | None,
    overrides: dict[str, str],
    patches: Path | None,
    require_smoke: bool = False,
    smoke: SmokePlan | None = None,
    require_verified: bool = False,
) -> Review:
    """The pre-run review (saved as ``review.json`` in the run directory, so a run can always
    say what it was started on). Stale GPU holders are the preflight's to refuse or end
    (``--kill-stale``), in its own words."""
    from harness.patching.series import patches_root
    from harness.report.build import build_review

    return build_review(
        target,
        patches_root(patches),
        step=step,
        pipeline=pipeline_file,
        overrides=overrides,
        stale=False,
        require_smoke=require_smoke and smoke is None,
        check_smoke=smoke is None,  # a smoke run is the test itself
        require_verified=require_verified and smoke is None,
        preflight=False,  # made next by the launch itself, in its own words
    )


def preflight_verdicts(
    ctx: Context, target: Target, workdir: str, resolved: ResolvedStep, kill_stale: bool
) -> Preflight:
    """The preflight's verdicts for ``resolved`` on ``target``: decided, not told."""
    return preflight_of(target, workdir, resolved, ctx.device_glob, kill_stale)


def _preflight(
    ctx: Context,
    target: Target,
    workdir: str,
    resolved: ResolvedStep,
    kill_stale: bool,
    on_event: Callable[[RunEvent], None],
) -> tuple[GpuHolder, ...]:
    """Tell the verdicts; refuse on any failure; return the stale holders to end first."""
    checked = preflight_verdicts(ctx, target, workdir, resolved, kill_stale)
    # The patch series is judged by the review gate (gate_review), where --force can override it.
    verdicts = tuple(checked.verdicts)
    on_event(Preflighted(verdicts))
    failed = [v for v in verdicts if v.level == Level.FAIL]
    if failed:
        raise RunError(
            f"preflight refused to launch {resolved.step}: " + ", ".join(v.check for v in failed),
            failed[0].hint,
        )
    return checked.stale
