"""The gates of a launch on one target: the pre-run review and the preflight, decided, not told.

:func:`harness.group.start.start_run` (the one launch path, one target or several) calls them
per host; following the launched run is :mod:`harness.runs.attach`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from harness.runs.context import Context
from harness.runs.describe import preflight_of
from harness.runs.models import Verdict
from harness.runs.preflight import Preflight
from harness.runs.steps import ResolvedStep
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
) -> Review:
    """The pre-run review (saved as ``review.json`` in the run directory, so a run can always
    say what it was started on): ``harness report STEP``'s, with the launch's own
    ``preflight`` verdicts in it (not a second probe). Stale GPU holders are the
    preflight's to refuse or end (``--kill-stale``), in its own words."""
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
    )


def preflight_verdicts(
    ctx: Context, target: Target, workdir: str, resolved: ResolvedStep, kill_stale: bool
) -> Preflight:
    """The preflight's verdicts for ``resolved`` on ``target``: decided, not told."""
    return preflight_of(target, workdir, resolved, ctx.device_glob, kill_stale)
