"""The gates of a launch on one target: the pre-run review and the preflight, decided, not told.

:func:`harness.launch.start.start_run` (the one launch path, one target or several) calls them
per host; following the launched run is :mod:`harness.runs.attach`. Here, above
:mod:`harness.report` and :mod:`harness.runs`, because the review is the report's and the
preflight the runs probe's; ``run`` and ``report`` refuse the flags no run of a step could
satisfy through :func:`refuse_flags_that_cannot_apply`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from harness.models import AskedFacts
from harness.runs.context import Context
from harness.runs.describe import preflight_of
from harness.runs.models import Verdict
from harness.runs.preflight import Preflight
from harness.runs.steps import Pipeline, ResolvedStep
from harness.targets.base import Target

if TYPE_CHECKING:
    from harness.report.model import Review
    from harness.runs.smoke import SmokePlan


def gate_review(
    target: Target,
    step: str,
    pipeline_file: Path | None,
    overrides: dict[str, str],
    patches: Path | None,
    require_smoke: bool = False,
    smoke: SmokePlan | None = None,
    require_verified: bool = False,
    workdir: str | None = None,
    preflight: Sequence[Verdict] = (),
    facts: AskedFacts | None = None,
) -> Review:
    """The pre-run review (saved as ``review.json`` in the run directory, so a run can always
    say what it was started on): ``harness report STEP``'s, with the launch's own
    ``preflight`` verdicts in it (not a second probe), and the ``facts`` its round trip
    read (:func:`preflight_verdicts`). Stale GPU holders are the preflight's to refuse or
    end (``--kill-stale``), in its own words."""
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
        preflight=tuple(preflight),  # the launch's, made just before
        workdir=workdir,
        known_facts=facts,
        disk=False,  # the launch's own disk gate counts it, once
    )


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
    """The dists :func:`gate_review` will ask the target's facts for, so the preflight can
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
