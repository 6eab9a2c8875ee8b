"""The typed patch manifest: what targets hold today reads and writes back byte for byte. Pure."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.patching.manifest import NONE, AppliedPatch, Backup, FileRecord, Manifest, Origin

SHA_A, SHA_B, SHA_C = "a" * 64, "b" * 64, "c" * 64

#: Manifests as every harness so far wrote them (patchops stores one per dist).
OLD_MANIFESTS: dict[str, dict[str, Any]] = {
    # the first harness: applied patches by id and whole-text sha256 only
    "first": {
        "dist": "speculators",
        "version": "0.3.0",
        "series": "speculators/0.3.0",
        "applied": [{"id": "0001-x", "sha256": SHA_A}],
        "files": {"speculators/a.py": {"pristine_sha256": SHA_B, "after_sha256": SHA_C,
                                       "mode": 420}},
    },
    # content digest and text recorded; a created file, a deleted one, an --force one
    "now": {
        "dist": "pkg",
        "version": None,
        "series": "pkg/1.0",
        "applied": [
            {"id": "0001-a", "sha256": SHA_A, "content_sha256": SHA_B, "text": "--- a\n"},
            {"id": "0002-b", "sha256": SHA_C},
        ],
        "files": {
            "pkg/new.py": {"pristine_sha256": None, "after_sha256": SHA_A, "mode": None},
            "pkg/gone.py": {"pristine_sha256": SHA_B, "after_sha256": None, "mode": 420},
            "pkg/forced.py": {"pristine_sha256": SHA_A, "record_sha256": SHA_C,
                              "after_sha256": SHA_B, "mode": 493},
        },
    },
    "none": {},
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(OLD_MANIFESTS))
def test_old_json_reads_and_writes_back_the_same(name: str) -> None:
    old = OLD_MANIFESTS[name]
    again = Manifest.from_json(old).to_json()
    assert again == old
    # patchops stores it with sort_keys: the very bytes on the target
    assert json.dumps(again, indent=1, sort_keys=True) == json.dumps(old, indent=1, sort_keys=True)


def test_null_and_missing_manifest_are_none() -> None:
    assert Manifest.from_json(None) == NONE == Manifest.from_json({})
    assert NONE.to_json() == {}


@pytest.mark.parametrize(
    ("entry", "origin", "deleted", "forced"),
    [
        ({"pristine_sha256": SHA_A, "after_sha256": SHA_B, "mode": 420},
         Origin.INSTALLED, False, None),
        ({"pristine_sha256": None, "after_sha256": SHA_B, "mode": 420},
         Origin.CREATED, False, None),
        ({"pristine_sha256": SHA_A, "after_sha256": None, "mode": 420},
         Origin.INSTALLED, True, None),
        ({"pristine_sha256": SHA_A, "record_sha256": SHA_C, "after_sha256": SHA_B, "mode": 1},
         Origin.INSTALLED, False, SHA_C),
    ],
)  # fmt: skip
def test_sentinels_become_fields(
    entry: dict[str, object], origin: Origin, deleted: bool, forced: str | None
) -> None:
    got = FileRecord.from_json(entry)
    assert (got.origin, got.deleted, got.forced_record_sha256) == (origin, deleted, forced)
    assert got.to_json() == entry


def test_accessors() -> None:
    m = Manifest.from_json(OLD_MANIFESTS["now"])
    assert m.created() == {"pkg/new.py"}
    assert m.applied_ids == {"0001-a", "0002-b"}
    assert m.after_sha256("pkg/new.py") == SHA_A and m.after_sha256("pkg/other.py") is None
    record = m.record_of("0002-b")
    assert record == AppliedPatch("0002-b", SHA_C) and m.record_of("0009-x") is None
    assert m.files["pkg/forced.py"].forced_record_sha256 == SHA_C
    with pytest.raises(TypeError):
        m.files["pkg/x.py"] = m.files["pkg/new.py"]  # type: ignore[index]


def test_with_files_replaces_an_earlier_record_of_the_same_patch() -> None:
    m = Manifest.from_json(OLD_MANIFESTS["now"])
    now = [AppliedPatch("0001-a", SHA_C, SHA_C, "new")]
    again = m.with_files({}, now, dist="pkg", version="1.0", series="pkg/1.0")
    assert [a.id for a in again.applied] == ["0002-b", "0001-a"]
    assert again.record_of("0001-a") == AppliedPatch("0001-a", SHA_C, SHA_C, "new")
    assert again.files == {} and again.version == "1.0" and again.dist == "pkg"
    assert len(m.applied) == 2 and m.record_of("0001-a").text == "--- a\n"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("wire", "want"),
    [(None, None), ({}, None), ({"sha256": SHA_A, "text": "x"}, Backup(SHA_A, "x"))],
)
def test_backup_from_json(wire: dict[str, str] | None, want: Backup | None) -> None:
    assert Backup.from_json(wire) == want
