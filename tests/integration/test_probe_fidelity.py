"""Static signatures agree with ``inspect.signature`` on vLLM 0.16.0's 20 most-used modules.

The runtime side was recorded once from a real install (vllm==0.16.0 with its dependencies,
Python 3.11) by ``bench/probe_fidelity.py record`` into ``bench/fidelity/``; this reads the
same modules from the wheel with the signatures probe and compares parameter names, kinds and
which have defaults.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "probe_fidelity.py"


def test_at_least_99_5_percent_equal(
    harness_cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HARNESS_CACHE", str(harness_cache))
    spec = importlib.util.spec_from_file_location("probe_fidelity", BENCH)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    ref = json.loads(mod.REFERENCE.read_text())
    assert len(ref["order"]) == 20 and not any("error" in m for m in ref["modules"].values())
    pct = mod.compare(show=10)
    assert pct >= 99.5, capsys.readouterr().out


def test_second_set_at_least_99_5_percent_equal(
    harness_cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 24 item 5: 47 other modules of vLLM 0.20.2 (models, workers, distributed,
    fused MoE) and transformers 5.17, recorded in the vLLM CPU venv, second names counted."""
    monkeypatch.setenv("HARNESS_CACHE", str(harness_cache))
    spec = importlib.util.spec_from_file_location("probe_fidelity", BENCH)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    ref = json.loads(mod.SECOND["reference"].read_text())
    assert len(ref["order"]) == len(mod.SECOND["modules"]) >= 40
    assert not any("error" in m for m in ref["modules"].values())
    pct = mod.compare(show=10, which="second")
    assert pct >= 99.5, capsys.readouterr().out


@pytest.mark.parametrize("which", ["third", "py312"])
def test_held_out_sets_at_least_99_5_percent_equal(
    which: str,
    harness_cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 34: a HELD-OUT set of 76 modules (enums, config classes under huggingface_hub's
    ``@strict`` and ``__init_subclass__``, ``functools.wraps`` methods, classes made by
    factories: transformers' auto classes, vLLM's adapters), recorded in the vLLM CPU venv under
    Python 3.11; and transformers' torch-free modules recorded under Python 3.12, where an enum
    signs as ``(*values)``: each read for the Python its key was recorded with."""
    monkeypatch.setenv("HARNESS_CACHE", str(harness_cache))
    spec = importlib.util.spec_from_file_location("probe_fidelity", BENCH)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    chosen = mod.SETS[which]
    ref = json.loads(chosen["reference"].read_text())
    assert ref["order"] == chosen["modules"] and len(ref["order"]) >= 30
    assert not any("error" in m for m in ref["modules"].values())
    assert ref["python"].startswith({"third": "3.11.", "py312": "3.12."}[which])
    pct = mod.compare(show=10, which=which)
    assert pct >= 99.5, capsys.readouterr().out
