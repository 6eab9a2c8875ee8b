"""What a review is asked: one request, built once, keyword by keyword.

``harness report`` builds it from the command line (the step read from the pipeline file);
``harness run`` from the step it resolved on each host (:meth:`ReviewRequest.of_launch`), so
the review judges the step exactly as it will launch -- its run id, ``extra`` args, spread
preparation -- with the verdicts and facts the launch's preflight round trip just read.
:func:`harness.report.build.build_review` takes nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.models import AskedFacts
from harness.runs.pipeline.steps import Pipeline, ResolvedStep
from harness.runs.record.models import Verdict
from harness.runs.target.describe import StepRequest


@dataclass(frozen=True)
class ReviewRequest:
    """One review's question.

    ``callers``: the callers to check (``report --caller``; else the step's or the series').
    ``stale``: the review reports stale GPU holders (a launch's preflight refuses or ends
    them in its own words). ``smoke_run``: the launch is a smoke run, the test itself: the
    last smoke run is neither checked nor required. ``preflight``: the verdicts the
    launch's preflight just made (``None``: the review runs the same preflight itself).
    ``workdir``: the launch's (``--workdir``). ``known_facts``: the target's facts the
    preflight's round trip read, used when they answer the review's very question.
    ``disk``: count the step's ``disk = {...}`` on the target (what it will write against
    the room there); a launch leaves it to its own disk gate, which counts it once.
    """

    patches: Path
    step: StepRequest | None = None
    callers: Sequence[str] | None = None
    stale: bool = True
    require_smoke: bool = False
    require_verified: bool = False
    smoke_run: bool = False
    preflight: tuple[Verdict, ...] | None = None
    workdir: str | None = None
    known_facts: AskedFacts | None = None
    disk: bool = True

    @property
    def overrides(self) -> Mapping[str, str]:
        return {} if self.step is None else self.step.overrides

    @classmethod
    def of_launch(
        cls,
        *,
        patches: Path,
        pipeline: Pipeline,
        resolved: ResolvedStep,
        run_id: str,
        overrides: Mapping[str, str],
        require_smoke: bool,
        require_verified: bool,
        smoke_run: bool,
        workdir: str,
        preflight: Sequence[Verdict],
        facts: AskedFacts | None,
    ) -> ReviewRequest:
        """The review of one host's launch: its step as resolved, its preflight's verdicts."""
        step = StepRequest(
            resolved.step, Path(pipeline.path), overrides, pipeline, resolved, run_id
        )
        return cls(
            patches,
            step,
            stale=False,
            require_smoke=require_smoke,
            require_verified=require_verified,
            smoke_run=smoke_run,
            preflight=tuple(preflight),
            workdir=workdir,
            known_facts=facts,
            disk=False,
        )
