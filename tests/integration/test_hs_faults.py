"""Planted faults nobody wrote the rule from (issue 41), on the CPU: the extraction check at the
pipeline's defaults (every sample at the lowest layer, every layer on 16 spread samples, the
population rule) against copies of a clean output of a tiny Llama shaped like the H100's run
(``tests/support/faultdata.py``: hs_{i}.safetensors, ids [2, 4, 5, 8] of 8 layers, vLLM's
meaning), one fault kind per copy (``bench/hs_faults.py``; its ``HALF`` split the kinds before
the rule was tuned).

* the five controls -- untouched, 2 % and 1 % noise on every row, the same values stored as
  float32, through float16 and back -- pass;
* every kind of the tuning half fails, naming the planted samples and no other;
* the held-out half, run once after the rule was done: every kind but ``scale-layer`` (one
  sample's highest layer alone x0.85, in a sample the spread does not compare at every layer:
  within this tiny model's spread of norm profiles) fails the same way -- pinned as measured, so
  a change of the rule shows here;
* round 2 (eight kinds written after the rule was done, run once): every kind but
  ``fp8-unscaled`` fails (at this model's magnitudes an unscaled fp8 cast is the precision the
  FP8 connector stores; its floor is said in the words), pinned as measured;
* a tiny DeepSeek-V3 (8 routed experts): bf16 against float32 flips experts for 1-4 % of its
  rows at layers 2 and 4 (20 of 513 at layer 4), lone rows up to 0.37 -- more and larger than
  the DeepSeek-V3 shape on the GPU (~1 % at layer 2, up to 0.237), so the defaults fail it, and
  the flip size and rate are parameters given here (``--flip-max 0.4 --flip-rate 0.05``),
  measured on this model.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.pipvenvs import verify_cpu_venv

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "0"}
FAULTS = str(REPO / "bench" / "hs_faults.py")
LLAMA = ["--layer-ids", "2,4,5,8", "--capture", "input", "--device", "cpu"]
#: measured once the rule was done (bench/results/verifier-faults-cpu.txt)
HELD_OUT_MISSED = {"scale-layer"}


def _run(python: Path, *argv: str) -> str:
    r = subprocess.run([str(python), *argv], capture_output=True, text=True, timeout=1800, env=ENV)
    assert r.returncode == 0, r.stderr[-4000:]
    return r.stdout


@pytest.fixture(scope="module")
def results(faultdata_out: Path) -> dict[str, dict[str, Any]]:
    venv = verify_cpu_venv()
    out = faultdata_out
    _run(venv.python, FAULTS, "plant", str(out / "clean"), str(out / "planted"), "--model",
         str(out / "model"), "--other", str(out / "other"), "--layer-ids", "2,4,5,8")  # fmt: skip
    got = _run(venv.python, FAULTS, "run", str(out / "planted"), "--", "--model",
               str(out / "model"), "--prepared", str(out / "prepared"), *LLAMA)  # fmt: skip
    rows = [json.loads(x) for x in got.splitlines() if x.startswith("{")]
    moe = out / "moe"
    _run(venv.python, FAULTS, "plant", str(moe / "clean"), str(moe / "planted"), "--model",
         str(moe / "model"), "--half", "tuning")  # fmt: skip
    argv = ["--model", str(moe / "model"), "--prepared", str(moe / "prepared"), "--layer-ids",
            "1,2,4", "--capture", "input", "--device", "cpu"]  # fmt: skip
    default = _run(venv.python, FAULTS, "run", str(moe / "planted"), "untouched", "--", *argv)
    tuned = _run(venv.python, FAULTS, "run", str(moe / "planted"), "--", *argv,
                 "--flip-max", "0.4", "--flip-rate", "0.05")  # fmt: skip
    by = {r["kind"]: r for r in rows}
    by.update({f"moe-default/{r['kind']}": r for r in map(json.loads, default.splitlines())})
    by.update({f"moe/{r['kind']}": r for r in map(json.loads, tuned.splitlines())})
    return by


@pytest.mark.parametrize(
    "kind", ["untouched", "noise-2pct", "float32", "noise-1pct", "fp16-roundtrip"]
)
def test_the_controls_pass_with_the_rule_in_their_words(results: dict, kind: str) -> None:
    r = results[kind]
    assert r["ok"] and r["exit"] == 0, r
    assert r["rule"].startswith("each row within 10x its layer's noise floor (the median row ")
    for layer in (2, 4, 5, 8):
        assert f"layer {layer}: floor 0.0" in r["rule"], r["rule"]
    assert "over 1,618 rows of 48 samples" in r["rule"]  # the lowest layer: every sample
    assert r["rule"].count("rows of 16 samples") == 3  # the others: 16 spread samples


TUNING = ["scale", "neighbour-row", "run-elsewhere", "layers-swapped", "post-norm-final",
          "mixed-samples", "truncated"]  # fmt: skip
HELD_OUT = ["offset", "elsewhere-row", "neighbour-run", "layer-replaced", "missing-last",
            "other-model", "scale-layer"]  # fmt: skip


#: round 2 (stop 48): written after the rule was done, run once, untuned (verifier-faults-cpu.txt)
ROUND2 = ["rows-reversed", "zero-tail", "layer-off-by-one", "whole-shift", "fp8-unscaled",
          "noise-10pct-one", "halves-swapped", "scale-1.05"]  # fmt: skip
#: at this model's magnitudes an unscaled fp8 cast is the FP8 connector's own precision: passed
ROUND2_MISSED = {"fp8-unscaled"}


@pytest.mark.parametrize("kind", TUNING + HELD_OUT + ROUND2)
def test_each_planted_kind_is_named_or_the_miss_is_the_measured_one(
    results: dict, kind: str
) -> None:
    r = results[kind]
    assert r["half"] == ("tuning" if kind in TUNING else "round2" if kind in ROUND2 else "held-out")
    if kind in HELD_OUT_MISSED | ROUND2_MISSED:
        assert not r["ok"] and r["exit"] == 0, r
    else:
        assert r["ok"], r  # failed, naming planted samples only (all of them, when few)
        assert r["first"], r


def test_the_words_say_what_stood_out_of_the_population(results: dict) -> None:
    first = {k: results[k]["first"][0] for k in ("scale", "neighbour-row", "offset")}
    assert ": the sample is off as a whole at layer 2: median row error 0.15" in first["scale"]
    assert "x the samples' 0.00" in first["scale"]
    assert "(sample bound 4x = 0.0" in first["scale"]
    assert "from a neighbour's (it is that row)" in first["neighbour-row"]
    assert "(row bound 10x = 0.0" in first["neighbour-row"]
    assert "the sample is off as a whole at layer 2" in first["offset"]
    assert "profile: layer order: " in results["layers-swapped"]["first"][0]


def test_a_moe_model_admits_its_routing_flips_only_as_measured(results: dict) -> None:
    default = results["moe-default/untouched"]
    assert default["exit"] == 1  # the tiny model flips more, and larger, than the H200's shape
    assert default["first"][0].endswith(
        " values: 17 flip events (17 rows) off at layer 4 (up to 0.298), each like a routing "
        "flip, more than admitted: 0.02 of 513 rows = 10 events (--flip-rate)"
    ), default  # layer 2's 6 are within the rate; 0.374 at layer 4 is not a flip at 0.3
    clean = results["moe/untouched"]
    assert clean["ok"], clean
    assert (
        "8 routed experts: a routing flip event admitted -- a run of at most 2 adjacent rows, "
        "each at most 0.4 from its own row" in clean["rule"]
    )
    assert ", 6 flip events (6 rows) up to 0.275 admitted: 8 routed experts" in clean["rule"]
    for kind in ("scale", "neighbour-row", "run-elsewhere", "mixed-samples", "truncated"):
        assert results[f"moe/{kind}"]["ok"], results[f"moe/{kind}"]
    assert "a neighbour's row" in results["moe/neighbour-row"]["first"][0]
