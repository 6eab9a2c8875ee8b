"""Issue 21 item 2: the review carries the launch preflight's verdicts -- a failure is a
blocker, a warning a warning -- so "ready" means ``harness run`` will start the step; the
preflight's tensor-parallel check (which knows ``CUDA_VISIBLE_DEVICES``) replaces the
review's own rather than repeating it."""

from __future__ import annotations

from harness.models import GpuInfo, TargetFacts
from harness.report.model import BLOCKER, WARNING, Reason, judge
from harness.runs.record.models import Level, Verdict
from harness.runs.target.describe import StepPlan

GPUS = tuple(GpuInfo(i, "H200", 143771, 0, 143771) for i in range(2))
FACTS = TargetFacts("box", {}, (), {}, GPUS, None)


def reasons(step: StepPlan) -> list[Reason]:
    return judge(FACTS, (), (), None, None, step)


def test_preflight_failures_are_blockers_and_warnings_warnings() -> None:
    step = StepPlan(
        "extract",
        ("python", "x.py"),
        preflight=(
            Verdict("command", Level.FAIL, "script /w/x.py not found", "check the paths"),
            Verdict("workdir", Level.WARN, "/w does not exist yet; it will be created"),
        ),
    )
    assert reasons(step) == [
        Reason(BLOCKER, "preflight command: script /w/x.py not found", "check the paths"),
        Reason(WARNING, "preflight workdir: /w does not exist yet; it will be created"),
    ]


def test_the_preflights_tensor_parallel_check_is_said_once() -> None:
    tp = Verdict(
        "tensor-parallel", Level.FAIL,
        "tensor-parallel size 4 needs 4 GPUs; the step sees 2 GPU(s) on the target", "--set tp=2",
    )  # fmt: skip
    alone = reasons(StepPlan("extract", ("python", "x.py"), tensor_parallel=4))
    assert [r.text for r in alone] == ["tensor-parallel size 4 but only 2 GPU(s)"]
    both = reasons(StepPlan("extract", ("python", "x.py"), tensor_parallel=4, preflight=(tp,)))
    assert [r.text for r in both] == [f"preflight tensor-parallel: {tp.message}"]


def test_the_preflight_travels_in_the_reviews_json() -> None:
    step = StepPlan("x", ("a",), preflight=(Verdict("command", Level.FAIL, "gone", "fix"),))
    again = StepPlan.from_dict(step.to_dict())
    assert again.preflight == step.preflight
    assert "preflight" not in StepPlan("x", ("a",)).to_dict()
