#!/usr/bin/env python3
"""GPU bench of issue 32: speculators 0.9.0 on vLLM's own hidden-state extraction, through harness.

Run on the GPU machine after ``bash bench/gpu/stage.sh --install`` (the vLLM 0.26.0 payload) and
``verify_all.py llama`` (its model), with ``.spec09`` carried (speculators 0.9.0, hs-connectors
0.9.0 and pydantic-settings wheels):

    python3 bench/gpu/serve09.py llama   # the shipped pipelines/speculators-0.9.toml, two
                                         # environments: prepare (starts serve, kept) ->
                                         # generate (reuses it, stops it) -> vocab -> train,
                                         # each verified; then prefix caching turned on over
                                         # a shared system prompt
    python3 bench/gpu/serve09.py dsv3    # generate on the 24-layer DeepSeek-V3 shape of
                                         # verify_all.py dsv3, final layer included

The two environments: vLLM's is the image's interpreter with the payload (vLLM 0.26.0);
speculators' is a wrapper interpreter (``/root/spec-env/bin/python``) that puts speculators
0.9.0 in front of the same torch/transformers. Every command is harness's (``harness run STEP
--pipeline pipelines/speculators-0.9.toml -t local``); verdicts are read from ``harness runs
--json``. Results: ``$OUT/serve09.txt``.
"""

# ruff: noqa: E501 -- result lines are built in place, as they are printed

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("E2E_WORK", "/root/s09")
os.environ.setdefault("E2E_LOGS", "/root/s09-logs")
os.environ.setdefault("E2E_BUDGET_S", "560")
sys.path.insert(0, str(Path(__file__).resolve().parent))
import e2e
import verify_bench as vb

WORK, REPO, OUT = e2e.WORK, e2e.REPO, e2e.OUT
RESULTS = WORK / "results.txt"
vb.RESULTS = RESULTS
PIPE = REPO / "pipelines" / "speculators-0.9.toml"
SPEC_SITE = Path("/root/spec09")
SPEC_PY = Path("/root/spec-env/bin/python")
LLAMA = Path("/root/va/model")
DSV3 = Path("/root/va/dsv3/text")


def say(line: str) -> None:
    vb.say(line)
    shutil.copy(RESULTS, OUT / "serve09.txt")


def environments() -> None:
    """speculators 0.9.0's environment: its wheels in a folder of their own, in front."""
    wheels = sorted((REPO / ".spec09").glob("*.whl"))
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps",
                    "--no-compile", "--target", str(SPEC_SITE), *map(str, wheels)], check=True)  # fmt: skip
    SPEC_PY.parent.mkdir(parents=True, exist_ok=True)
    SPEC_PY.write_text(
        f'#!/bin/sh\nPYTHONPATH={SPEC_SITE}${{PYTHONPATH:+:$PYTHONPATH}} exec {sys.executable} "$@"\n'
    )
    SPEC_PY.chmod(0o755)
    got = subprocess.run([str(SPEC_PY), "-c", "from importlib.metadata import version as v; print(v('speculators'), v('hs-connectors'), v('vllm'))"],
                         capture_output=True, text=True, check=False)  # fmt: skip
    say(
        f"environments: speculators {got.stdout.strip() or got.stderr.strip()[-200:]} via {SPEC_PY}; vLLM in {sys.executable}"
    )


def chat(path: Path, n: int, system: str | None, seed: int) -> None:
    rng = random.Random(seed)
    with path.open("w") as f:
        for i in range(n):
            turns = [] if system is None else [{"from": "system", "value": system}]
            for _ in range(rng.randint(1, 3)):
                turns.append(
                    {
                        "from": "human",
                        "value": " ".join(rng.choices(e2e.WORDS, k=rng.randint(10, 40))),
                    }
                )
                turns.append(
                    {
                        "from": "gpt",
                        "value": " ".join(rng.choices(e2e.WORDS, k=rng.randint(20, 80))),
                    }
                )
            f.write(json.dumps({"id": str(i), "conversations": turns}) + "\n")


