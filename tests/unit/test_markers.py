"""The byte markers both sides of a run spell: the supervisor (a copy of which lives in every run
directory, run by the target's Python) and the laptop's reader. A marker changed on one side
only would make `logs` miss the stream's start or end, or a run's check report be ignored."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from harness.runs.follow import stream
from harness.runs.record import verification
from probes.runs import _follow, supervisor

# the checks themselves; ``_*.py`` beside them are modules they import (_hs_report writes for one)
VERIFIERS = sorted((Path(__file__).resolve().parents[2] / "probes" / "verifiers").glob("[!_]*.py"))


def test_the_follow_stream_markers_are_spelled_alike() -> None:
    assert _follow.STREAM_MARK == stream.STREAM_MARK
    assert _follow.END_MARK.encode() == stream.END_MARK


def test_the_supervisor_reads_the_report_line_the_laptop_documents() -> None:
    assert verification.REPORT_MARK.encode() == supervisor.VERIFY_MARK


@pytest.mark.parametrize("path", VERIFIERS, ids=lambda p: p.name)
def test_every_shipped_check_prints_that_report_line(path: Path) -> None:
    marks = [
        node.value.value
        for node in ast.parse(path.read_text()).body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "MARK" for t in node.targets)
        and isinstance(node.value, ast.Constant)
    ]
    assert marks == [verification.REPORT_MARK]
