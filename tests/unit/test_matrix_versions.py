"""``harness matrix``'s pure parts: --versions, the versions chosen, a row, the patch ids."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.analysis.findings import Category, Severity
from harness.errors import ConfigError, UsageError
from harness.patching.series import load_series
from harness.patching.states import Status
from harness.reading.matrix import Row, VersionSpec, parse_versions, row_from, select
from harness.views.matrix import compact_ids, gpu_cell

ON_INDEX = ["0.10.2", "0.11.0", "0.11.1rc1", "0.15.0", "0.15.1", "0.16.0", "0.26.0", "0.26.1",
            "0.27.0", "0.30.0.dev1"]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "chosen"),
    [
        ("0.16.0,0.11.0", ["0.11.0", "0.16.0"]),  # a list: as given, oldest first
        ("0.11..0.26", ["0.11.0", "0.15.0", "0.15.1", "0.16.0", "0.26.0", "0.26.1"]),
        ("0.15.1..0.16", ["0.15.1", "0.16.0"]),
        ("0.26..", ["0.26.0", "0.26.1", "0.27.0"]),
        ("..0.10", ["0.10.2"]),
        ("all", ["0.10.2", "0.11.0", "0.15.0", "0.15.1", "0.16.0", "0.26.0", "0.26.1", "0.27.0"]),
    ],
)
def test_versions_chosen(text: str, chosen: list[str]) -> None:
    assert select(parse_versions(text), ON_INDEX) == chosen


def test_a_list_needs_no_index() -> None:
    assert parse_versions("1.0, 2.0") == VersionSpec(listed=("1.0", "2.0"))
    assert not parse_versions("1.0").needs_index and parse_versions("all").needs_index


@pytest.mark.parametrize("text", ["", "..", "x..1.0", "1.0,banana", ","])
def test_bad_versions_are_one_usage_error(text: str) -> None:
    with pytest.raises(UsageError, match="--versions"):
        parse_versions(text)


def test_patch_ids_are_compacted_to_number_ranges() -> None:
    ids = ["0003-c", "0001-a", "0002-b", "0007-g", "0009-i", "0010-j", "custom"]
    assert compact_ids(ids) == "0001-0003, 0007, 0009-0010, custom"
    assert compact_ids([]) == ""


def _finding(severity: Severity, category: Category) -> SimpleNamespace:
    return SimpleNamespace(severity=severity, category=category)


def test_a_row_counts_errors_drift_and_patch_states() -> None:
    findings = [
        _finding(Severity.ERROR, Category("unexpected-kwarg")),
        _finding(Severity.WARNING, Category.DRIFT),
        _finding(Severity.WARNING, Category.DRIFT),
    ]
    report = SimpleNamespace(findings=findings, errors=findings[:1], notes=("a note",))
    plan = SimpleNamespace(
        patches=[
            SimpleNamespace(id="0001-a", state=Status.APPLIES),
            SimpleNamespace(id="0002-b", state=Status.APPLIED),
            SimpleNamespace(id="0003-c", state=Status.SKIPPED),
            SimpleNamespace(id="0004-d", state=Status.CONFLICTS),
        ]
    )
    row = row_from("0.16.0", report, [SimpleNamespace(plan=plan), SimpleNamespace(plan=None)])
    assert (row.errors, row.drift, row.warnings) == (1, 2, 2)
    assert row.patches == {"apply": ["0001-a", "0002-b"], "skip": ["0003-c"],
                           "conflict": ["0004-d"]}  # fmt: skip
    assert row.to_dict()["notes"] == ["a note"]


def _series_toml(tmp_path: Path, verified: str) -> Path:
    d = tmp_path / "caller" / "1.0"
    d.mkdir(parents=True)
    (d / "series.toml").write_text(f"# a comment\n\n{verified}\n")
    return d / "series.toml"


def test_a_series_records_the_versions_a_gpu_run_verified(tmp_path: Path) -> None:
    _series_toml(tmp_path, '[verified]\nVLLM = ["0.20.2", "0.21"]')
    s = load_series(tmp_path, "caller", "1.0")
    assert s is not None and s.verified == (("vllm", ("0.20.2", "0.21")),)
    assert s.verified_on("vllm", "0.20.2") and s.verified_on("vLLM", "0.21.0")
    assert not s.verified_on("vllm", "0.16.0") and not s.verified_on("torch", "0.20.2")
    assert gpu_cell(Row("0.20.2", gpu_verified=True)) == "verified"
    assert gpu_cell(Row("0.16.0", gpu_verified=False)) == gpu_cell(Row("0.16.0")) == "-"


@pytest.mark.parametrize(
    ("verified", "message"),
    [
        ('[verified]\nvllm = "0.20.2"', ":4: verified.vllm: expected a list of versions"),
        ('[verified]\nvllm = ["0.20.2", "latest"]', ":4: verified.vllm: 'latest' is not a"),
        ("[verified]\nvllm = [0.2]", ":4: verified.vllm: 0.2 is not a version"),
        ("[verified]\nvllm = []", ":4: verified.vllm: expected a list of versions, got []"),
        ('verified = "0.20.2"', ":3: verified: expected a table"),
        ('[verifed]\nvllm = ["0.20.2"]', ":3: verifed: unknown key"),
    ],
)
def test_a_malformed_verified_record_names_the_line(
    tmp_path: Path, verified: str, message: str
) -> None:
    toml = _series_toml(tmp_path, verified)
    with pytest.raises(ConfigError) as got:
        load_series(tmp_path, "caller", "1.0")
    assert got.value.message.startswith(f"{toml}{message}"), got.value.message