def sets(model: Path, data: str, layer_ids: str, extra: list[str] | None = None) -> list[str]:
    values = [
        f"model={model}", f"dataset={WORK / (data + '.jsonl')}", f"data={WORK / 'data' / data}",
        f"vllm_python={sys.executable}", f"speculators_python={SPEC_PY}", f"layer_ids={layer_ids}",
        "seq_length=1024", "max_samples=64", "gpu_memory_utilization=0.5", "port=8011",
        "concurrency=16", "draft_vocab_size=256", "epochs=2", "lr=5e-4", "gpus=1",
        *(extra or []),
    ]  # fmt: skip
    return [x for v in values for x in ("--set", v)]


class Stop(Exception):
    """The server did not start: every later step would fail the same way."""


def step(name: str, label: str, args: list[str], timeout: float = 400) -> dict[str, Any] | None:
    r = vb.harness(
        "run", name, "-t", "local", "--pipeline", str(PIPE), *args, name=label, timeout=timeout
    )
    e2e.keep_log(name, label.replace(" ", "-"))
    info = vb.newest(name)
    if info is None:
        say(f"  BAD {label}: no run recorded -- {(r.err or r.out).strip()[-900:]}")
        if "service" in r.err:
            raise Stop(label)
        return None
    v = info.get("verification") or {}
    ok = info.get("state") == "succeeded" and v.get("outcome") == "passed"
    say(f"  {'OK' if ok else 'BAD'} {label}: {info.get('label')} -- harness exit {r.code}")
    if not ok:
        say("    " + " | ".join((r.err or r.out).strip().splitlines()[-6:])[-700:])
    for line in r.err.splitlines():
        if "ready on" in line or "service serve" in line:
            say(f"    {line.strip()}")
    return info


def served() -> None:
    r = vb.harness("runs", "-t", "local", name="runs", timeout=60)
    for line in r.out.splitlines():
        if "serve" in line:
            say(f"    runs: {line.strip()}")


def phase_llama() -> int:
    WORK.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text("")
    environments()
    model = LLAMA if (LLAMA / "config.json").is_file() else None
    if model is None:
        e2e.MODEL = WORK / "model"
        e2e.DATA = WORK / "unused.jsonl"
        e2e.build_model()
        model = e2e.MODEL
    chat(WORK / "chat.jsonl", 64, None, seed=5)
    ids = "2, 4, 5, 8"  # launch_vllm.py's choice for 8 layers: [2, L//2, L-3] + the final layer L
    t0 = time.perf_counter()
    step("prepare", "prepare (starts serve, kept)", [*sets(model, "chat", ids), "--keep-service"])
    say(f"    prepare incl. the server's start: {time.perf_counter() - t0:.1f} s")
    step("generate", "generate (reuses serve, then stops it)", sets(model, "chat", ids))
    served()
    step("vocab", "vocab", sets(model, "chat", ids))
    step("train", "train", sets(model, "chat", ids), timeout=500)
    # prefix caching on, every sample opening with the same long system prompt
    chat(WORK / "shared.jsonl", 32, " ".join(random.Random(9).choices(e2e.WORDS, k=300)), seed=6)
    cache = ["prefix_caching=--enable-prefix-caching"]
    step(
        "prepare",
        "prepare shared prefix, caching ON",
        [*sets(model, "shared", ids, cache), "--keep-service"],
    )
    step("generate", "generate shared prefix, caching ON", sets(model, "shared", ids, cache))
    return 0


def phase_dsv3() -> int:
    WORK.mkdir(parents=True, exist_ok=True)
    if not (DSV3 / "config.json").is_file():
        say("dsv3: NOT RUN (verify_all.py dsv3 builds the model first)")
        return 1
    if not SPEC_PY.is_file():
        environments()
    chat(WORK / "chat-dsv3.jsonl", 64, None, seed=7)
    ids = "2, 12, 21, 24"
    step(
        "prepare",
        "dsv3 prepare (starts serve, kept)",
        [*sets(DSV3, "chat-dsv3", ids), "--keep-service"],
    )
    step("generate", "dsv3 generate, final layer 24 included", sets(DSV3, "chat-dsv3", ids))
    return 0


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    try:
        return {"llama": phase_llama, "dsv3": phase_dsv3}[
            sys.argv[1] if len(sys.argv) > 1 else "llama"
        ]()
    finally:
        e2e.pack()


if __name__ == "__main__":
    sys.exit(main())
