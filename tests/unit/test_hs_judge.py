"""The extraction check's pure decisions that need no tensor (``probes/verifiers/_hs_judge.py``):
which samples, which batches, a file's layers, rows and ids. The per-layer decisions on tensors
are tabled in tests/integration/test_hs_judge_tensors.py (they run under the check's torch)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parents[2] / "probes" / "verifiers" / "_hs_judge.py"
spec = importlib.util.spec_from_file_location("_hs_judge", PATH)
assert spec is not None and spec.loader is not None
judge = importlib.util.module_from_spec(spec)
sys.modules.setdefault("_hs_judge", judge)  # its dataclasses look their module up
spec.loader.exec_module(judge)


@pytest.mark.parametrize(
    ("total", "want", "picked"),
    [
        (5, 0, [0, 1, 2, 3, 4]),  # 0: every one
        (5, 9, [0, 1, 2, 3, 4]),
        (10, 4, [0, 3, 6, 9]),  # first and last included
        (10, 1, [0]),
        (70, 64, [i for i in range(70) if i not in (6, 17, 29, 40, 52, 63)]),
    ],
)
def test_which_samples_are_compared(total: int, want: int, picked: list[int]) -> None:
    assert judge.spread(total, want) == picked


@pytest.mark.parametrize(
    ("lengths", "budget", "batches"),
    [
        ([10, 40, 12, 38], 100, [[1, 3], [2, 0]]),  # similar lengths together, longest first
        ([10, 40, 12, 38], 0, [[1], [3], [2], [0]]),  # 0: one at a time
        ([500, 3], 100, [[0], [1]]),  # a sample over the budget goes alone
        ([5, 5, 5, 5, 5], 20, [[0, 1, 2, 3], [4]]),
    ],
)
def test_batches_of_similar_lengths_within_a_token_budget(
    lengths: list[int], budget: int, batches: list[list[int]]
) -> None:
    assert judge.plan_batches(lengths, budget) == batches


CONFIGURED = [2, 4, 5, 7]


@pytest.mark.parametrize(
    ("fn", "args", "check", "why"),
    [
        (judge.layers_held, (4, CONFIGURED), None, None),
        (judge.layers_held, (3, CONFIGURED), "layers",
         "holds 3 layers, configured 4 ([2, 4, 5, 7])"),
        (judge.layers_held, (3, [2, 2, 1, 3]), None, None),  # distinct ids: 1, 2, 3
        (judge.duplicated, (None, CONFIGURED), None, None),
        (judge.duplicated, ((1, 2), CONFIGURED), "layers",
         "layer 5's states equal layer 4's (duplicated)"),
        (judge.rows_match, (57, [57, 57, 57]), None, None),
        (judge.rows_match, (57, [40, 40]), "lengths", "40 rows of states for 57 ids"),
        (judge.rows_match, (57, [57, 40]), "lengths", "[40, 57] rows of states for 57 ids"),
        (judge.ids_match, ([1, 2, 3], [1, 2, 3], 5), None, None),
        (judge.ids_match, ([1, 2, 3], [1, 9, 3], 5), "ids",
         "ids differ from prepared sample 5's from position 1 (3 ids here, 3 there)"),
        (judge.ids_match, ([1, 2], [1, 2, 3], 5), "ids",
         "ids differ from prepared sample 5's from position 2 (2 ids here, 3 there)"),
        (judge.ids_match, ([1, 2], None, 5000), "ids", "no prepared sample 5000"),
    ],
)  # fmt: skip
def test_a_files_shape_and_identity(fn, args, check, why) -> None:  # type: ignore[no-untyped-def]
    found = fn(*args)
    assert (found.check, found.why) == (check, why) if check else found is None


def test_every_finding_is_counted_under_one_of_the_four_checks() -> None:
    assert set(judge.COUNTED_UNDER.values()) == set(judge.COUNTS)


def test_an_empty_folder_reads_no_negative_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 44, item 13: the check's '(none)' failure counted against no compared sample read
    ``lengths -1/0``; a negative count from any check is no count in the words."""
    monkeypatch.syspath_prepend(str(PATH.parent))
    from _hs_report import Tally

    from harness.runs.record.verdict import describe
    from harness.runs.record.verification import Verification

    tally = Tally(0)
    tally.fail("(none)", judge.Finding("lengths", "no data_*.pt or hs_*.safetensors in out"))
    report = tally.report([], "all", 0.05, "nothing to check")
    assert report["checks"]["lengths"]["passed"] == 0
    forged = {"checks": {"lengths": {"passed": -1, "compared": 0, "of": 0}}, "checked": -3}
    for r in (report, forged):
        v = Verification.from_facts({"exit_code": 1, "report": r})
        assert v is not None and "-1" not in describe(v) and "-3" not in describe(v), describe(v)
