"""Drift rules on a handwritten callee in two versions (``tests/fixtures/drift/v1``, ``v2``).

The caller ``drifter/uses.py`` was written for driftee 1.0 and runs against 2.0; every line
that must be reported ends with ``# E:`` (error) or ``# W:`` (warning) and its category, and
the negatives say why nothing is expected. Both versions are read by the real probe.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.analysis.checker import Checker
from harness.analysis.findings import Finding
from harness.analysis.scan import Scan, fits_from, lookups_from
from harness.reading.baseline import baseline_args
from probes.callsites import callsites
from tests.support.markers import expected

DRIFT = Path(__file__).resolve().parents[1] / "fixtures" / "drift"
USES = DRIFT / "caller" / "drifter" / "uses.py"


def check(new: str = "v2", old: str = "v1") -> list[Finding]:
    scan: dict[str, Any] = callsites.run(
        {"caller": "drifter", "callees": None, "paths": [str(DRIFT / "caller"), str(DRIFT / new)]},
        lambda m: None,
    )
    parsed = Scan.from_dict(scan)
    base = callsites.run({**baseline_args(parsed), "paths": [str(DRIFT / old)]}, lambda m: None)
    return Checker(
        parsed, {"driftee": "2.0"}, lookups_from(base["symbols"]), fits_from(base.get("fits"))
    ).run()


@pytest.fixture(scope="module")
def findings() -> list[Finding]:
    return check()


def test_every_marked_finding_and_nothing_else(findings: list[Finding]) -> None:
    got = {(f.file, f.line, f.severity, f.category) for f in findings}
    assert got == expected(USES, "drifter/uses.py")


def test_same_version_reports_no_drift() -> None:
    assert [f for f in check("v1", "v1") if f.severity == "warning"] == []


def test_return_drift_names_both_returns_and_the_use(findings: list[Finding]) -> None:
    (f,) = [f for f in findings if f.line == 12]
    assert "unique_reply_rank=0" in f.message
    assert "`responses[0]`" in f.message and "via get_response" in f.message
    assert "returned `responses`" in f.message and "got[0] (line 13)" in f.message
    assert f.changes[0]["kind"] == "returns-behaviour-changed"


def test_default_drift_says_old_new_and_who_resolves_it(findings: list[Finding]) -> None:
    by_line = {f.line: f for f in findings}
    assert "prefix_caching: None -> True" in by_line[24].message
    sched = by_line[27].message
    assert "async_sched: False -> None" in sched
    assert "Whole.__post_init__ then sets to True (driftee/config.py:23)" in sched
    assert [c["name"] for c in by_line[27].changes] == ["async_sched"]


def test_installed_method_names_classes_and_rename(findings: list[Finding]) -> None:
    (f,) = [f for f in findings if f.line == 45]
    assert "reads self.get_input_embeddings (line 32)" in f.message
    assert "2 classes" in f.message and "AlphaModel, BetaModel" in f.message
    assert "likely renamed to embed_input_ids" in f.message
    (exact,) = {x.symbol for x in findings if x.line == 51 and "get_input" in x.symbol}
    assert exact == "driftee.models:AlphaModel.get_input_embeddings"
