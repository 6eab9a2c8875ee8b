#!/usr/bin/env python3
"""GPU bench of issue 20: extraction verified sample by sample, under and over the budget.

Run on the GPU machine after ``bash bench/gpu/stage.sh --install``, one phase per device call
(each well under a call's 10 minutes; the machine keeps its files between calls):

    python3 bench/gpu/verify_bench.py a   # build models + data; the series WITHOUT 0013:
                                          # long batches -> "failed verification", real and smoke
    python3 bench/gpu/verify_bench.py b   # the whole series: Llama, batch 8 and 16 over the
                                          # budget, 16 under it, and smoke -> "verified N/N"
    python3 bench/gpu/verify_bench.py c   # a mixture-of-experts model (Qwen3-MoE) over the
                                          # budget; prepare -> extract -> vocab -> train, each
                                          # step verified

Everything goes through harness's own commands on the ``local`` target with the shipped
pipeline.toml: ``harness run extract`` runs the step's ``verify`` (every sample compared with a
transformers forward pass of the same model and token ids, at every captured layer:
``verify_samples=0``, ``verify_layers=all``); its verdict is read back from ``harness runs
--json``. Each case prints OK when the verdict is what it must be, BAD otherwise. Models and
data are built here (nothing from a hub): a tokenizer trained on a word list, an 8-layer Llama
and an 8-layer Qwen3-MoE (8 experts, 2 per token) in bf16, and chat datasets whose
conversations are short (batches under max(8192, seq_length) tokens) or long (600-1,300 tokens
each: a batch of 8 or 16 goes over it). Results: ``$OUT/verify-results.txt`` (accumulated over
the phases in ``/root/vb/results.txt``) and the runs' logs in ``$OUT/verify-logs.tar.gz``.
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

os.environ.setdefault("E2E_WORK", "/root/vb")
os.environ.setdefault("E2E_LOGS", "/root/vb-logs")
sys.path.insert(0, str(Path(__file__).resolve().parent))
import e2e

WORK, REPO, PACK, OUT = e2e.WORK, e2e.REPO, e2e.PACK, e2e.OUT
RESULTS = WORK / "results.txt"
WITHOUT = WORK / "patches-without-0013"
BUDGET = float(os.environ.get("VB_BUDGET_S", "560"))
#: the target the runs are launched on: ``local``, or a hosts.toml host on this machine (the
#: SSH bench's ``gpu``, whose workdir is WORK: ``newest`` reads the same runs with -t local)
TARGET = os.environ.get("VB_TARGET", "local")
if TARGET != "local":  # the kept connection, as a user meets it (e2e turns it off for local)
    e2e.ENV["HARNESS_SSH_PERSIST"] = "600"
T0 = time.monotonic()


def say(line: str) -> None:
    print(line, flush=True)
    with RESULTS.open("a") as f:
        f.write(line + "\n")
    OUT.mkdir(parents=True, exist_ok=True)
    shutil.copy(RESULTS, OUT / "verify-results.txt")


def left() -> float:
    return BUDGET - (time.monotonic() - T0)


def harness(*args: str, name: str, timeout: float = 420) -> e2e.Cmd:
    r = e2e.run(["harness", *args], name, timeout=min(timeout, max(30, left() - 10)), quiet=True)
    say(f"{name}: exit {r.code} ({r.secs:.1f} s)")
    return r


# -- models and data, built here ------------------------------------------------------------


def build_models() -> None:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, Qwen3MoeConfig, Qwen3MoeForCausalLM

    common = dict(hidden_size=512, num_hidden_layers=8, num_attention_heads=8,
                  num_key_value_heads=4, max_position_embeddings=4096,
                  tie_word_embeddings=False)  # fmt: skip
    for name, make in (
        ("llama", lambda n: LlamaForCausalLM(LlamaConfig(vocab_size=n, intermediate_size=1536, **common))),
        ("moe", lambda n: Qwen3MoeForCausalLM(Qwen3MoeConfig(
            vocab_size=n, intermediate_size=1024, moe_intermediate_size=256, head_dim=64,
            num_experts=8, num_experts_per_tok=2, decoder_sparse_step=1, norm_topk_prob=True,
            **common))),
    ):  # fmt: skip
        folder = WORK / name
        fast = e2e.tokenizer(folder, random.Random(0))
        torch.manual_seed(0)
        model = make(len(fast)).to(torch.bfloat16)
        for key in ("bos_token_id", "eos_token_id", "pad_token_id"):
            setattr(model.config, key, getattr(fast, key))
        model.save_pretrained(folder)
        shards = sorted(p.name for p in folder.glob("*.safetensors"))
        say(
            f"built {name}: {type(model).__name__}, {sum(p.numel() for p in model.parameters()) / 1e6:.1f} M params, {shards}"
        )


def build_chat(path: Path, n: int, lo: int, hi: int, seed: int) -> None:
    rng = random.Random(seed)
    with path.open("w") as f:
        for i in range(n):
            turns = []
            for _ in range(rng.randint(2, 4)):
                turns.append(
                    {
                        "from": "human",
                        "value": " ".join(rng.choices(e2e.WORDS, k=rng.randint(lo // 4, lo // 2))),
                    }
                )
                turns.append(
                    {
                        "from": "gpt",
                        "value": " ".join(rng.choices(e2e.WORDS, k=rng.randint(lo // 2, hi // 2))),
                    }
                )
            f.write(json.dumps({"id": str(i), "conversations": turns}) + "\n")


# -- cases -----------------------------------------------------------------------------------


def sets(model: str, data: str, case: str, batch: int, samples: int) -> list[str]:
    values = [
        f"model={WORK / model}", f"dataset={WORK / (data + '.jsonl')}",
        f"data={WORK / 'data' / case}", f"speculators={PACK / 'speculators'}",
        f"train_pythonpath={PACK / 'tf4'}", f"max_samples={samples}", "seq_length=2048",
        f"batch_size={batch}", "num_proc=4", "draft_vocab_size=256", "epochs=2", "lr=5e-4",
        "total_seq_len=4096", "gpus=1", "tp=1", "gpu_memory_utilization=0.5",
        "verify_samples=0", "verify_layers=all",
    ]  # fmt: skip
    return [x for v in values for x in ("--set", v)]


def newest(step: str) -> dict[str, Any] | None:
    r = e2e.run(["harness", "runs", "-t", "local", "--json"], "runs", quiet=True)
    try:
        runs = [x for x in json.loads(r.out) if x["record"]["step"] == step]
    except (ValueError, KeyError):
        return None
    return max(runs, key=lambda x: x["record"]["created_at"] or 0) if runs else None


def verified(step: str, label: str, r: e2e.Cmd, tail: bool = False) -> bool:
    """Says whether the newest ``step`` run succeeded and its output passed its check (with
    ``tail``, the end of harness's output when not)."""
    got = newest(step) or {}
    ok = (
        got.get("state") == "succeeded"
        and (got.get("verification") or {}).get("outcome") == "passed"
    )
    say(f"  {'OK' if ok else 'BAD'} {label}: {got.get('label')} -- harness exit {r.code}")
    if tail and not ok:
        say("    " + " | ".join((r.err or r.out).strip().splitlines()[-3:])[-400:])
    return ok


def lengths(case: str, smoke: dict[str, Any] | None = None) -> str:
    """Token counts of what the case extracted, and how many batches went over the budget."""
    import torch

    folder = WORK / "data" / case / "gen"
    if smoke is not None:
        folder = Path(smoke["record"]["run_dir"]) / "smoke" / "gen"
    n = sorted(folder.glob("data_*.pt"), key=lambda p: int(p.stem[5:]))
    ids = [
        int(torch.load(p, map_location="cpu", mmap=True, weights_only=True)["input_ids"].shape[0])
        for p in n
    ]
    return (
        f"{len(ids)} samples, {min(ids, default=0)}-{max(ids, default=0)} tokens each"
        if ids
        else "no samples"
    )


def case(label: str, model: str, data: str, batch: int, expect: str, samples: int = 64,
         smoke: bool = False, patches: Path = REPO / "patches") -> None:  # fmt: skip
    """One ``harness run extract``: its verdict must be ``expect`` (verified | failed)."""
    if left() < 90:
        say(f"{label}: NOT RUN (phase budget)")
        return
    name = label.replace(" ", "-")
    args = ["run", "extract", "-t", TARGET, "--pipeline", str(REPO / "pipeline.toml"),
            "--patches", str(patches), *sets(model, data, name, batch, samples)]  # fmt: skip
    if smoke:
        args += ["--smoke", "--smoke-samples", str(samples)]
    r = harness(*args, name=label, timeout=400)
    e2e.keep_log("extract", name)
    info = newest("extract")
    if info is None:
        say(f"  BAD {label}: no run recorded")
        return
    v = info.get("verification") or {}
    got = "verified" if info["state"] == "succeeded" and v.get("outcome") == "passed" else (
        "failed" if info["state"] == "failed" and v else info["state"])  # fmt: skip
    budget = max(8192, 2048)
    tokens = ""
    try:
        tokens = lengths(name, info if smoke else None)
    except Exception as exc:
        tokens = f"lengths unreadable: {exc}"
    say(f"  {'OK' if got == expect else 'BAD'} {label} (batch {batch}, budget {budget} tokens/step; {tokens}): "
        f"{info['label']} -- harness exit {r.code}, run exit {info['exit']}")  # fmt: skip
    if v.get("metrics"):
        m = v["metrics"]
        say(
            f"    max relative error {m.get('max_rel_err')}, layers {m.get('layers')}, tolerance {m.get('tolerance')}, check {m.get('seconds')} s"
        )
    if v.get("failed"):
        say(f"    wrong samples ({len(v['failed'])}): {', '.join(v['failed'][:24])}")


def series(patches: Path) -> None:
    harness(
        "revert-patches", "-t", "local", "--patches", str(REPO / "patches"), name="revert-patches"
    )
    r = harness(
        "apply-patches",
        "-t",
        "local",
        "--patches",
        str(patches),
        name=f"apply-patches {patches.name}",
    )
    say("  " + (r.out.strip().splitlines() or [r.err.strip()[-200:]])[-1])


def without_0013() -> Path:
    shutil.rmtree(WITHOUT, ignore_errors=True)
    shutil.copytree(REPO / "patches", WITHOUT)
    folder = WITHOUT / "speculators" / "0.3.0"
    text = (folder / "series.toml").read_text()
    start = text.index('[[patch]]\nfile = "0013')
    end = text.find("[[patch]]", start + 1)
    (folder / "series.toml").write_text(text[:start] + (text[end:] if end != -1 else ""))
    (folder / "0013-prefill-across-scheduler-steps.patch").unlink()
    return WITHOUT


def phase_a() -> None:
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    shutil.rmtree(e2e.LOGS, ignore_errors=True)
    e2e.LOGS.mkdir(parents=True)
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version",
                          "--format=csv,noheader"], capture_output=True, text=True, check=False)  # fmt: skip
    say(f"verify bench on {os.uname().nodename}: {smi.stdout.strip()}; {e2e.PY}")
    t0 = time.perf_counter()
    build_models()
    build_chat(WORK / "short.jsonl", 64, 8, 40, seed=1)
    build_chat(WORK / "long.jsonl", 64, 120, 520, seed=2)
    say(f"models + data built in {time.perf_counter() - t0:.1f} s")
    say("== the series WITHOUT 0013 (today's series before this issue)")
    series(without_0013())
    case("llama long b16 without 0013", "llama", "long", 16, "failed", patches=WITHOUT)
    case("llama long b16 smoke without 0013", "llama", "long", 16, "failed", samples=16,
         smoke=True, patches=WITHOUT)  # fmt: skip


