#!/usr/bin/env python3
"""GPU bench of issues 41 and 42 at the size users run: a Llama-3.1-8B shape through the 0.9 pipeline.

One device call after ``bash bench/gpu/stage.sh --install`` (``python3 bench/gpu/scale8b.py
--local``): a Llama-3.1-8B shape (hidden 4096, 32 layers, 32/8 heads, MLP 14336; random bf16
weights made on the GPU, the bench's own small tokenizer) and 256 chats, then through
``harness run`` at the shipped pipeline's defaults (captured ids 2, 16, 29, 32; the check at
``verify_samples`` / ``verify_layers`` as shipped): ``prepare`` (server kept), ``generate``.
Measured from the run's own records: the generate command's time (supervisor start -> the
check's start), the check's time (``verify.json``), its share of the step, tokens/s, the
bytes written against the disk estimate the launch printed, and the progress lines the
user saw. Results: ``$OUT/scale8b.txt``.
"""

# ruff: noqa: E501 -- result lines are built in place, as they are printed

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("E2E_WORK", "/root/s8b")
os.environ.setdefault("E2E_LOGS", "/root/s8b-logs")
os.environ.setdefault("E2E_BUDGET_S", "590")
os.environ.setdefault("VB_BUDGET_S", "590")
sys.path.insert(0, str(Path(__file__).resolve().parent))
import e2e
import serve09 as s9
import verify_bench as vb

WORK, OUT = e2e.WORK, e2e.OUT
IDS = "2, 16, 29, 32"


def say(line: str) -> None:
    s9.say(line)
    (OUT / "scale8b.txt").write_text(s9.RESULTS.read_text())


def model8b() -> Path:
    folder = WORK / "llama8b"
    if (folder / "config.json").is_file():
        return folder
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    t0 = time.perf_counter()
    fast = e2e.tokenizer(folder, random.Random(0))
    cfg = LlamaConfig(
        vocab_size=len(fast), hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
        num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=8192,
        rope_theta=500000.0, tie_word_embeddings=False,
    )  # fmt: skip
    torch.manual_seed(0)
    torch.set_default_dtype(torch.bfloat16)
    with torch.device("cuda"):
        model = LlamaForCausalLM(cfg)
    torch.set_default_dtype(torch.float32)
    for key in ("bos_token_id", "eos_token_id", "pad_token_id"):
        setattr(model.config, key, getattr(fast, key))
    model.save_pretrained(folder)
    n = sum(p.numel() for p in model.parameters())
    del model
    torch.cuda.empty_cache()
    say(f"  built the 8B shape: {n / 1e9:.2f} B params, bf16, in {time.perf_counter() - t0:.1f} s")
    return folder


def record(info: dict) -> dict:
    run_dir = Path(info["record"].get("run_dir") or "")
    out = {}
    for name in ("supervisor.json", "verify.json", "status.json"):
        try:
            out[name] = json.loads((run_dir / name).read_text())
        except (OSError, ValueError):
            out[name] = {}
    return out


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    if not s9.open_phase(
        f"# issues 41/42 at the 8B size: a Llama-3.1-8B shape, 256 chats, the 0.9 pipeline at its defaults, vLLM 0.26.0, over {s9.TARGET}",
        fresh=True,
    ):
        return 1
    model = model8b()
    vb.build_chat(WORK / "chat8b.jsonl", 256, 200, 400, seed=11)
    extra = ["max_samples=256", "concurrency=32", "seq_length=4096", "gpu_memory_utilization=0.6"]
    base = s9.sets(model, "chat8b", IDS, extra)
    s9.step("prepare", "8b prepare (serve kept)", [*base, "--keep-service"], timeout=420)
    t0 = time.perf_counter()
    info = s9.step("generate", "8b generate at the pipeline's defaults", base, timeout=400)
    wall = time.perf_counter() - t0
    say(f"    8b generate: harness wall {wall:.1f} s")
    if not info:
        return 1
    r = record(info)
    started = float(r["supervisor.json"].get("started_at") or 0)
    v0, v1 = (float(r["verify.json"].get(k) or 0) for k in ("started_at", "ended_at"))
    ended = float(r["status.json"].get("ended_at") or 0)
    hs = WORK / "data" / "chat8b" / "hidden_states"
    files = sorted(hs.glob("hs_*.safetensors"))
    written = sum(f.stat().st_size for f in files)
    tokens = 0
    try:
        from safetensors import safe_open

        for f in files:
            with safe_open(str(f), "pt") as g:
                tokens += g.get_slice("token_ids").get_shape()[0]
    except Exception as e:  # the count is a figure, not the result
        say(f"    (token count: {type(e).__name__}: {e})")
    if started and v0 and v1:
        command, check, step = v0 - started, v1 - v0, (ended or v1) - started
        say(
            f"    generate command {command:.1f} s, the check {check:.1f} s: {100 * check / max(step, 1e-9):.1f} % of the step's {step:.1f} s"
        )
        if tokens:
            say(
                f"    {len(files)} files, {tokens:,} tokens: {tokens / max(command, 1e-9):,.0f} tokens/s through the pipeline"
            )
    say(
        f"    written {written / 1e9:.3f} GB in {len(files)} files ({written / max(tokens, 1):,.0f} B/token)"
    )
    v = info.get("verification") or {}
    say(f"    verdict: {v.get('outcome')} -- {json.dumps(v.get('checks') or {})[:700]}")
    # the estimate the launch's disk gate made, recomputed by the same probe on the same data
    q = {"out": str(hs), "prepared": str(WORK / "data" / "chat8b" / "prepared"), "layers": IDS,
         "model": str(model), "format": "bf16", "max_samples": 256}  # fmt: skip
    cp = subprocess.run(
        [str(s9.SPEC_PY), str(e2e.REPO / "probes/verifiers/_disk_budget.py")],
        input=json.dumps(q), capture_output=True, text=True, check=False,
    )  # fmt: skip
    try:
        est = json.loads(cp.stdout)
        say(
            f"    disk estimate {est['bytes'] / 1e9:.3f} GB ({est['tokens']:,} tokens x {est['per_token']:,} B) vs written {written / 1e9:.3f} GB: {100 * (written - est['bytes']) / max(est['bytes'], 1):+.2f} %"
        )
    except (ValueError, KeyError):
        say(f"    disk estimate: {cp.stdout[-300:]} {cp.stderr[-300:]}")
    progress = [
        ln for ln in (s9.RESULTS.read_text().splitlines()) if "tokens/s" in ln or "ETA" in ln
    ]
    say(f"    progress lines seen: {len(progress)}")
    for label, w, own in s9.OWN:
        say(f"    {label}: harness wall {w:.1f} s, step {own:.1f} s")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        e2e.pack()
