"""The shipped vLLM 0.24.0 series (pipelines/speculators-0.9.toml): DeepSeek-V2-family models'
final-layer hidden state, read against the real wheels from PyPI.

vLLM PR 46973 made ``DeepseekV2Model.forward`` append the stream after its last layer when
extract_hidden_states asks for layer ``num_hidden_layers``; it shipped in 0.25.0. The series
backports it to 0.24.0: it must apply there, and only there (0.25.0 already has it).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run_cli

REPO = Path(__file__).resolve().parents[2]
APPEND = "if self.end_layer in self.aux_hidden_state_layers:"
FILE = "vllm/model_executor/models/deepseek_v2.py"

pytestmark = pytest.mark.wheels


def _patches(version: str, env: dict[str, str]) -> dict:
    r = run_cli("patches", "--json", "--dist", "vllm", "--patches", str(REPO / "patches"),
                "-t", f"pypi:vllm=={version}", env=env, timeout=600)  # fmt: skip
    assert r.code == 0, r.err
    (report,) = json.loads(r.out)
    return report


def test_the_backport_applies_to_0_24_0_and_adds_the_final_layer(
    cli_env: dict[str, str],
) -> None:
    got = _patches("0.24.0", cli_env)
    (patch,) = got["plan"]["patches"]
    assert patch["id"] == "0001-deepseek-final-layer-hidden-state"
    assert patch["state"] == "applies cleanly"
    (change,) = got["plan"]["changes"]
    assert change["path"] == FILE
    added = [ln[1:].strip() for ln in change["diff"].splitlines() if ln.startswith("+ ")]
    assert APPEND in added  # the append vLLM 0.25.0 made
    assert "aux_hidden_states.append(hidden_states + residual)" in added


def test_0_25_0_has_the_fix_itself_and_no_series(cli_env: dict[str, str]) -> None:
    got = _patches("0.25.0", cli_env)
    assert got["plan"] is None and got["series_versions"] == ["0.24.0"]
    source = run_cli("probe", "vllm.model_executor.models.deepseek_v2:DeepseekV2Model.forward",
                     "--source", "-t", "pypi:vllm==0.25.0", env=cli_env, timeout=600)  # fmt: skip
    assert source.code == 0, source.err
    assert APPEND in source.out
