"""The gates of a launch: each host's preflight, decided, not told, and the facts it reads for
the review; every host's review (:func:`review_all`: :func:`harness.report.build.build_review`'s,
asked by a :class:`~harness.report.request.ReviewRequest` built from the step the launch
resolved), the hosts compared, and the refusals a launch stops on.

:func:`harness.launch.start.start_run` (the one launch path, one target or several) calls them
per host; following the launched run is :mod:`harness.runs.follow.attach`. Here, above
:mod:`harness.report` and :mod:`harness.runs`, because the review is the report's and the
preflight the runs probe's; ``run`` and ``report`` refuse the flags no run of a step could
satisfy through :func:`refuse_flags_that_cannot_apply`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.errors import NotReady, RunError
from harness.group.result import GroupResult, run_each
from harness.launch.disk import disk_gate
from harness.launch.events import Compared, Forced, Preflighted, Reviewed
from harness.launch.nodes import Host, Launch, Request, each, host_name
from harness.runs.pipeline.steps import Pipeline, ResolvedStep
from harness.runs.record.models import Level
from harness.runs.target.context import Context
from harness.runs.target.describe import preflight_of
from harness.runs.target.preflight import Preflight
from harness.targets.base import Target

if TYPE_CHECKING:
    from harness.report.model import Review
    from harness.report.request import ReviewRequest


def preflight_verdicts(
    ctx: Context,
    target: Target,
    workdir: str,
    resolved: ResolvedStep,
    kill_stale: bool,
    review_facts: list[str] | None = None,
) -> Preflight:
    """The preflight's verdicts for ``resolved`` on ``target``: decided, not told.
    ``review_facts``: the dists the review will ask the versions of (:func:`review_facts`),
    read in the same round trip (``Preflight.facts``)."""
    return preflight_of(target, workdir, resolved, ctx.device_glob, kill_stale, review_facts)


def review_facts(
    pipeline: Pipeline, step: str, patches: Path | None, resolved: ResolvedStep
) -> list[str] | None:
    """The dists the launch's review will ask the target's facts for, so the preflight can
    read them in its own round trip; ``None`` when the review asks another interpreter
    (the step's own ``python``)."""
    from harness.patching.series import patches_root
    from harness.report.asked import review_dists

    spec = pipeline.steps.get(step)
    if spec is None or resolved.python:
        return None
    return review_dists(patches_root(patches), spec.checks)


def refuse_flags_that_cannot_apply(
    pipeline: Pipeline, step: str | None, require_smoke: bool, require_verified: bool
) -> None:
    """``--require-smoke`` / ``--require-verified`` for a step that declares no smoke mode /
    no ``verify``: no run of it could ever satisfy the flag, so it is refused in one line
    instead of doing nothing (before any connection).

    Raises:
        UsageError: naming the step's entry (``file:line``) and the flag.
    """
    from harness.errors import UsageError

    flags = (
        ("--require-smoke", require_smoke, "smoke",
         "no smoke mode, so no run of it is ever smoke-tested"),
        ("--require-verified", require_verified, "verify",
         "no verify (an output check), so no run of it is ever verified"),
    )  # fmt: skip
    wanted = [(flag, key, what) for flag, on, key, what in flags if on]
    if not wanted:
        return
    if step is None:
        raise UsageError(
            f"{wanted[0][0]} applies to a step, and none was named",
            f"name the step: harness report STEP {wanted[0][0]}",
        )
    spec = pipeline.steps.get(step)
    for flag, key, what in wanted:
        if spec is not None and getattr(spec, key) is None:
            raise UsageError(
                f"{pipeline.where('steps', step)}: {flag}: step {step!r} declares {what}",
                f"add [steps.{step}.{key}] to its entry, or leave out {flag}",
            )


def review_all(
    launch: Launch, step: str, asked: Callable[[Host], ReviewRequest]
) -> tuple[dict[str, Review], NotReady | None]:
    """Every host's review (``asked``: its request, the preflight's verdicts and facts in it),
    saved on the host (``review.json``: a run can always say what it was started on) and told;
    and the refusal unless every host is ready and (for one job over all hosts) the hosts
    agree -- which ``--force`` overrides."""
    from harness.group.review import GroupReview, series_state
    from harness.group.sameness import compare
    from harness.report.build import build_review

    def review(h: Host) -> Review:
        return build_review(h.target, asked(h))

    reviews = each(launch.hosts, host_name, review, "review")
    for h in launch.hosts:
        h.review = reviews[h.node.host]
        launch.on_event(Reviewed(reviews[h.node.host], launch.tag(h)))
    same = None
    if launch.spread.same_stack:
        facts = {n: r.facts for n, r in reviews.items() if r.facts is not None}
        extra: dict[str, dict[str, str | None]] = {}
        for n, r in reviews.items():
            for what, value in series_state(r).items():
                extra.setdefault(what, {})[n] = value
        same = compare(facts, extra=extra)
        launch.on_event(Compared(same))
    if launch.several:
        got: GroupResult[Any] = run_each(list(reviews), reviews.__getitem__)
        blockers = GroupReview(got, same).blockers
        refused = NotReady(
            "not launching on any host: " + "; ".join(blockers),
            "read it with `harness report STEP -t HOSTS`; fix the blockers, or pass --force",
        )
    else:
        from harness.report.model import Gate

        (one,) = reviews.values()
        blockers = [r.text for r in one.reasons if r.severity == Gate.BLOCKER]
        refused = NotReady(
            f"not launching {step}: the review says not ready ({len(blockers)} blocker(s))",
            f"read it with `harness report {step}`; fix the blockers, or pass --force",
        )
    return reviews, refused if blockers else None


def preflight_refusal(
    step: str, verdicts: dict[str, Sequence[Any]], several: bool
) -> RunError | None:
    """Pure: the refusal when any host's preflight failed (``None``: launch)."""
    failed = {h: [v for v in vs if v.level == Level.FAIL] for h, vs in verdicts.items()}
    failed = {h: f for h, f in failed.items() if f}
    if not failed:
        return None
    if several:
        return RunError(
            f"preflight refused to launch {step} on " + ", ".join(failed),
            "fix what the lines above say on each host, then run again",
        )
    (fails,) = failed.values()
    return RunError(
        f"preflight refused to launch {step}: " + ", ".join(v.check for v in fails),
        fails[0].hint,
    )


def preflight_host(
    h: Host, pipeline: Pipeline, step: str, patches: Path | None, kill_stale: bool
) -> Preflight:
    """One host's preflight, with the facts its review will ask for in the same round trip."""
    assert h.resolved is not None
    dists = review_facts(pipeline, step, patches, h.resolved)
    return preflight_verdicts(h.ctx, h.target, h.workdir, h.resolved, kill_stale, dists)


def gate(
    launch: Launch, pipeline: Pipeline, req: Request
) -> tuple[dict[str, Preflight], dict[str, Review]]:
    """The one way a launch request enters the gates. Every host's preflight, then its review
    (told in that order: ``harness report STEP``'s, preflight included), then the disk gate;
    raises what refuses the launch -- a failed preflight always, a review that says not ready
    unless ``--force``."""
    hosts, on_event, step = launch.hosts, launch.on_event, req.step
    # the preflight first: the review told next is `harness report STEP`'s, preflight included
    checked = each(
        hosts,
        host_name,
        lambda h: preflight_host(h, pipeline, step, req.patches, req.kill_stale),
        "preflight",
    )
    from harness.patching.series import patches_root
    from harness.report.request import ReviewRequest

    patches = patches_root(req.patches)

    def asked(h: Host) -> ReviewRequest:
        """``harness report STEP``'s review of the step exactly as it will launch, with the
        verdicts and facts its preflight's round trip just read (not a second probe)."""
        got = checked[h.node.host]
        assert h.resolved is not None
        return ReviewRequest.of_launch(
            patches=patches,
            pipeline=pipeline,
            resolved=h.resolved,
            run_id=launch.run_id,
            overrides=req.overrides,
            require_smoke=req.require_smoke,
            require_verified=req.require_verified,
            smoke_run=req.smoke is not None,
            workdir=h.workdir,
            preflight=got.verdicts,
            facts=got.facts,
        )

    reviews, not_ready = review_all(launch, step, asked)
    for h in hosts:
        on_event(Preflighted(tuple(checked[h.node.host].verdicts), launch.tag(h)))
    refused = preflight_refusal(step, {n: c.verdicts for n, c in checked.items()}, launch.several)
    if refused is not None:
        raise refused  # what no --force launches
    if not_ready is not None and not req.force:
        raise not_ready
    if not_ready is not None:
        on_event(Forced())
    for h in hosts:  # what the step will write, before any server loads for it
        disk_gate(h, req.force, on_event)
    return checked, reviews
