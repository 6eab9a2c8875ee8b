"""Issue 21 item 14: where a smoke run's outputs go, said the same by the code, ``run --help``
and the README."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from harness.cli import app
from harness.runs.pipeline.smoke import smoke_dir
from harness.runs.target.remote import runs_root

ROOT = Path(__file__).resolve().parents[2]


def test_smoke_outputs_go_where_help_and_readme_say() -> None:
    assert smoke_dir(f"{runs_root('/w')}/RUN_ID") == "/w/.harness/runs/RUN_ID/smoke"
    out = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "300"}).output
    help_text = " ".join(re.sub(r"[│\s]+", " ", out).split())
    assert "outputs under WORKDIR/.harness/runs/RUN_ID/smoke" in help_text
    assert ".harness/smoke" not in help_text
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "`<run_dir>/smoke`: `<workdir>/.harness/runs/<run id>/smoke`" in readme