def phase_b() -> None:
    say("== the whole series (with 0013)")
    series(REPO / "patches")
    case("llama long b16", "llama", "long", 16, "verified")
    case("llama long b8", "llama", "long", 8, "verified")
    case("llama short b16", "llama", "short", 16, "verified")
    case("llama long b16 smoke", "llama", "long", 16, "verified", samples=16, smoke=True)


def phase_c() -> None:
    say("== a mixture-of-experts model (Qwen3-MoE), the whole series")
    case("moe long b16", "moe", "long", 16, "verified")
    case("moe long b8", "moe", "long", 8, "verified")
    say("== prepare -> extract -> vocab -> train, each step verified (llama, long data, batch 8)")
    for step in ("prepare", "extract", "vocab", "train"):
        if left() < 60:
            say(f"{step}: NOT RUN (phase budget)")
            continue
        r = harness("run", step, "-t", TARGET, "--pipeline", str(REPO / "pipeline.toml"),
                    "--patches", str(REPO / "patches"), *sets("llama", "long", "e2e", 8, 64),
                    name=f"e2e {step}", timeout=max(60, left() - 20))  # fmt: skip
        e2e.keep_log(step, f"e2e-{step}")
        verified(step, f"e2e {step}", r)


def main() -> int:
    phase = sys.argv[1] if len(sys.argv) > 1 else "a"
    WORK.mkdir(parents=True, exist_ok=True)
    e2e.LOGS.mkdir(parents=True, exist_ok=True)
    {"a": phase_a, "b": phase_b, "c": phase_c}[phase]()
    say(f"phase {phase} done in {time.monotonic() - T0:.0f} s")
    subprocess.run(
        ["tar", "-czf", str(OUT / "verify-logs.tar.gz"), "-C", str(e2e.LOGS), "."], check=False
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
