#!/usr/bin/env python3
"""GPU bench of issue 41: the extraction check against faults nobody wrote its rule from.

The payload: ``PIECE_MB=44 bash bench/gpu/pack.sh 0.26.0`` with ``.serve-deps`` and ``.spec09``
present (serve09.py's), staged with ``bash bench/gpu/stage.sh`` and installed with ``--install``.
Then, one phase per device call (``--local``: the ``local`` target, no sshd):

    python3 bench/gpu/faults41.py llama --local   # an 8-layer Llama and an 8-layer Qwen3 (qk-norm,
                                                  # tied embeddings; the same tokenizer) through
                                                  # the shipped 0.9 pipeline at its defaults:
                                                  # prepare -> generate, each output checked as
                                                  # the step checks it; then every fault kind of
                                                  # bench/hs_faults.py planted into copies of the
                                                  # Llama's output (the Qwen3's as "another
                                                  # model's states") and the check run on each
    python3 bench/gpu/faults41.py dsv3 --local    # the 24-layer DeepSeek-V3 shape (MLA, 16 routed
                                                  # experts: routing flips), the same

The check on each planted folder is the step's own command line at the pipeline's defaults
(``verify_samples`` / ``verify_layers`` read from pipelines/speculators-0.9.toml). A kind counts
as caught when the check fails and names only planted samples (bench/hs_faults.py's verdict);
a control (untouched, 2 % noise, float32 storage) when it passes. Results: ``$OUT/faults41.txt``
and one JSON line per folder in ``$OUT/faults41.jsonl``; the real (untouched) output's census
per compared layer -- rows, floor, rows above the row bound, their runs by length, sizes, how
many apart from their neighbours' rows, where (``_hs_census.py``) -- in ``$OUT/flips-<model>.json``
and one line per layer in faults41.txt (``<model> census layer k: ...``).
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

import tomllib

os.environ.setdefault("E2E_WORK", "/root/f41")
os.environ.setdefault("E2E_LOGS", "/root/f41-logs")
os.environ.setdefault("E2E_BUDGET_S", "560")
os.environ.setdefault("VB_BUDGET_S", "570")
sys.path.insert(0, str(Path(__file__).resolve().parent))
import e2e
import serve09 as s9

WORK, REPO, OUT = e2e.WORK, e2e.REPO, e2e.OUT
JSONL = OUT / "faults41.jsonl"
DEFAULTS = next(
    t
    for t in tomllib.loads((REPO / "pipelines" / "speculators-0.9.toml").read_text()).values()
    if isinstance(t, dict) and "verify_layers" in t
)


def say(line: str) -> None:
    s9.say(line)
    (OUT / "faults41.txt").write_text(s9.RESULTS.read_text())


def qwen3_model(llama: Path) -> Path:
    """An 8-layer Qwen3 (qk-norm, tied embeddings) on the Llama's tokenizer: the same ids."""
    folder = WORK / "qwen3"
    if (folder / "config.json").is_file():
        return folder
    import torch
    from transformers import AutoTokenizer, Qwen3Config, Qwen3ForCausalLM

    fast = AutoTokenizer.from_pretrained(llama)
    cfg = Qwen3Config(
        vocab_size=len(fast), hidden_size=512, intermediate_size=1536, num_hidden_layers=8,
        num_attention_heads=8, num_key_value_heads=4, head_dim=64, max_position_embeddings=2048,
        tie_word_embeddings=True, bos_token_id=fast.bos_token_id, eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
    )  # fmt: skip
    torch.manual_seed(1)
    Qwen3ForCausalLM(cfg).to(torch.bfloat16).save_pretrained(folder)
    fast.save_pretrained(folder)
    say(f"built qwen3: 8 layers, hidden 512, tied embeddings, qk-norm, vocab {len(fast)}")
    return folder


def check_argv(model: Path, data: str, ids: str) -> list[str]:
    """The generate step's verify command at the pipeline's defaults, less --data."""
    return [
        "--model", str(model), "--prepared", str(WORK / "data" / data / "prepared"),
        "--layer-ids", ids, "--capture", "input",
        "--samples", str(DEFAULTS["verify_samples"]), "--layers", str(DEFAULTS["verify_layers"]),
    ]  # fmt: skip


def generate(model: Path, data: str, ids: str, label: str, extra: list[str] | None = None) -> Path:
    """prepare (serve kept) -> generate through harness at the pipeline's defaults; the
    generate step's own check is the 'real output passes' result."""
    base = s9.sets(model, data, ids, extra)
    s9.step("prepare", f"{label} prepare (serve kept)", [*base, "--keep-service"])
    t0 = time.perf_counter()
    info = s9.step("generate", f"{label} generate, checked at the pipeline's defaults", base)
    say(f"    {label} generate wall {time.perf_counter() - t0:.1f} s")
    if info:
        v = info.get("verification") or {}
        checks = json.dumps(v.get("checks") or {})[:600]
        say(
            f"    {label} verdict: {v.get('outcome')} {v.get('checked')}/{v.get('total')} failed {v.get('failed')!s:.300} -- checks {checks}"
        )
    return WORK / "data" / data / "hidden_states"


