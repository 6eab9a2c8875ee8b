"""The review's verdict (``report.model.judge``), as a table of cases: models in, reasons out."""

from __future__ import annotations

from dataclasses import replace

import pytest

from harness.analysis.findings import CheckReport, Finding
from harness.models import GpuInfo, TargetFacts
from harness.patching.states import Status
from harness.report.model import BLOCKER, INFO, WARNING, Reason, Review, judge
from harness.report.parts import PatchLine, SeriesView
from harness.runs.pipeline.requires import Need
from harness.runs.pipeline.smoke import SmokeTested
from harness.runs.record.models import GpuHolder
from harness.runs.target.describe import StepPlan

GPU = GpuInfo(0, "H200", 143771, 0, 143771)
FACTS = TargetFacts("box", {}, (), {"vllm": "0.20.2"}, (GPU,), None)
NO_GPU = replace(FACTS, gpus=(), gpu_note="nvidia-smi not found")


def finding(severity: str, line: int = 1, message: str = "boom") -> Finding:
    return Finding(severity, "unexpected-kwarg", "pkg/m.py", line, "f(x=1)", "m:f", message, "fix")


def report(*findings: Finding) -> CheckReport:
    return CheckReport("box", "speculators", "0.3.0", {"vllm": "0.20.2"}, {}, findings)


def series(*states: tuple[str, Status], **kw: object) -> SeriesView:
    lines = tuple(PatchLine(i, s, detail="hunk 2 of a.py") for i, s in states)
    return SeriesView("speculators", "0.3.0", patches=lines, **kw)  # type: ignore[arg-type]


HOLDER = GpuHolder(4242, 1, "python", "python train.py")
STEP = StepPlan("extract", ("python", "x.py"), tensor_parallel=2)


def R(severity: object, text: str, hint: str | None = None) -> tuple[object, str, str | None]:
    return (severity, text, hint)


