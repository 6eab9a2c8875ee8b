"""Gather the review from the target: facts, patch series, check results, the step. I/O edge."""

from __future__ import annotations

import time
from pathlib import Path

from harness.errors import HarnessError
from harness.models import TargetFacts
from harness.report.model import Review, judge
from harness.report.parts import SeriesView
from harness.runs.describe import StepPlan
from harness.runs.models import GpuHolder
from harness.runs.smoke import SmokeTested
from harness.targets.base import Target


def _stale(target: Target) -> list[GpuHolder]:
    """Processes holding /dev/nvidia* that ``harness run`` would refuse to start next to."""
    from harness.runs.commands import stale_holders

    try:
        return stale_holders(target)
    except HarnessError:
        return []  # a report still says what it can; the run's preflight will insist


def _step(
    target: Target, step: str | None, pipeline: Path | None, overrides: dict[str, str]
) -> StepPlan | None:
    if step is None:
        return None
    from harness.runs.describe import describe

    try:
        return describe(target, step, pipeline, overrides)
    except HarnessError as exc:
        return StepPlan(step, error=exc.message)


def _smoke_tested(
    target: Target, step: StepPlan, now: dict[str, object], required: bool
) -> SmokeTested:
    """The step's newest green smoke run on this target, and what changed since."""
    from harness.runs import remote
    from harness.runs import smoke as smoke_mode

    try:
        runs = remote.list_runs(target, step.workdir).runs
    except HarnessError:
        runs = ()
    green = [
        r for r in runs if r.record.step == step.name and r.record.smoke and r.state == "succeeded"
    ]
    if not green:
        return SmokeTested(required)
    last = max(green, key=lambda r: r.record.created_at or 0.0)
    then = (last.record.smoke or {}).get("fingerprint") or {}
    return SmokeTested(
        required,
        {"id": last.id, "created_at": last.record.created_at},
        tuple(smoke_mode.changes(then, now)),
    )


def _verified(
    target: Target, step: StepPlan, now: dict[str, object], required: bool
) -> SmokeTested:
    """The step's newest real run whose output passed its check, and what changed since."""
    from harness.runs import remote
    from harness.runs import smoke as smoke_mode

    try:
        runs = remote.list_runs(target, step.workdir).runs
    except HarnessError:
        runs = ()
    good = [
        r
        for r in runs
        if r.record.step == step.name
        and not r.record.smoke
        and r.state == "succeeded"
        and r.verification is not None
    ]
    if not good:
        return SmokeTested(required)
    last = max(good, key=lambda r: r.record.created_at or 0.0)
    then = last.record.fingerprint or {}
    return SmokeTested(
        required,
        {"id": last.id, "created_at": last.record.created_at},
        tuple(smoke_mode.changes(then, now)) or (() if then else ("an older harness",)),
    )


def build_review(
    target: Target,
    patches: Path,
    *,
    callers: list[str] | None = None,
    step: str | None = None,
    pipeline: Path | None = None,
    overrides: dict[str, str] | None = None,
    stale: bool = True,
    require_smoke: bool = False,
    check_smoke: bool = True,
    require_verified: bool = False,
) -> Review:
    """The review; ``stale=False`` leaves GPU holders to ``harness run``'s own preflight.

    A step with a smoke mode also says whether its last green smoke run still vouches for
    the environment (``require_smoke``: a blocker when it does not)."""
    from dataclasses import replace

    from packaging.utils import canonicalize_name

    from harness.patching.ops import _required_dists, status
    from harness.patching.series import dists_with_series
    from harness.reading.check import check
    from harness.reading.probe import gather_facts
    from harness.runs import smoke as smoke_mode

    plan = _step(target, step, pipeline, overrides or {})
    # a step that declares the callers it exercises is reviewed for those alone (none: facts
    # and GPU holders only); without a step, or undeclared, every dist with a series is
    declared = None if plan is None else plan.checks
    series_dists = dists_with_series(patches)
    if declared is not None:
        wanted_callers = {str(canonicalize_name(c)) for c in declared}
        series_dists = [d for d in series_dists if str(canonicalize_name(d)) in wanted_callers]
    # one facts probe answers for the report and for the series' `requires` alike
    wanted = series_dists + _required_dists(patches, series_dists)
    facts: TargetFacts = gather_facts(target, wanted)
    holders = _stale(target) if stale else []
    known: dict[str, str | None] = {str(canonicalize_name(k)): v for k, v in facts.dists.items()}
    dist_reports = status(target, patches, installed=known) if series_dists else []
    series = tuple(SeriesView.from_report(r) for r in dist_reports)
    names = callers or (
        list(declared)
        if declared is not None
        else [
            d
            for d in series_dists
            if facts.dists.get(d) or any(s.dist == d and s.installed for s in series)
        ]
    )
    live = after = None
    pending = any(s.pending for s in series if s.patches is not None)
    for caller in names[:1]:  # one caller per report: the one the series is for
        callees = list((declared or {}).get(caller) or []) or None
        live = check(target, caller, against=callees)
        after = (
            check(target, caller, against=callees, with_patches=dist_reports) if pending else live
        )
    if check_smoke and plan is not None and plan.smoke is not None:
        applied = {s.dist: s.applied for s in series}
        now = smoke_mode.fingerprint_of(facts.dists, applied)
        plan = replace(plan, smoke_tested=_smoke_tested(target, plan, now, require_smoke))
    if plan is not None and plan.verify is not None and plan.error is None:
        applied = {s.dist: s.applied for s in series}
        now = {**smoke_mode.fingerprint_of(facts.dists, applied), "entry": plan.entry}
        plan = replace(plan, verified=_verified(target, plan, now, require_verified))
    reasons = judge(facts, holders, series, live, after, plan)
    return Review(
        target.label,
        time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        facts,
        tuple(holders),
        series,
        live,
        after,
        plan,
        tuple(reasons),
    )
