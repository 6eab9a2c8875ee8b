"""Planning a series against live files: states, all-or-nothing, manifests, revert. Pure."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from harness.patching.diffs import parse, unified
from harness.patching.manifest import NONE, AppliedPatch, Backup, Manifest
from harness.patching.plan import (
    APPLIED,
    APPLIES,
    BY_HAND,
    CONFLICTS,
    SKIPPED,
    STALE,
    LiveFile,
    new_manifest,
    plan_apply,
    plan_revert,
    sha,
)
from harness.patching.series import PatchSpec, Series

A0 = "".join(f"a{i}\n" for i in range(10))
B0 = "".join(f"b{i}\n" for i in range(10))
A1 = A0.replace("a3\n", "A3\n")
B1 = B0.replace("b5\n", "B5\n")


def spec(pid: str, text: str, requires: tuple[tuple[str, str], ...] = ()) -> PatchSpec:
    return PatchSpec(
        pid, Path(f"{pid}.patch"), f"why {pid}", requires, text, tuple(parse(text, pid))
    )


SERIES = Series(
    "pkg",
    "1.0",
    Path("."),
    (
        spec("0001-a", unified("pkg/a.py", A0, A1)),
        spec("0002-b", unified("pkg/b.py", B0, B1), (("dep", ">=2"),)),
    ),
)


def live(a: str, b: str, record: bool = True) -> dict[str, LiveFile]:
    return {
        "pkg/a.py": LiveFile("pkg/a.py", a, sha(a), 0o644, sha(A0) if record else None),
        "pkg/b.py": LiveFile("pkg/b.py", b, sha(b), 0o644, sha(B0) if record else None),
    }


def states(plan) -> list[str]:  # type: ignore[no-untyped-def]
    return [p.state for p in plan.patches]


def test_clean_plan_applies_both_files() -> None:
    plan = plan_apply(SERIES, live(A0, B0), {"pkg": "1.0", "dep": "2.1"}, NONE)
    assert states(plan) == [APPLIES, APPLIES] and plan.ok
    assert {c.path: c.after for c in plan.changes} == {"pkg/a.py": A1, "pkg/b.py": B1}


def test_requires_not_met_skips_with_reason() -> None:
    plan = plan_apply(SERIES, live(A0, B0), {"pkg": "1.0", "dep": "1.9"}, NONE)
    assert states(plan) == [APPLIES, SKIPPED]
    assert plan.patches[1].detail == "dep 1.9 is not >=2"
    assert [c.path for c in plan.changes] == ["pkg/a.py"]


def test_conflict_anywhere_means_not_ok() -> None:
    plan = plan_apply(
        SERIES,
        live(A0, B0.replace("b4\n", "changed\n")),
        {"pkg": "1.0", "dep": "2"},
        NONE,
        force=True,
    )
    assert states(plan) == [APPLIES, CONFLICTS] and not plan.ok
    assert plan.patches[1].conflicts[0].file == "pkg/b.py"


def test_applied_by_manifest_then_idempotent() -> None:
    first = plan_apply(SERIES, live(A0, B0), {"pkg": "1.0", "dep": "2"}, NONE)
    manifest = new_manifest(first, SERIES, NONE)
    again = plan_apply(SERIES, live(A1, B1), {"pkg": "1.0", "dep": "2"}, manifest)
    assert states(again) == [APPLIED, APPLIED] and again.changes == ()
    assert manifest.to_json()["files"]["pkg/a.py"] == {
        "pristine_sha256": sha(A0),
        "after_sha256": sha(A1),
        "mode": 0o644,
    }


def test_applied_by_hand_is_recognised() -> None:
    plan = plan_apply(SERIES, live(A1, B0, record=False), {"pkg": "1.0", "dep": "2"}, NONE)
    assert states(plan) == [BY_HAND, APPLIES]


def test_hand_edited_target_file_is_refused_without_force() -> None:
    edited = A0.replace("a8\n", "mine\n")
    plan = plan_apply(SERIES, live(edited, B0), {"pkg": "1.0", "dep": "2"}, NONE)
    assert not plan.ok and "edited by hand" in plan.problems[0]
    assert plan_apply(SERIES, live(edited, B0), {"pkg": "1.0", "dep": "2"}, NONE, force=True).ok


def test_revert_restores_backups_and_refuses_changed_files() -> None:
    first = plan_apply(SERIES, live(A0, B0), {"pkg": "1.0", "dep": "2"}, NONE)
    manifest = new_manifest(first, SERIES, NONE)
    backups = {
        "pkg/a.py": Backup(sha(A0), A0),
        "pkg/b.py": Backup(sha(B0), B0),
    }
    changes, problems = plan_revert(manifest, live(A1, B1), backups)
    assert problems == [] and {c.path: c.after for c in changes} == {"pkg/a.py": A0, "pkg/b.py": B0}
    changes, problems = plan_revert(manifest, live(A1, B1 + "x\n"), backups)
    assert len(problems) == 1 and "changed since harness patched it" in problems[0]


# -- item 2 of issue 10: an applied patch whose text changed -------------------------------

A2 = A0.replace("a3\n", "A3!\n")
EDITED = Series("pkg", "1.0", Path("."), (spec("0001-a", unified("pkg/a.py", A0, A2)),))
REWORDED = Series(
    "pkg", "1.0", Path("."), (spec("0001-a", "Reworded why.\n" + unified("pkg/a.py", A0, A1)),)
)
ONLY_A = Series("pkg", "1.0", Path("."), SERIES.patches[:1])


def _applied_manifest(record: dict[str, str] | None = None) -> Manifest:
    manifest = new_manifest(plan_apply(ONLY_A, live(A0, B0), {"pkg": "1.0"}, NONE), ONLY_A, NONE)
    if record is not None:
        manifest = replace(manifest, applied=(AppliedPatch.from_json(record),))
    return manifest


@pytest.mark.parametrize(
    ("series", "record", "want", "diff_has"),
    [
        (ONLY_A, None, APPLIED, None),  # the text that was applied
        (REWORDED, None, APPLIED, None),  # commentary only: the same change
        (EDITED, None, STALE, "-+A3\n"),  # a changed hunk: the files hold the old change
        # an older harness recorded the text's sha256 only: compared by text, no diff
        (EDITED, {"id": "0001-a", "sha256": "0" * 64}, STALE, ""),
        (ONLY_A, {"id": "0001-a", "sha256": ONLY_A.patches[0].sha256}, APPLIED, None),
    ],
)
def test_applied_patch_is_compared_with_the_text_that_was_applied(
    series: Series, record: dict[str, str] | None, want: str, diff_has: str | None
) -> None:
    plan = plan_apply(series, live(A1, B0), {"pkg": "1.0"}, _applied_manifest(record))
    (state,) = plan.patches
    assert state.state == want
    assert plan.ok is (want == APPLIED) and plan.changes == ()
    if want == STALE:
        assert "revert-patches, then apply-patches" in plan.problems[0]
        assert diff_has is not None and diff_has in state.text_diff
        if not diff_has:
            assert state.text_diff == "" and "was not recorded" in state.detail


def test_reapplied_patch_records_its_new_text() -> None:
    """Reinstalled (pristine again) with an edited series: the manifest must not keep v1."""
    manifest = _applied_manifest()
    plan = plan_apply(EDITED, live(A0, B0), {"pkg": "1.0"}, manifest)
    assert states(plan) == [APPLIES]
    again = new_manifest(plan, EDITED, manifest)
    (record,) = again.applied
    assert record.text == EDITED.patches[0].text
    assert states(plan_apply(EDITED, live(A2, B0), {"pkg": "1.0"}, again)) == [APPLIED]


# -- item 5 of issue 10: the one line an interrupted apply prints -------------------------

from harness.patching.states import Outcome, interrupted_line  # noqa: E402


@pytest.mark.parametrize(
    ("outcomes", "line"),
    [
        ([Outcome("a", True, False, False)], "the series is fully applied"),
        ([Outcome("a", True, False, False), Outcome("b", True, False, True)],
         "the series is fully applied"),
        ([Outcome("a", False, True, False)], "nothing written"),
        ([Outcome("a", False, True, True)], "rolled back: the files are as they were before"),
        ([Outcome("a", True, False, False), Outcome("b", False, True, True)],
         "left a fully applied, b as before"),
        ([Outcome("a", False, False, False)], "left a half-written"),
    ],
)  # fmt: skip
def test_interrupted_apply_names_the_state_it_left(outcomes: list[Outcome], line: str) -> None:
    assert interrupted_line(outcomes) == line


# -- make-patch adopting hand edits ------------------------------------------------------------

A_HAND = A1.replace("a7\n", "A7\n")


@pytest.mark.parametrize(
    ("old_files", "path", "base", "live", "pristine"),
    [
        # a.py patched by 0001, then edited by hand: its pristine sha (and backup) stays
        ({"pkg/a.py": {"pristine_sha256": sha(A0), "after_sha256": sha(A1), "mode": 420}},
         "pkg/a.py", A1, A_HAND, sha(A0)),
        # b.py no patch had touched: the base (the wheel's file) is its pristine
        ({}, "pkg/b.py", B0, B1, sha(B0)),
    ],
)  # fmt: skip
def test_adopted_manifest(old_files: dict, path: str, base: str, live: str, pristine: str) -> None:
    from harness.patching.plan import LiveFile, adopted_manifest

    old = Manifest.from_json(
        {"applied": [{"id": "0001-a"}, {"id": "0003-mine"}], "files": old_files}
    )
    new_spec = spec("0003-mine", unified(path, base, live))
    got = adopted_manifest(
        old, {path: LiveFile(path, live, sha(live), 0o600)}, {path: base}, new_spec, "pkg", "1.0"
    ).to_json()
    assert got["files"][path] == {
        "pristine_sha256": pristine,
        "after_sha256": sha(live),
        "mode": 0o600,
    }
    assert [a["id"] for a in got["applied"]] == ["0001-a", "0003-mine"]  # once, with its text
    assert got["applied"][-1]["text"] == new_spec.text
    assert old.to_json()["files"] == old_files  # not mutated