CASES = [
    ("nothing in the way", FACTS, [], [], None, None, None, []),
    (
        "no GPU is a warning",
        NO_GPU,
        [],
        [],
        None,
        None,
        None,
        [R(WARNING, "no GPU on the target (nvidia-smi not found)")],
    ),
    (
        "a conflict blocks",
        FACTS,
        [],
        [series(("0003", Status.CONFLICTS))],
        None,
        None,
        None,
        [
            R(
                BLOCKER,
                "patch 0003 conflicts with the installed speculators (hunk 2 of a.py)",
                "harness patches shows expected vs found lines",
            )
        ],
    ),
    (
        "pending patches block; applied and skipped ones do not",
        FACTS,
        [],
        [
            series(
                ("0001", Status.APPLIED),
                ("0002", Status.APPLIES),
                ("0003", Status.APPLIES),
                ("0011", Status.SKIPPED),
            )
        ],
        None,
        None,
        None,
        [
            R(
                BLOCKER,
                "2 patch(es) of the speculators series are not applied: 0002, 0003",
                "harness apply-patches",
            )
        ],
    ),
    (
        "hand edits warn; a note on an installed dist without a plan warns",
        FACTS,
        [],
        [
            series(("0001", Status.APPLIED), hand_edited=("speculators/x.py",)),
            SeriesView("vllm", "0.20.2", note="no series for vllm 0.20.2"),
        ],
        None,
        None,
        None,
        [
            R(
                WARNING,
                "speculators/x.py was edited by hand since install",
                "record it: harness make-patch speculators",
            ),
            R(WARNING, "patches: no series for vllm 0.20.2"),
        ],
    ),
    (
        "check errors block; the series that fixes them says so",
        FACTS,
        [],
        [],
        report(finding("error", 3)),
        report(),
        None,
        [
            R(BLOCKER, "pkg/m.py:3: boom", "fix"),
            R(INFO, "the patch series fixes every check error above", "harness apply-patches"),
        ],
    ),
    (
        "an error the patches bring in blocks; warnings come from the patched check",
        FACTS,
        [],
        [],
        report(finding("error", 3), finding("warning", 9, "drift")),
        report(finding("error", 5, "new"), finding("warning", 7, "later")),
        None,
        [
            R(BLOCKER, "pkg/m.py:3: boom", "fix"),
            R(BLOCKER, "after the patches: pkg/m.py:5: new", "fix"),
            R(WARNING, "pkg/m.py:7: later"),
        ],
    ),
    (
        "a stale GPU holder blocks",
        FACTS,
        [HOLDER],
        [],
        None,
        None,
        None,
        [
            R(
                BLOCKER,
                "stale GPU holder: pid 4242 (python train.py)",
                "harness run --kill-stale, or stop it",
            )
        ],
    ),
    (
        "tensor parallel beyond the GPUs blocks",
        FACTS,
        [],
        [],
        None,
        None,
        STEP,
        [R(BLOCKER, "tensor-parallel size 2 but only 1 GPU(s)")],
    ),
    (
        "a step that does not resolve blocks",
        FACTS,
        [],
        [],
        None,
        None,
        StepPlan("extract", error="unknown parameter {tp}"),
        [R(BLOCKER, "step: unknown parameter {tp}")],
    ),
    (
        "not smoke-tested: a warning, a blocker when required",
        FACTS,
        [],
        [],
        None,
        None,
        replace(STEP, tensor_parallel=None, smoke_tested=SmokeTested(False)),
        [
            R(
                WARNING,
                "step extract has not been smoke-tested here",
                "harness run extract --smoke",
            )
        ],
    ),
    (
        "changed since the last green smoke run, required",
        FACTS,
        [],
        [],
        None,
        None,
        replace(
            STEP,
            tensor_parallel=None,
            smoke_tested=SmokeTested(True, {"id": "extract-1"}, ("vllm 0.20.1 -> 0.20.2",)),
        ),
        [
            R(
                BLOCKER,
                "step extract not smoke-tested since vllm 0.20.1 -> 0.20.2 "
                "(last green smoke run extract-1)",
                "harness run extract --smoke",
            )
        ],
    ),
    (
        "an unmet need blocks with the pip line",
        FACTS,
        [],
        [],
        None,
        None,
        replace(
            STEP,
            tensor_parallel=None,
            requires=(Need("transformers", ">=4.56,<5", "5.17.0"), Need("torch", ">=2", "2.11")),
            pip="pip install 'transformers>=4.56,<5'",
        ),
        [
            R(
                BLOCKER,
                "step extract needs transformers>=4.56,<5; its environment has 5.17.0",
                "pip install 'transformers>=4.56,<5'",
            )
        ],
    ),
]


@pytest.mark.parametrize(
    ("facts", "stale", "patches", "check", "after", "step", "want"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_judge(
    facts: TargetFacts,
    stale: list[GpuHolder],
    patches: list[SeriesView],
    check: CheckReport | None,
    after: CheckReport | None,
    step: StepPlan | None,
    want: list[tuple[object, str, str | None]],
) -> None:
    got = judge(facts, stale, patches, check, after, step)
    assert [(r.severity, r.text, r.hint) for r in got] == want


def test_reasons_come_most_serious_first() -> None:
    got = judge(NO_GPU, [HOLDER], [], report(finding("warning")), None, None)
    assert [r.severity for r in got] == [BLOCKER, WARNING, WARNING]


def test_the_verdict_follows_the_blockers_and_the_json_round_trips() -> None:
    reasons = tuple(judge(FACTS, [HOLDER], [], None, None, STEP))
    review = Review("box", "now", FACTS, (HOLDER,), (), None, None, STEP, reasons)
    assert not review.ready and review.verdict == "not ready"
    assert Review.from_dict(review.to_dict()).to_dict() == review.to_dict()
    assert review.to_dict()["stale_gpu_holders"][0]["cmd"] == "python train.py"
    calm = replace(review, reasons=(Reason(WARNING, "no GPU"),))
    assert calm.ready and calm.verdict == "ready"
