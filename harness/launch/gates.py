"""The gates of a launch on one target: the preflight, decided, not told, and the facts it
reads for the review (the review itself is :func:`harness.report.build.build_review`'s, asked
by a :class:`~harness.report.request.ReviewRequest` built from the step the launch resolved).

:func:`harness.launch.start.start_run` (the one launch path, one target or several) calls them
per host; following the launched run is :mod:`harness.runs.follow.attach`. Here, above
:mod:`harness.report` and :mod:`harness.runs`, because the review is the report's and the
preflight the runs probe's; ``run`` and ``report`` refuse the flags no run of a step could
satisfy through :func:`refuse_flags_that_cannot_apply`.
"""

from __future__ import annotations

from pathlib import Path

from harness.runs.pipeline.steps import Pipeline, ResolvedStep
from harness.runs.target.context import Context
from harness.runs.target.describe import preflight_of
from harness.runs.target.preflight import Preflight
from harness.targets.base import Target


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
    from harness.report.build import review_dists

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
