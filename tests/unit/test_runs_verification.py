"""How a step's output check reads: the outcome from how the check ended, the run's state,
label and exit code (pure tables; the real supervisor runs them in test_runs_verify.py)."""

from __future__ import annotations

import pytest

from harness.runs.lifecycle import exit_code_of, state_label
from harness.runs.models import RunInfo, RunRecord, RunStatus
from harness.runs.verification import Outcome, Verification, judge

REPORT = {"checked": 48, "total": 48, "failed": [], "detail": "max relative error 0.0087"}
BAD = {"checked": 48, "total": 48, "failed": [f"data_{i}" for i in range(8, 32)]}

JUDGE = [
    # exit, signal, timed out, report -> outcome
    (0, None, False, REPORT, Outcome.PASSED),
    (0, None, False, None, Outcome.PASSED),  # a check that reports no counts
    (1, None, False, BAD, Outcome.FAILED),
    (0, None, False, BAD, Outcome.FAILED),  # exit 0 naming failures: the failures win
    (1, None, False, None, Outcome.CRASHED),  # exit 1 without a report: a traceback
    (2, None, False, REPORT, Outcome.CRASHED),
    (None, 9, False, None, Outcome.CRASHED),
    (None, 15, True, None, Outcome.TIMED_OUT),
    (0, None, True, REPORT, Outcome.TIMED_OUT),  # out of time is never a pass
]


@pytest.mark.parametrize(("code", "sig", "late", "report", "want"), JUDGE)
def test_outcome_of_a_check(code, sig, late, report, want) -> None:  # type: ignore[no-untyped-def]
    assert judge(code, sig, late, report) == want


RUNS = [
    # verify.json (raw), declared -> state, label, exit
    ({"exit_code": 0, "report": REPORT}, True, "succeeded",
     "succeeded · verified 48/48 (max relative error 0.0087)", 0),
    ({"exit_code": 0, "report": {**REPORT, "checked": 48, "total": 256}}, True, "succeeded",
     "succeeded · verified 48/48 of 256 (max relative error 0.0087)", 0),
    ({"exit_code": 1, "report": BAD}, True, "failed",
     "failed verification: 24/48 samples differ (data_8, data_9, data_10, …)", 1),
    ({"exit_code": 1, "report": None}, True, "failed",
     "failed verification: the check crashed (exit 1); see the log", 1),
    ({"signal": 9}, True, "failed",
     "failed verification: the check crashed (signal 9); see the log", 137),
    ({"timed_out": True, "timeout": 600, "signal": 15}, True, "failed",
     "failed verification: the check timed out after 600 s", 124),
    (None, True, "failed", "failed verification: the check left no verdict", 1),
    (None, False, "succeeded", "succeeded · unverified", 0),
]  # fmt: skip


@pytest.mark.parametrize(("raw", "declared", "state", "label", "code"), RUNS)
def test_a_run_that_exited_0_reads_as_its_check_says(  # type: ignore[no-untyped-def]
    raw, declared, state, label, code
) -> None:
    info = RunInfo(
        record=RunRecord(
            id="extract-1",
            step="extract",
            argv=("x",),
            cwd="/w",
            verify="python check.py" if declared else None,
        ),
        status=RunStatus(exit_code=0),
        verification=Verification.from_facts(raw),
    )
    assert (info.state, state_label(info), exit_code_of(info)) == (state, label, code)
    again = RunInfo.from_dict(info.to_dict())  # --json round trip keeps the verdict
    assert (again.state, state_label(again)) == (state, label)


def test_a_stopped_run_is_killed_whatever_its_check_said() -> None:
    info = RunInfo(
        record=RunRecord(id="x", step="x", argv=("x",), cwd="/w", verify="c"),
        status=RunStatus(exit_code=0, stop_requested=True),
        verification=Verification.from_facts({"signal": 15}),
    )
    assert info.state == "killed"