def faults(clean: Path, model: Path, data: str, ids: str, label: str, other: Path | None) -> None:
    out = WORK / "planted" / label
    plant = [
        sys.executable,
        str(REPO / "bench/hs_faults.py"),
        "plant",
        str(clean),
        str(out),
        "--model",
        str(model),
    ]
    if other is not None:
        plant += ["--other", str(other)]
    t0 = time.perf_counter()
    cp = subprocess.run(plant, capture_output=True, text=True, check=False, env=e2e.ENV)
    say(
        f"  planted into copies of {label}'s output: exit {cp.returncode} ({time.perf_counter() - t0:.1f} s)"
    )
    if cp.returncode != 0:
        say("    " + cp.stderr.strip()[-800:])
        return
    flips = OUT / f"flips-{label}.json"
    run = [
        sys.executable,
        str(REPO / "bench/hs_faults.py"),
        "run",
        str(out),
        "--census",
        str(flips),
        "--",
        *check_argv(model, data, ids),
    ]
    with subprocess.Popen(
        run, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e2e.ENV
    ) as p:
        assert p.stdout is not None
        for line in p.stdout:
            try:
                got = json.loads(line)
            except ValueError:
                continue
            got["model"] = label
            with JSONL.open("a") as f:
                f.write(json.dumps(got) + "\n")
            words = " | ".join(got.get("first") or []) or got.get("rule", "")
            say(
                f"  {'OK ' if got['ok'] else 'BAD'} {label} {got['half']:8} {got['kind']:16} exit {got['exit']} named {got['named_count']} ({got.get('seconds')} s): {words[:300]}"
            )
        err = p.stderr.read() if p.stderr else ""
    if p.returncode:
        say(f"  hs_faults run exit {p.returncode}: {err.strip()[-600:]}")
    census(flips, label)


def check_census(hs: Path, model: Path, data: str, ids: str, label: str) -> None:
    """The check at the defaults on an output nothing was planted into (the Qwen3's), for its
    census alone: the transformers reference only (seconds), no vLLM."""
    flips = OUT / f"flips-{label}.json"
    argv = [sys.executable, str(REPO / "probes" / "verifiers" / "hidden_states.py"), "--data",
            str(hs), *check_argv(model, data, ids), "--census", str(flips)]  # fmt: skip
    t0 = time.perf_counter()
    cp = subprocess.run(argv, capture_output=True, text=True, check=False, env=e2e.ENV)
    say(f"  {label} census check: exit {cp.returncode} ({time.perf_counter() - t0:.1f} s)")
    if cp.returncode not in (0, 1):
        say("    " + cp.stderr.strip()[-600:])
    census(flips, label)


def census(flips: Path, label: str) -> None:
    """The real (untouched) output's rows above each layer's row bound, as the check judged
    them at the defaults (``--census``, probes/verifiers/_hs_census.py): what RUN_MAX,
    FLIP_MAX and FLIP_RATE are calibrated from. Written by the untouched copy's check in the
    ``run`` above -- no model loaded for it."""
    try:
        layers = json.loads(flips.read_text())
    except (OSError, ValueError) as exc:
        say(f"  {label} census: none ({type(exc).__name__}: {exc})")
        return
    sys.path.insert(0, str(REPO / "probes" / "verifiers"))
    from _hs_census import line

    for layer in layers:
        say(f"  {label} census {line(layer)}")


def phase_llama() -> int:
    if not s9.open_phase(
        f"# issue 41, llama + qwen3: the 0.9 pipeline at its defaults on vLLM 0.26.0, then planted faults, over {s9.TARGET}",
        fresh=True,
    ):
        return 1
    llama = s9.llama_model()
    qwen = qwen3_model(llama)
    s9.chat(WORK / "chat.jsonl", 64, None, seed=5)
    s9.chat(WORK / "chatq.jsonl", 64, None, seed=5)  # the same chats: the same ids on one tokenizer
    hs_llama = generate(llama, "chat", s9.IDS, "llama")
    hs_qwen = generate(qwen, "chatq", s9.IDS, "qwen3")
    faults(hs_llama, llama, "chat", s9.IDS, "llama", hs_qwen)
    check_census(hs_qwen, qwen, "chatq", s9.IDS, "qwen3")
    return 0


def phase_dsv3() -> int:
    if not s9.open_phase(
        f"# issue 41, dsv3: the DeepSeek-V3 shape at the pipeline's defaults on vLLM 0.26.0, then planted faults, over {s9.TARGET}"
    ):
        return 1
    model = s9.dsv3_model()
    s9.chat(WORK / "chat-dsv3.jsonl", 64, None, seed=7)
    ids = "2, 12, 21, 24"
    hs = generate(model, "chat-dsv3", ids, "dsv3")
    faults(hs, model, "chat-dsv3", ids, "dsv3", None)
    return 0


def main() -> int:
    if {"-h", "--help"} & set(sys.argv[1:]):
        print(__doc__)
        return 0
    OUT.mkdir(parents=True, exist_ok=True)
    random.seed(0)
    phase = next((a for a in sys.argv[1:] if not a.startswith("--")), "llama")
    try:
        return {"llama": phase_llama, "dsv3": phase_dsv3}[phase]()
    finally:
        e2e.pack()


if __name__ == "__main__":
    sys.exit(main())
