"""``check --step serve`` reads the vLLM the serve step's interpreter imports -- also when that
interpreter is a wrapper script (``PYTHONPATH=... exec python``), not a venv: the folder it
names has no site-packages, and reading the checker's own environment instead checked against
another vLLM (or none). The H200 bench's vLLM 0.24.0 environment is such a wrapper."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.support.cli import run_cli

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "serve"  # a vLLM-shaped 0.99.0

PIPELINE = """\
[params]
vllm_python = "{wrapper}"

[steps.serve]
python = "{{vllm_python}}"
command = ["{{python}}", "-m", "vllm.entrypoints.cli.main", "serve", "m", "--port", "8000",
           "--gpu-memory-utilisation", "0.5"]
checks = []
"""


def _wrapper(tmp_path: Path, front: Path) -> Path:
    py = tmp_path / "vllm-env" / "bin" / "python"
    py.parent.mkdir(parents=True)
    py.write_text(f'#!/bin/sh\nPYTHONPATH={front} exec {sys.executable} "$@"\n')
    py.chmod(0o755)
    return py


def test_a_wrapper_interpreters_vllm_is_the_one_checked(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    wrapper = _wrapper(tmp_path, FIXTURE)
    path = tmp_path / "pipeline.toml"
    path.write_text(PIPELINE.format(wrapper=wrapper))
    r = run_cli("check", "--step", "serve", "--pipeline", str(path), "-t", "local", "--json",
                env=cli_env, timeout=120)  # fmt: skip
    assert "Traceback" not in r.err, r.err
    report = json.loads(r.out)
    assert report["callees"] == {"vllm": "0.99.0"}, r.err
    assert [f["keywords"] for f in report["findings"]] == [["--gpu-memory-utilisation"]]
    assert r.code == 1


def test_a_wrapper_without_vllm_says_so(cli_env: dict[str, str], tmp_path: Path) -> None:
    wrapper = _wrapper(tmp_path, tmp_path)  # nothing vLLM-shaped in front
    path = tmp_path / "pipeline.toml"
    path.write_text(PIPELINE.format(wrapper=wrapper))
    r = run_cli("check", "--step", "serve", "--pipeline", str(path), "-t", "local",
                env=cli_env, timeout=120)  # fmt: skip
    assert r.code != 0 and "Traceback" not in r.err
    assert "vllm is not installed there" in r.err
