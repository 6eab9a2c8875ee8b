"""How a step's output check reads: the outcome from how the check ended, the run's state,
label and exit code (pure tables; the real supervisor runs them in test_runs_verify.py)."""

from __future__ import annotations

import json

import pytest

from harness.runs.record.lifecycle import exit_code_of, state_label
from harness.runs.record.models import RunInfo, RunRecord, RunStatus
from harness.runs.record.verdict import describe
from harness.runs.record.verification import Outcome, Verification, exit_code, judge

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
    (1, None, False, REPORT, Outcome.CRASHED),  # exit 1 naming no failure: not "all good"
    (1, None, False, {"checks": {"values": {"compared": 3}}, "failed": []}, Outcome.CRASHED),
    (0, None, False, {"checked": 0, "total": 64, "failed": []}, Outcome.EMPTY),
    (0, None, False, {"checks": {"values": {"compared": 0}, "lengths": {"compared": 0}}},
     Outcome.EMPTY),  # every check at 0
    (0, None, False, {"checks": {"values": {"compared": 0, "of": 9}, "lengths": {"compared": 9}}},
     Outcome.EMPTY),  # the values compared nothing, and it does not say why
    (0, None, False, {"checks": {"ids": {"compared": 0, "skipped": "no --prepared"},
                                 "values": {"compared": 9}}}, Outcome.PASSED),
]  # fmt: skip


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


def counted(values=(256, 256, 256), chosen_by="all", **more):  # type: ignore[no-untyped-def]
    """A per-check report (hidden_states.py's shape): values P/C/N at layer 2, the others."""
    p, c, n = values
    checks = {"values": {"passed": p, "compared": c, "of": n, "layers": [2],
                         "max_rel_err": 0.0076, "chosen_by": chosen_by},
              "ids": {"passed": n, "compared": n, "of": n},
              "lengths": {"passed": n, "compared": n, "of": n},
              "layers": {"passed": n, "compared": n, "of": n}}  # fmt: skip
    for k, v in more.pop("checks", {}).items():
        checks[k] = v
    return {"checks": checks, "failed": [], "unit": "samples", **more}


SHIFTED = [{"sample": f"data_{i}", "check": "position", "why": "row 17 is nearest reference row 18"}
           for i in (5, 101, 202)]  # fmt: skip
WORDS = [
    # verify.json (raw) -> the verdict's words
    ({"exit_code": 0, "report": counted()},
     "verified: values 256/256 at layer 2 (max rel. err. 0.0076); ids 256/256; lengths "
     "256/256; layers 256/256"),
    ({"exit_code": 0, "report": counted((64, 64, 5000), "spread")},
     "verified: values compared on 64 of 5,000 samples, spread evenly (first and last "
     "included): 64/64 at layer 2 (max rel. err. 0.0076); ids 5,000/5,000"),
    ({"exit_code": 0, "report": counted(checks={"ids": {"passed": 0, "compared": 0, "of": 256,
                                                        "skipped": "no --prepared"}})},
     "; ids: not checked (no --prepared); lengths 256/256"),
    ({"exit_code": 0, "report": counted(drift={"above": 0.05, "samples": 3, "max": 0.061,
                                               "layer": 7, "identified": "every row and layer"})},
     "layers 256/256; drift above 0.05 on 3 samples, max 0.061 at layer 7, every row and "
     "layer identified"),
    # issue 41: every layer on a spread, the rule the check applied, drift all samples share
    ({"exit_code": 0, "report": counted(checks={"values": {
        "passed": 64, "compared": 64, "of": 64, "layers": [2, 4, 5, 8], "max_rel_err": 0.0081,
        "chosen_by": "all", "every_layer_on": 16,
        "rule": "each row within 10x its layer's noise floor -- layer 2: floor 0.0061"}})},
     "verified: values 64/64 at layer 2, at layers 2, 4, 5, 8 on 16 of them spread evenly (max "
     "rel. err. 0.0081); rule: each row within 10x its layer's noise floor -- layer 2: floor "
     "0.0061; ids 256/256"),
    ({"exit_code": 0, "report": counted(drift={"above": 0.05, "layer": 24, "floor": 0.061,
                                               "rows": 15040, "samples": 64, "layers": [24]})},
     "layers 256/256; drift shared by every sample: median row error 0.061 at layer 24 over "
     "15,040 rows of 64 samples (above 0.05), no row or sample outside it"),
    ({"exit_code": 1, "report": counted((253, 256, 256), failed=SHIFTED, failed_count=3)},
     "failed verification: 3 samples wrong (data_5 position: row 17 is nearest reference row "
     "18; data_101 position: row 17 is nearest reference row 18; data_202 position: row 17 is "
     "nearest reference row 18); values 253/256 at layer 2"),
    ({"exit_code": 1, "report": counted((0, 0, 256), checks={"lengths": {"passed": 250,
      "compared": 256, "of": 256}}, failed=[{"sample": "data_9", "check": "lengths",
      "why": "40 rows of states for 57 ids"}])},
     "failed verification: 1 sample wrong (data_9 lengths: 40 rows of states for 57 ids); "
     "values 0/0 of 256 at layer 2; ids 256/256; lengths 250/256; layers 256/256"),
    ({"exit_code": 0, "report": {"checked": 0, "total": 64, "failed": []}},
     "failed verification: the check compared nothing (0 of 64 samples)"),
    ({"exit_code": 0, "report": counted((0, 0, 256))},
     "failed verification: the check compared nothing (values 0/0 of 256 at layer 2; ids "),
    ({"exit_code": 1, "report": counted()},
     "failed verification: the check exited 1 naming no failure; see the log"),
    ({"refused": "the check hidden_states.py was changed after launch (sha256 ab12 at launch, "
                 "cd34 now); not run"},
     "failed verification: the check hidden_states.py was changed after launch (sha256 ab12 "
     "at launch, cd34 now); not run"),
    ({"exit_code": 0, "report": REPORT}, "verified 48/48 (max relative error 0.0087)"),
]  # fmt: skip


@pytest.mark.parametrize(("raw", "words"), WORDS)
def test_the_verdict_says_what_each_check_compared(raw, words) -> None:  # type: ignore[no-untyped-def]
    v = Verification.from_facts(raw)
    assert v is not None
    label = describe(v)
    assert (label.startswith(words) if words.startswith(("verified", "failed")) else
            words in label), label  # fmt: skip
    assert "256/256 samples" not in label  # never one count over checks of different reach
    again = Verification.from_dict(json.loads(json.dumps(v.to_dict(), sort_keys=True)))
    assert describe(again) == label and again.outcome == v.outcome


def test_a_check_that_did_not_pass_never_exits_0() -> None:
    for raw, _ in WORDS:
        v = Verification.from_facts(raw)
        assert v is not None
        assert v.passed == describe(v).startswith("verified")
        if not v.passed:
            assert exit_code(v) != 0
