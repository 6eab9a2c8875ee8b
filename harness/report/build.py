"""Gather the review from the target: facts, patch series, check results, the step. I/O edge."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.analysis.findings import CheckReport
from harness.errors import HarnessError
from harness.models import TargetFacts
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


def _stale(target: Target, workdir: str | None) -> list[GpuHolder]:
    """Processes holding /dev/nvidia* that ``harness run`` would refuse to start next to."""
    from harness.runs.follow.commands import stale_holders

    try:
        return stale_holders(target, workdir)
    except HarnessError:
        return []  # a report still says what it can; the run's preflight will insist


def _step(target: Target, request: ReviewRequest) -> StepPlan | None:
    """The step as it will launch (the launch's own, resolved), with its preflight."""
    if request.step is None:
        return None
    from harness.runs.target.describe import describe

    preflight = True if request.preflight is None else request.preflight
    try:
        return describe(target, request.step, preflight=preflight, workdir=request.workdir)
    except HarnessError as exc:
        return StepPlan(request.step.name, error=exc.message)


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


def _own_python(asked: StepRequest, step: str) -> bool:
    """Whether ``step`` runs in an interpreter of its own (``python =``), not the host's."""
    from harness.runs.target.describe import python_origin

    try:
        return python_origin(asked.load(), step) is not None
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


def _service_prints(
    target: Target, library: SeriesLibrary, asked: StepRequest, workdir: str | None
) -> dict[str, Fingerprint]:
    """What the services ``asked``'s step needs run on now, each in its own interpreter (the
    server's vLLM, its series' applied patches): a smoke or verified run of a served step
    vouches for them too. As the service's own review reads them at its launch; one not
    readable is left out (then it no longer vouches)."""
    import os

    from packaging.utils import canonicalize_name

    from harness.reading.probe import gather_facts
    from harness.runs.target.context import workdir_for
    from harness.runs.target.describe import python_origin, resolve_on
    from harness.targets.interp import with_python

    out: dict[str, Fingerprint] = {}
    try:
        pipe, step = asked.load(), asked.name
        needs = pipe.steps[step].needs if step in pipe.steps else ()
        if needs:
            workdir = workdir or workdir_for(
                target, os.environ.get("HARNESS_WORKDIR"), absolute=True
            )
    except HarnessError:
        return out
    for need in needs:
        spec = pipe.steps[need]
        known = {**pipe.params, **spec.params}
        sets = {k: v for k, v in asked.overrides.items() if k in known}
        try:
            assert workdir is not None
            r = resolve_on(target, pipe, need, workdir, "<run-id>", sets, ())
            there = with_python(target, r.python, python_origin(pipe, need))
            series_dists, wanted = _dists(library, spec.checks)
            facts = gather_facts(there, wanted, gpus=False)
            applied: dict[str, list[str]] = {}
            if series_dists:
                from harness.patching.ops import status

                known_v = {str(canonicalize_name(k)): v for k, v in facts.dists.items()}
                for rep in status(there, library, installed=known_v):
                    view = SeriesView.from_report(rep)
                    applied[view.dist] = list(view.applied)
        except HarnessError:
            continue
        out[need] = Fingerprint.of(facts.dists, applied)
    return out


def review_dists(patches: Path, checks: Mapping[str, Any] | None) -> list[str]:
    """The dists whose versions a review of a step declaring ``checks`` asks the target
    (its facts probe): what ``harness run`` asks in its preflight's round trip instead."""
    from harness.patching.library import SeriesLibrary

    return _dists(SeriesLibrary(patches), checks)[1]


def _dists(
    library: SeriesLibrary, declared: Mapping[str, Any] | None
) -> tuple[list[str], list[str]]:
    """``(series_dists, wanted)``: the dists with a series the review covers, and every dist
    whose version it needs (theirs and their series' ``requires``: one facts probe for both).

    A step that declares the callers it exercises is reviewed for those alone (none: facts
    and GPU holders only); without a step, or undeclared, every dist with a series is."""
    from packaging.utils import canonicalize_name

    series_dists = library.dists()
    if declared is not None:
        wanted_callers = {str(canonicalize_name(c)) for c in declared}
        series_dists = [d for d in series_dists if str(canonicalize_name(d)) in wanted_callers]
    return series_dists, series_dists + library.required_dists(series_dists)


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
    host: Target,
    plan: StepPlan,
    request: ReviewRequest,
    facts: TargetFacts,
    series: Sequence[SeriesView],
    library: SeriesLibrary,
) -> StepPlan:
    """``plan`` with what its last green smoke run and its last verified run still vouch for,
    against the environment now (a served step's servers' environments included)."""
    asked, workdir = request.step, request.workdir
    wants_smoke = not request.smoke_run and plan.smoke is not None
    require_smoke = request.require_smoke and not request.smoke_run
    require_verified = request.require_verified and not request.smoke_run
    wants_verified = plan.verify is not None and plan.error is None
    if not (wants_smoke or wants_verified):
        return plan
    runs = _runs_of(target, plan)
    now = Fingerprint.of(facts.dists, {s.dist: s.applied for s in series})
    if asked is not None:  # a served step: its servers' environments, as they are now
        now = replace(now, services=_service_prints(host, library, asked, workdir))
    if wants_smoke:
        tested = _vouching(runs, now, require_smoke, _smoke_green, _smoke_fingerprint)
        plan = replace(plan, smoke_tested=tested)
    if wants_verified:
        now = replace(now, entry=plan.entry)
        verified = _vouching(runs, now, require_verified, _verified, _run_fingerprint)
        verified = _unless_newest_failed(runs, now, verified)
        plan = replace(plan, verified=verified, last_failed=_last_failed(runs))
    return plan


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

    plan, asked, workdir = _step(target, request), request.step, request.workdir
    host = target  # a service's interpreter is looked up on the host, not in the step's
    if request.disk and plan is not None and plan.error is None and plan.disk:
        plan = _budget(host, plan)
    given = request.known_facts
    if plan is not None and asked is not None and plan.python:  # its own environment
        from harness.runs.target.describe import python_origin
        from harness.targets.interp import with_python

        origin = python_origin(asked.load(), plan.name)
        target = with_python(target, plan.python, origin)
        given = None  # read with the host's interpreter, not the step's
    declared = None if plan is None else plan.checks
    library = SeriesLibrary(request.patches)  # read once: the facts, the states, the check
    series_dists, wanted = _dists(library, declared)
    if (
        plan is not None
        and asked is not None
        and plan.error is not None
        and _own_python(asked, plan.name)
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
    names = list(request.callers or ()) or (
        list(declared)
        if declared is not None
        else [
            d
            for d in series_dists
            if facts.dists.get(d) or any(s.dist == d and s.installed for s in series)
        ]
    )
    live, after = _checked(target, names[:1], declared, library, dist_reports, series)
    if plan is not None:
        plan = _vouched(target, host, plan, request, facts, series, library)
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
