"""Gather the review from the target: facts, patch series, check results, the step. I/O edge."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

from harness.analysis.findings import CheckReport
from harness.errors import HarnessError
from harness.models import TargetFacts
from harness.report.asked import dists_of, service_prints
from harness.report.model import Review, judge
from harness.report.parts import SeriesView
from harness.report.request import ReviewRequest
from harness.runs.pipeline.smoke import SmokeTested
from harness.runs.record.lifecycle import RunState
from harness.runs.record.models import GpuHolder, RunInfo
from harness.runs.record.parts import Fingerprint
from harness.runs.target.describe import StepPlan, StepRequest
from harness.targets.base import Target

if TYPE_CHECKING:
    from harness.patching.library import SeriesLibrary
    from harness.patching.ops import DistReport
    from harness.runs.pipeline.steps import Pipeline


def _stale(target: Target, workdir: str | None) -> list[GpuHolder]:
    """Processes holding /dev/nvidia* that ``harness run`` would refuse to start next to."""
    from harness.runs.follow.commands import stale_holders

    try:
        return stale_holders(target, workdir)
    except HarnessError:
        return []  # a report still says what it can; the run's preflight will insist


def _step(
    target: Target, asked: StepRequest | None, preflight: Any, workdir: str | None
) -> StepPlan | None:
    """The step as it will launch (the launch's own, resolved), with its preflight."""
    if asked is None:
        return None
    from harness.runs.target.describe import describe

    try:
        return describe(
            target, asked, preflight=True if preflight is None else preflight, workdir=workdir
        )
    except HarnessError as exc:
        return StepPlan(asked.name, error=exc.message)


def _serve(
    target: Target, plan: StepPlan | None, sets: Mapping[str, str] | None = None
) -> CheckReport | None:
    """The step's ``vllm serve`` arguments against the target's vLLM (None: the step starts no
    server); one the check could not read says why in a note (a warning of the review)."""
    if plan is None or plan.error is not None:
        return None
    if "vllm" not in str(plan.command):  # every server form names vllm: spare the import
        return None
    from harness.runs.target.step_check import check_serve, pipeline_text

    try:
        return check_serve(target, plan, pipeline_text(plan), sets or {})
    except HarnessError as exc:
        why = f"step {plan.name}'s vllm serve arguments were not checked: {exc.message}"
        return CheckReport(target.label, f"step {plan.name}", None, {}, {}, (), notes=(why,))


def _runs_of(target: Target, step: StepPlan) -> tuple[RunInfo, ...]:
    """The step's runs on this target (one probe answers both questions below)."""
    from harness.runs.target import remote

    try:
        runs = remote.list_runs(target, step.workdir).runs
    except HarnessError:
        return ()
    return tuple(r for r in runs if r.record.step == step.name)


def _vouching(
    runs: tuple[RunInfo, ...],
    now: Fingerprint,
    required: bool,
    counts: Callable[[RunInfo], bool],
    then_of: Callable[[RunInfo], Fingerprint | None],
) -> SmokeTested:
    """The newest run that ``counts`` (a green smoke run; a real run whose output passed its
    check) and what changed since the fingerprint it recorded (``then_of``)."""
    good = [r for r in runs if counts(r)]
    if not good:
        return SmokeTested(required)
    last = max(good, key=lambda r: r.record.created_at or 0.0)
    then = then_of(last)
    changed = ("an older harness",) if then is None else tuple(now.changes_since(then))
    return SmokeTested(required, {"id": last.id, "created_at": last.record.created_at}, changed)


def _unless_newest_failed(
    runs: tuple[RunInfo, ...], now: Fingerprint, tested: SmokeTested
) -> SmokeTested:
    """A verified run vouches while no newer real run of the same environment (nothing
    changed since) failed its check: the newest run there is what counts, not the last pass."""
    from harness.runs.record.lifecycle import state_label

    if tested.last is None or tested.changes:
        return tested
    same = [
        r
        for r in runs
        if not r.record.smoke
        and r.verification is not None
        and r.state != RunState.RUNNING
        and r.record.fingerprint
        and not now.changes_since(r.record.fingerprint)
    ]
    newest = max(same, key=lambda r: r.record.created_at or 0.0) if same else None
    if newest is None or newest.verification is None or newest.verification.passed:
        return tested
    return replace(tested, changes=(f"its newest run {newest.id} {state_label(newest)}",))


def _own_python(pipeline: Pipeline | None, step: str) -> bool:
    """Whether ``step`` runs in an interpreter of its own (``python =``), not the host's."""
    from harness.runs.target.describe import python_origin

    if pipeline is None:
        return False
    try:
        return python_origin(pipeline, step) is not None
    except HarnessError:
        return False


def _smoke_green(r: RunInfo) -> bool:
    return bool(r.record.smoke) and r.state == RunState.SUCCEEDED


def _verified(r: RunInfo) -> bool:
    return not r.record.smoke and r.state == RunState.SUCCEEDED and r.verification is not None


def _last_failed(runs: tuple[RunInfo, ...]) -> str | None:
    """The newest real run's label if its output failed its check."""
    from harness.runs.record.lifecycle import state_label

    real = [r for r in runs if not r.record.smoke and r.state != RunState.RUNNING]
    last = max(real, key=lambda r: r.record.created_at or 0.0) if real else None
    bad = last is not None and last.verification is not None and not last.verification.passed
    return f"{last.id} {state_label(last)}" if bad and last is not None else None


def _smoke_fingerprint(r: RunInfo) -> Fingerprint | None:
    return None if r.record.smoke is None else r.record.smoke.fingerprint


def _run_fingerprint(r: RunInfo) -> Fingerprint | None:
    return r.record.fingerprint


def _budget(target: Target, plan: StepPlan) -> StepPlan:
    """The step with what it will write counted on the target (or why it could not be)."""
    from harness.runs.target.disk import count

    assert plan.disk is not None
    try:
        return replace(plan, budget=count(target, plan.disk, plan.python, plan.name))
    except HarnessError as exc:
        return replace(plan, budget_error=exc.message)


def _checked(
    target: Target,
    callers: Sequence[str],
    declared: Mapping[str, Sequence[str]] | None,
    library: SeriesLibrary,
    dist_reports: list[DistReport],
    series: Sequence[SeriesView],
) -> tuple[CheckReport | None, CheckReport | None]:
    """The caller's check as the target is and as it will be once the pending patches are
    applied (the same report when none is pending); ``None`` for a review without a caller.
    One caller per report: the one the series is for."""
    pending = any(s.pending for s in series if s.patches is not None)
    for caller in callers[:1]:
        from harness.patching.overlay import overlay
        from harness.reading.check import check  # (the checker: only for a review that checks)

        callees = list((declared or {}).get(caller) or []) or None
        # the series' facts here (what its gated-off patches need, files a release deleted)
        carried = (library, dist_reports) if dist_reports else None
        live = check(target, caller, against=callees, series=carried)
        if not pending:
            return live, live
        patched = overlay(dist_reports)
        return live, check(target, caller, against=callees, with_patches=patched, series=carried)
    return None, None


def _vouched(
    target: Target,
    plan: StepPlan,
    facts: TargetFacts,
    series: Sequence[SeriesView],
    services: Callable[[], dict[str, Fingerprint]] | None,
    require: tuple[bool, bool],
    smoke_run: bool,
) -> StepPlan:
    """``plan`` with what its last green smoke run and its last verified run still vouch for,
    against the environment now (``services``: a served step's servers' environments, read
    only when asked). ``require``: ``--require-smoke`` / ``--require-verified``."""
    wants_smoke = not smoke_run and plan.smoke is not None
    require_smoke = require[0] and not smoke_run
    require_verified = require[1] and not smoke_run
    wants_verified = plan.verify is not None and plan.error is None
    if not (wants_smoke or wants_verified):
        return plan
    runs = _runs_of(target, plan)
    now = Fingerprint.of(facts.dists, {s.dist: s.applied for s in series})
    if services is not None:  # a served step: its servers' environments, as they are now
        now = replace(now, services=services())
    if wants_smoke:
        tested = _vouching(runs, now, require_smoke, _smoke_green, _smoke_fingerprint)
        plan = replace(plan, smoke_tested=tested)
    if wants_verified:
        now = replace(now, entry=plan.entry)
        verified = _vouching(runs, now, require_verified, _verified, _run_fingerprint)
        verified = _unless_newest_failed(runs, now, verified)
        plan = replace(plan, verified=verified, last_failed=_last_failed(runs))
    return plan


def _callers(
    declared: Mapping[str, Any] | None,
    series_dists: Sequence[str],
    facts: TargetFacts,
    series: Sequence[SeriesView],
) -> list[str]:
    """The callers a review checks when none was named: those the step declares, else each
    dist with a series that is installed here."""
    if declared is not None:
        return list(declared)
    return [
        d
        for d in series_dists
        if facts.dists.get(d) or any(s.dist == d and s.installed for s in series)
    ]


def build_review(target: Target, request: ReviewRequest) -> Review:
    """The review ``request`` asks for. The step's preflight is in it -- the launch's own
    verdicts, or the same preflight made here: a failing check (the step's script, cwd or
    command missing, the workdir a file) is a blocker here too, so that "ready" means the
    launch will start. A step with a smoke mode also says whether its last green smoke run
    still vouches for the environment (``require_smoke``: a blocker when it does not), and
    one with ``verify`` whether its last verified run does."""

    from packaging.utils import canonicalize_name

    from harness.patching.library import SeriesLibrary
    from harness.reading.probe import gather_facts

    asked = None if request.step is None else request.step.loaded()
    workdir = request.workdir
    plan = _step(target, asked, request.preflight, workdir)
    host = target  # a service's interpreter is looked up on the host, not in the step's
    if request.disk and plan is not None and plan.error is None and plan.disk:
        plan = _budget(host, plan)
    given = request.known_facts
    if plan is not None and asked is not None and plan.python:  # its own environment
        from harness.runs.target.describe import python_origin
        from harness.targets.interp import with_python

        origin = python_origin(asked.load(), plan.name)  # loaded once: StepRequest.loaded
        target = with_python(target, plan.python, origin)
        given = None  # read with the host's interpreter, not the step's
    declared = None if plan is None else plan.checks
    library = SeriesLibrary(request.patches)  # read once: the facts, the states, the check
    series_dists, wanted = dists_of(library, declared)
    if (
        plan is not None
        and asked is not None
        and plan.error is not None
        and _own_python(asked.pipeline, plan.name)
    ):
        # the step's own interpreter could not be read: the host's is not the step's, and
        # its series and calls would be the wrong ones, listed before the one real blocker
        series_dists, wanted = [], []
    facts: TargetFacts = (
        given.facts
        if given is not None and given.dists == tuple(wanted)
        else gather_facts(target, wanted)
    )
    holders = _stale(target, workdir) if request.stale else []
    known: dict[str, str | None] = {str(canonicalize_name(k)): v for k, v in facts.dists.items()}
    dist_reports = []
    if series_dists:  # the patch machinery is imported only for a review that has a series
        from harness.patching.ops import status

        dist_reports = status(target, library, installed=known)
    series = tuple(SeriesView.from_report(r) for r in dist_reports)
    names = list(request.callers or ()) or _callers(declared, series_dists, facts, series)
    live, after = _checked(target, names[:1], declared, library, dist_reports, series)
    if plan is not None:
        pipe = None if asked is None else asked.pipeline  # None: the file could not be read
        prints = None
        if asked is not None and pipe is not None:
            prints = partial(
                service_prints, host, library, pipe, asked.name, asked.overrides, workdir
            )
        require = (request.require_smoke, request.require_verified)
        plan = _vouched(target, plan, facts, series, prints, require, request.smoke_run)
    serve = _serve(target, plan, request.overrides)
    reasons = judge(facts, holders, series, live, after, plan, serve)
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
        serve,
    )
