#!/usr/bin/env python3
"""Smoke mode on the GPU: full vs smoke extraction of a large random model, through harness.

Run on the GPU machine after ``bench/gpu/e2e.py`` (same install, same work folder: the tiny
model, the chat data, the series applied)::

    python3 bench/gpu/smoke.py build      # a 32-layer, hidden-4096 random Llama (~14 GiB bf16)
    python3 bench/gpu/smoke.py extract    # full vs --smoke extract, series applied; tiny smoke
    python3 bench/gpu/smoke.py failure    # launch -> failure summary without 0010, full vs smoke

Each ``harness run`` is timed from launch to its end; "no weight file was read" is shown two
ways: the checkpoint files' access times (reset to two days ago before the smoke run, so any
read would move them, relatime or not) and vLLM's loader lines in the log. Results append to
``$OUT/results.txt`` (one line each), logs to ``$OUT/logs.tar.gz``.
"""

# ruff: noqa: E501 -- result lines are built in place, as they are printed

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import e2e

BIG = Path(os.environ.get("SMOKE_BIG") or e2e.WORK / "big")
LAYERS, HIDDEN = 32, 4096


def build_big() -> None:
    """Random weights on the GPU, written once as safetensors shards (tokenizer: the tiny one's)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    t0 = time.perf_counter()
    shutil.rmtree(BIG, ignore_errors=True)
    BIG.mkdir(parents=True)
    for f in e2e.MODEL.iterdir():
        if f.name.startswith(("tokenizer", "special_tokens", "chat_template")):
            shutil.copy(f, BIG / f.name)
    tiny = json.loads((e2e.MODEL / "config.json").read_text())
    cfg = LlamaConfig(
        vocab_size=tiny["vocab_size"], hidden_size=HIDDEN, intermediate_size=14336,
        num_hidden_layers=LAYERS, num_attention_heads=32, num_key_value_heads=8,
        max_position_embeddings=2048, bos_token_id=tiny["bos_token_id"],
        eos_token_id=tiny["eos_token_id"], pad_token_id=tiny["pad_token_id"],
        tie_word_embeddings=False, dtype="bfloat16",
    )  # fmt: skip
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = LlamaForCausalLM(cfg).to(torch.bfloat16)
    model.save_pretrained(BIG, max_shard_size="4GB")
    del model
    gib = sum(f.stat().st_size for f in BIG.glob("*.safetensors")) / 2**30
    e2e.say(
        f"built big random Llama ({LAYERS} layers, hidden {HIDDEN}): {gib:.1f} GiB of safetensors in {time.perf_counter() - t0:.1f} s"
    )


def shards() -> list[Path]:
    return sorted(BIG.glob("*.safetensors"))


def age_atimes() -> None:
    old = time.time() - 2 * 86400
    for f in shards():
        os.utime(f, (old, f.stat().st_mtime))


def read_since(mark: float) -> list[str]:
    return [f.name for f in shards() if f.stat().st_atime > mark]


def sets(model: Path, data: str) -> list[str]:
    base = [s for s in e2e.SETS if not s.startswith(("model=", "data=", "max_samples="))]
    return [
        x for s in [*base, f"model={model}", f"data={data}", "max_samples=64"] for x in ("--set", s)
    ]


def extract(name: str, model: Path, data: str, *extra: str) -> tuple[e2e.Cmd, str]:
    r = e2e.harness(
        "run",
        "extract",
        *extra,
        *sets(model, data),
        *e2e.PIPE,
        name=name,
        timeout=max(60, e2e.left() - 20),
    )
    log = e2e.keep_log("extract", re.sub(r"\W+", "-", name))
    return r, log


def loader_lines(log: str) -> str:
    hits = re.findall(
        r"(Loading weights took [\d.]+ seconds|Model loading took [^\n]+|Loading safetensors checkpoint shards: 100%[^\n]*|load_format=dummy[^\n]{0,40}|harness smoke: [^\n]{0,160})",
        log,
    )
    return " | ".join(dict.fromkeys(h.strip() for h in hits)) or "no loader lines"


def cmd_extract() -> None:
    e2e.harness("apply-patches", *e2e.PIPE[2:], name="apply-patches", quiet=True)
    age_atimes()
    mark = time.time()
    r, log = extract("smoke extract (big, --smoke)", BIG, f"{e2e.WORK}/data-big-smoke", "--smoke")
    e2e.say(f"  weight files read during the smoke run: {read_since(mark) or 'none'} (atimes)")
    e2e.say(f"  loader: {loader_lines(log)}")
    smoke_s = r.secs
    mark = time.time()
    r, log = extract("full extract (big)", BIG, f"{e2e.WORK}/data-big")
    e2e.say(f"  weight files read during the full run: {len(read_since(mark))}/{len(shards())}")
    e2e.say(f"  loader: {loader_lines(log)}")
    if r.code == 0:
        e2e.say(
            f"full vs smoke extract (big model, through harness): {r.secs:.1f} s vs {smoke_s:.1f} s = {r.secs / smoke_s:.1f}x"
        )
    r, log = extract(
        "smoke extract (tiny, --smoke)", e2e.MODEL, f"{e2e.WORK}/data-tiny-smoke", "--smoke"
    )
    e2e.say(f"  loader: {loader_lines(log)}")
    e2e.harness("runs", name="harness runs", quiet=True)
    e2e.pack()


def cmd_failure() -> None:
    """Without 0010 (embed_input_ids) the extraction fails at the first forward pass, after
    the model load: the mismatch a full load pays for and a smoke run finds in seconds."""
    partial = e2e.WORK / "series-without-0010"
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(e2e.REPO / "patches", partial)
    folder = partial / "speculators" / "0.3.0"
    (folder / "0010-decoder-embed-input-ids.patch").unlink()
    text = (folder / "series.toml").read_text()
    start = text.index('[[patch]]\nfile = "0010')
    end = text.index("[[patch]]", start + 1)
    (folder / "series.toml").write_text(text[:start] + text[end:])
    e2e.harness("revert-patches", *e2e.PIPE[2:], name="revert-patches", quiet=True)
    e2e.harness(
        "apply-patches", "--patches", str(partial), name="apply-patches (without 0010)", quiet=True
    )
    pipe = ["--pipeline", str(e2e.REPO / "pipeline.toml"), "--patches", str(partial)]
    times = {}
    for label, extra in (("smoke", ["--smoke"]), ("full", [])):
        r = e2e.harness(
            "run",
            "extract",
            "--force",
            "--kill-stale",
            *extra,
            *sets(BIG, f"{e2e.WORK}/data-fail-{label}"),
            *pipe,
            name=f"failure run without 0010 ({label})",
            timeout=max(60, e2e.left() - 20),
        )
        e2e.keep_log("extract", f"failure-without-0010-{label}")
        times[label] = r.secs
        for line in r.err.splitlines():
            if line.startswith(("AttributeError", "hint:", "root cause")) or "embed" in line:
                e2e.say(f"  | {line[:220]}")
    if len(times) == 2:
        e2e.say(
            f"launch -> failure summary, full vs smoke (big model): {times['full']:.1f} s vs {times['smoke']:.1f} s = {times['full'] / times['smoke']:.1f}x"
        )
    e2e.harness(
        "revert-patches",
        "--patches",
        str(partial),
        name="revert-patches (without 0010)",
        quiet=True,
    )
    e2e.harness("apply-patches", *e2e.PIPE[2:], name="apply-patches (again)", quiet=True)
    e2e.pack()


def main() -> int:
    e2e.OUT.mkdir(parents=True, exist_ok=True)
    e2e.LOGS.mkdir(parents=True, exist_ok=True)
    results = e2e.OUT / "results.txt"
    if results.exists():
        e2e._lines.extend(results.read_text().splitlines())
    what = sys.argv[1] if len(sys.argv) > 1 else "extract"
    e2e.say(f"smoke.py {what}")
    if not (e2e.MODEL / "config.json").is_file():  # a machine that did not run e2e.py
        e2e.WORK.mkdir(parents=True, exist_ok=True)
        e2e.build_model()
    {"build": build_big, "extract": cmd_extract, "failure": cmd_failure}[what]()
    return 0


if __name__ == "__main__":
    sys.exit(main())
