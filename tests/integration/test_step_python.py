"""A step in its own environment (``python = "{vllm_python}"``): ``{python}`` in its command is
that interpreter, the review reads that interpreter's packages, and ``-t HOST@PYTHON`` points
any command (probe, check, patches) at it over the host's own target."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.test_runs_ssh import Harness, local_harness


@pytest.fixture
def two_envs(tmp_path: Path) -> tuple[Harness, Path]:
    venv = tmp_path / "other-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (venv / "marker_pkg").mkdir()  # a package only this environment has, on its path
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "only_here.py").write_text("def f(a, b=1):\n    return a\n")
    other = venv / "bin" / "python"
    h = local_harness(tmp_path, f"""
[params]
other_python = "{other}"

[steps.client]
command = ["{{python}}", "-c", "import sys; print('ran by', sys.executable)"]

[steps.serve]
python = "{{other_python}}"
command = ["{{python}}", "-c", "import sys, only_here; print('ran by', sys.executable)"]
""")  # fmt: skip
    return h, other


def test_python_is_the_step_interpreter_and_the_review_reads_its_packages(
    two_envs: tuple[Harness, Path],
) -> None:
    h, other = two_envs
    r = h("run", "serve", "-t", "local")
    assert r.code == 0, r.out + r.err
    assert f"ran by {other}" in r.out
    mine = h("run", "client", "-t", "local")
    assert mine.code == 0 and f"ran by {sys.executable}" in mine.out, mine.err

    review = json.loads(h("report", "serve", "-t", "local", "--format", "json").out)
    assert review["facts"]["python"]["executable"] == str(other)
    assert review["step"]["python"] == str(other)
    assert review["target"].endswith(f"@{other}")
    plain = json.loads(h("report", "client", "-t", "local", "--format", "json").out)
    assert plain["facts"]["python"]["executable"] == sys.executable


def test_t_host_at_python_probes_that_interpreter(two_envs: tuple[Harness, Path]) -> None:
    h, other = two_envs
    got = h("probe", "only_here:f", "-t", f"local@{other}", "--json")
    assert got.code == 0, got.err
    (sym,) = json.loads(got.out)["symbols"]
    assert [p["name"] for p in sym["parameters"]] == ["a", "b"]
    missing = h("probe", "only_here:f", "-t", "local")
    assert missing.code != 0 and "Traceback" not in missing.err
