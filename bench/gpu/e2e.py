#!/usr/bin/env python3
"""GPU end-to-end: speculators 0.3.0's EAGLE-3 pipeline, patched and run by harness's own commands.

Run on the GPU machine after ``bash bench/gpu/stage.sh --install`` (vLLM 0.20.2 + speculators
0.3.0 in the image's Python; transformers 4.x for training in ``/root/pack/tf4``):

    python3 bench/gpu/e2e.py

Everything the pipeline reads is built here -- a tiny random Llama (weights, tokenizer with a
chat template) and a chat dataset -- nothing comes from a hub. Then, as a user would, with the
``local`` target: ``harness check`` (the breaks, statically), ``harness run extract --force`` on
the unpatched install (the failure summary), ``harness apply-patches``, ``harness report
extract`` (ready), ``harness run prepare|extract|vocab|train``, ``harness runs``, ``harness
logs``. It checks the result: every captured layer of the first samples against a transformers
forward pass of the same model and token ids (hooks on the same decoder layers), checkpoints
written, validation loss per epoch. Timings: model load and extraction (from vLLM's log lines),
each harness command's own overhead (its wall time minus the step's), and ``harness probe`` vs
``python -c "import vllm...; inspect.signature(...)"`` on this install.

One line per result goes to stdout and ``$OUT/results.txt`` (``extract: exit 0 (52.3 s)``);
the logs of the runs go to ``$OUT`` as well (they become test fixtures).
"""

# ruff: noqa: E501 -- result lines are built in place, as they are printed

from __future__ import annotations

import importlib.util
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
OUT = Path(os.environ.get("OUT") or "/tmp/e2e-out")
WORK = Path(os.environ.get("E2E_WORK", "/root/e2e"))
PACK = Path(os.environ.get("E2E_PACK", "/root/pack"))
DEADLINE = time.monotonic() + float(os.environ.get("E2E_BUDGET_S", "540"))
LOGS = Path(os.environ.get("E2E_LOGS", "/root/e2e-logs"))  # packed into $OUT/logs.tar.gz
MODEL = WORK / "model"
DATA = WORK / "chat.jsonl"
LAYERS = 8
PY = sys.executable
ENV = {
    **os.environ,
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HARNESS_SSH_PERSIST": "0",
    "COLUMNS": "200",
}
# vLLM 0.26's sampler imports FlashInfer unless told not to (v1/sample/ops/topk_topp_sampler.py:36-41);
# the payload carries none, so the runs say so with vLLM's own switch
if importlib.util.find_spec("flashinfer") is None:
    ENV.setdefault("VLLM_USE_FLASHINFER_SAMPLER", "0")
SETS = [
    f"model={MODEL}",
    f"dataset={DATA}",
    f"data={WORK}/data",
    f"speculators={PACK}/speculators",
    f"train_pythonpath={PACK}/tf4",
    "max_samples=256",
    "seq_length=512",
    "batch_size=16",
    "num_proc=4",
    "draft_vocab_size=256",
    "epochs=4",
    "lr=5e-4",
    "total_seq_len=4096",
    "gpus=1",
    "tp=1",
    "gpu_memory_utilization=0.5",
]
PIPE = ["--pipeline", str(REPO / "pipeline.toml"), "--patches", str(REPO / "patches")]
#: the caller's calls checked as the series leaves them (the benches' `check --with-patches`)
CHECK_PATCHED = ("check", "speculators", "--against", "vllm", "--with-patches")
_lines: list[str] = []


def say(line: str) -> None:
    print(line, flush=True)
    _lines.append(line)
    (OUT / "results.txt").write_text("\n".join(_lines) + "\n")


def pack() -> None:
    """$OUT brings back a few files only: the logs travel as one archive, remade as they grow."""
    subprocess.run(["tar", "-czf", str(OUT / "logs.tar.gz"), "-C", str(LOGS), "."], check=False)


def left() -> float:
    return DEADLINE - time.monotonic()


class Cmd:
    def __init__(self, code: int, out: str, err: str, secs: float) -> None:
        self.code, self.out, self.err, self.secs = code, out, err, secs


def run(argv: list[str], name: str, timeout: float = 420, quiet: bool = False) -> Cmd:
    """One command, timed; its output kept in $OUT/NAME.out/.err for the record."""
    t0 = time.perf_counter()
    try:
        cp = subprocess.run(
            argv, cwd=WORK, env=ENV, capture_output=True, text=True, timeout=timeout
        )
        code, out, err = cp.returncode, cp.stdout, cp.stderr
    except subprocess.TimeoutExpired as exc:
        code = 124
        out = (
            (exc.stdout or b"").decode(errors="replace")
            if isinstance(exc.stdout, bytes)
            else (exc.stdout or "")
        )
        err = (
            (exc.stderr or b"").decode(errors="replace")
            if isinstance(exc.stderr, bytes)
            else (exc.stderr or "")
        )
    secs = time.perf_counter() - t0
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", name)
    (LOGS / "cmds").mkdir(parents=True, exist_ok=True)
    (LOGS / "cmds" / f"{safe}.txt").write_text(
        f"$ {' '.join(argv)}\nexit {code} in {secs:.2f} s\n--- stdout\n{out[-20000:]}\n--- stderr\n{err[-20000:]}\n"
    )
    if not quiet:
        say(f"{name}: exit {code} ({secs:.1f} s)")
    return Cmd(code, out, err, secs)


def harness(*args: str, name: str | None = None, timeout: float = 420, quiet: bool = False) -> Cmd:
    return run(["harness", *args], name or f"harness {args[0]}", timeout, quiet)


def sets() -> list[str]:
    return [x for s in SETS for x in ("--set", s)]


# -- the model, tokenizer and data, built here --------------------------------------------------

WORDS = [
    "the",
    "a",
    "model",
    "token",
    "layer",
    "hidden",
    "state",
    "draft",
    "verifier",
    "speculative",
    "decoding",
    "attention",
    "head",
    "query",
    "key",
    "value",
    "cache",
    "batch",
    "sample",
    "gradient",
    "loss",
    "epoch",
    "train",
    "eval",
    "fast",
    "slow",
    "small",
    "large",
    "python",
    "vllm",
    "torch",
    "kernel",
    "memory",
    "block",
    "page",
    "prefill",
    "decode",
    "graph",
    "step",
    "run",
    "box",
    "patch",
    "check",
]


def tokenizer(folder: Path, rng: random.Random) -> Any:
    """A byte-level BPE tokenizer trained on the word list, with a chat template, saved to
    ``folder`` (``rng`` picks the training text: the caller's data continues from it)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    corpus = [" ".join(rng.choice(WORDS) for _ in range(40)) for _ in range(2000)]
    specials = ["<|begin|>", "<|end|>", "<|user|>", "<|assistant|>", "<|system|>", "<|pad|>"]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(
        corpus,
        trainers.BpeTrainer(
            vocab_size=512,
            special_tokens=specials,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<|begin|>", eos_token="<|end|>", pad_token="<|pad|>"
    )
    fast.chat_template = (
        "{{ '<|begin|>' }}{% for m in messages %}"
        "{{ '<|' + m['role'] + '|>\n' + m['content'] + '<|end|>\n' }}{% endfor %}"
        "{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}"
    )
    fast.save_pretrained(folder)
    return fast


def build_model() -> None:
    """A random 8-layer Llama with a byte-level BPE tokenizer and a chat template, in bf16."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    rng = random.Random(0)
    fast = tokenizer(MODEL, rng)
    cfg = LlamaConfig(
        vocab_size=len(fast),
        hidden_size=512,
        intermediate_size=1536,
        num_hidden_layers=LAYERS,
        num_attention_heads=8,
        num_key_value_heads=4,
        max_position_embeddings=2048,
        bos_token_id=fast.bos_token_id,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(cfg).to(torch.bfloat16)
    model.save_pretrained(MODEL)
    with DATA.open("w") as f:
        for i in range(256):
            turns = []
            for _ in range(rng.randint(1, 3)):
                turns.append(
                    {"from": "human", "value": " ".join(rng.choices(WORDS, k=rng.randint(8, 30)))}
                )
                turns.append(
                    {"from": "gpt", "value": " ".join(rng.choices(WORDS, k=rng.randint(20, 60)))}
                )
            f.write(json.dumps({"id": str(i), "conversations": turns}) + "\n")


# -- checks of the results --------------------------------------------------------------------


def compare_hidden_states(gen: Path, samples: int = 8) -> float:
    """Max relative error (Frobenius, per sample and layer) of vLLM's captured states against
    a transformers forward pass with hooks on the same decoder layers' outputs."""
    import torch
    from transformers import AutoModelForCausalLM

    cfg = json.loads((gen / "data_config.json").read_text())
    layer_ids = _layer_ids(cfg)
    model = AutoModelForCausalLM.from_pretrained(MODEL, dtype=torch.bfloat16).cuda().eval()
    grabbed: dict[int, torch.Tensor] = {}

    def hook(idx: int) -> Any:
        def fn(_m: Any, _inp: Any, out: Any) -> None:
            grabbed[idx] = (out[0] if isinstance(out, tuple) else out).detach()

        return fn

    for idx in layer_ids:
        model.model.layers[idx].register_forward_hook(hook(idx))
    worst = 0.0
    for i in range(samples):
        d = torch.load(gen / f"data_{i}.pt", weights_only=True)
        ids = d["input_ids"].cuda()[None]
        with torch.no_grad():
            model(input_ids=ids)
        for idx, got in zip(layer_ids, d["hidden_states"], strict=True):
            ref = grabbed[idx][0].float()
            err = (got.cuda().float() - ref).norm() / ref.norm()
            worst = max(worst, float(err))
    say(
        f"hidden states compared: {samples} samples x layers {layer_ids} (hidden {model.config.hidden_size})"
    )
    return worst


def _layer_ids(cfg: dict[str, Any]) -> list[int]:
    for key in ("layer_ids", "target_layer_ids"):
        for holder in (cfg, cfg.get("hidden_states") or {}, cfg.get("model") or {}):
            if isinstance(holder, dict) and holder.get(key):
                return list(holder[key])
    return [2, LAYERS // 2, LAYERS - 3, LAYERS - 1]


def losses(log: str) -> dict[int, dict[str, float]]:
    """epoch -> {train: mean train/loss, val: val/loss_epoch}, from speculators' metric lines."""
    out: dict[int, dict[str, list[float]]] = {}
    for line in log.splitlines():
        m = re.search(r"train/loss=([-\d.e+]+).*?epoch=(\d+)", line)
        if m:
            out.setdefault(int(m[2]), {}).setdefault("train", []).append(float(m[1]))
        m = re.search(r"val/loss_epoch=([-\d.e+]+).*?epoch=(\d+)", line)
        if m:
            out.setdefault(int(m[2]), {}).setdefault("val", []).append(float(m[1]))
    return {e: {k: statistics.fmean(v) for k, v in d.items()} for e, d in sorted(out.items())}


def last_run(step: str) -> dict[str, Any] | None:
    """The newest run of ``step`` as ``harness runs --json`` shows it."""
    r = harness("runs", "--json", name="harness runs --json", quiet=True)
    try:
        rows = [x for x in json.loads(r.out) if x["record"]["step"] == step]
    except (ValueError, KeyError, TypeError):
        return None
    return max(rows, key=lambda x: x["record"].get("created_at") or 0) if rows else None


def keep_log(step: str, tag: str) -> str:
    info = last_run(step)
    if not info:
        return ""
    log = Path(info["record"]["run_dir"]) / "log"
    if log.is_file():
        shutil.copy(log, LOGS / f"{tag}.log")
        pack()
        return log.read_text(errors="replace")
    return ""


def run_seconds(step: str) -> float | None:
    """How long the step itself ran, by its supervisor's clock."""
    info = last_run(step)
    try:
        return float(info["status"]["ended_at"]) - float(info["supervisor"]["started_at"])  # type: ignore[index]
    except (TypeError, KeyError, ValueError):
        return None


def vllm_line(log: str, pattern: str) -> str | None:
    m = re.search(pattern, log)
    return m.group(1) if m else None


# -- the run ------------------------------------------------------------------------------------


def fresh_dirs() -> None:
    """$OUT kept, the logs and the work folder emptied: each bench starts from nothing."""
    OUT.mkdir(parents=True, exist_ok=True)
    for d in (LOGS, WORK):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)


def main() -> int:
    fresh_dirs()
    say(f"e2e on {os.uname().nodename}: {PY}; repo {REPO}")
    if shutil.which("nvidia-smi"):
        smi = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        say(f"gpu: {smi.stdout.strip() or smi.stderr.strip()}")
    else:
        say("gpu: none (no nvidia-smi)")
    t0 = time.perf_counter()
    build_model()
    say(
        f"built tiny Llama ({LAYERS} layers, hidden 512) + 256-conversation dataset here: {time.perf_counter() - t0:.1f} s"
    )

    harness("hosts", "--check", "-t", "local", name="harness hosts --check")
    # a second run on the same machine starts from the pristine install as well
    harness("revert-patches", *PIPE[2:], name="revert-patches (start pristine)", quiet=True)
    r = harness(
        "check", "speculators", "--against", "vllm", "--json", *PIPE[2:], name="check (unpatched)"
    )
    try:
        rep = json.loads(r.out)
        errs = [f for f in rep["findings"] if f["severity"] == "error"]
        say(
            f"check (unpatched): {len(errs)} error(s) against vllm {rep['callees'].get('vllm')}: "
            + "; ".join(f"{f['file'].rsplit('/', 1)[-1]}:{f['line']} {f['category']}" for f in errs)
        )
        say(
            f"check (unpatched): baseline {rep.get('baseline')}, notes: {len(rep.get('notes') or [])}"
        )
    except (ValueError, KeyError) as exc:
        say(f"check (unpatched): unreadable JSON ({exc})")
    r = harness(*CHECK_PATCHED, *PIPE[2:], name="check --with-patches")
    for line in r.out.splitlines():
        if "with-patches" in line or "error(s)" in line:
            say(f"  {line.strip()}")

    # the unpatched install, as a user meets it: the failure summary instead of a scroll-back
    r = harness("run", "extract", "--force", *sets(), *PIPE, name="run extract --force (unpatched)")
    keep_log("extract", "unpatched-extract")
    (LOGS / "unpatched-summary.txt").write_text(r.err)
    for line in r.err.splitlines()[-14:]:
        say(f"  | {line}")

    r = harness("apply-patches", *PIPE[2:], name="apply-patches")
    say(f"  {r.out.strip().splitlines()[-1] if r.out.strip() else r.err.strip()[-200:]}")
    r = harness("patches", *PIPE[2:], name="patches", quiet=True)
    states = re.findall(
        r"^\s+(applied|skipped|applies cleanly|conflicts|applied by hand)\b\s+(\S+)", r.out, re.M
    )
    say("patches: " + ", ".join(f"{pid.split('-', 1)[0]} {st}" for st, pid in states))
    r = harness("report", "extract", *sets(), *PIPE, name="report extract")
    say(f"  {r.out.strip().splitlines()[0] if r.out.strip() else r.err.strip()[-200:]}")

    steps: dict[str, Cmd] = {}
    for step in ("prepare", "extract", "vocab", "train"):
        if left() < 60:
            say(f"{step}: skipped (time budget)")
            continue
        steps[step] = harness("run", step, *sets(), *PIPE, name=step, timeout=max(60, left() - 30))
        log = keep_log(step, step)
        if steps[step].code != 0:
            for line in steps[step].err.splitlines()[-12:]:
                say(f"  | {line}")
        own = run_seconds(step)
        if own is not None:
            say(f"  {step}: step {own:.1f} s, harness overhead {steps[step].secs - own:.1f} s")
        if step == "extract" and steps[step].code == 0:
            load = vllm_line(log, r"Model loading took ([\d.]+ GiB(?: memory)? and [\d.]+ seconds)")
            say(f"  model load: {load or 'not in log'}")
            m = re.findall(r"Generating hidden states:.*?(\d+)/(\d+) \[([\d:]+)<", log)
            if m:
                say(f"  extraction: {m[-1][0]}/{m[-1][1]} batches in {m[-1][2]}")
            gen = WORK / "data" / "gen"
            say(f"  hidden-state files: {len(list(gen.glob('data_*.pt')))}")
            try:
                say(f"hidden states max relative error: {compare_hidden_states(gen):.4f}")
            except Exception as exc:
                say(f"hidden states compare failed: {type(exc).__name__}: {exc}")
        if step == "train":
            per = losses(log)
            for e, d in per.items():
                say(
                    f"  epoch {e}: train loss {d.get('train', float('nan')):.4f}, val loss {d.get('val', float('nan')):.4f}"
                )
            vals = [d["val"] for d in per.values() if "val" in d]
            if len(vals) >= 2:
                say(
                    f"loss goes down: {'yes' if vals[-1] < vals[0] else 'no'} ({vals[0]:.4f} -> {vals[-1]:.4f})"
                )
            ck = WORK / "checkpoints" / "eagle3"
            saved = sorted(p.name for p in ck.iterdir()) if ck.is_dir() else []
            say(f"  checkpoints: {saved}")

    r = harness("runs", name="harness runs")
    for line in r.out.splitlines()[:8]:
        say(f"  | {line}")
    info = last_run("extract")
    if info:
        harness("logs", info["record"]["id"], "--tail", "3", name="harness logs --tail 3")

    # read before patching: the installed signature without importing vLLM, vs importing it
    ref = "vllm.v1.core.kv_cache_utils:get_kv_cache_config_from_groups"
    probes = [harness("probe", ref, "-t", "local", name="probe", quiet=True).secs for _ in range(3)]
    imp = run(
        [
            PY,
            "-c",
            "import inspect, vllm.v1.core.kv_cache_utils as m; "
            "print(inspect.signature(m.get_kv_cache_config_from_groups))",
        ],
        "python -c import",
        quiet=True,
    )
    say(
        f"harness probe {min(probes):.2f} s (cold {probes[0]:.2f} s) vs python -c 'import vllm...; inspect.signature' {imp.secs:.2f} s: {imp.secs / min(probes):.1f}x"
    )

    demos()
    say(f"e2e done, {DEADLINE - time.monotonic():.0f} s of the budget left")
    pack()
    return 0 if all(c.code == 0 for c in steps.values()) and len(steps) == 4 else 1


def demos() -> None:
    """Two more failures a user meets, if time is left: the series without its vLLM patches
    (only the transformers-5 one), and a pipeline without the spawn variable."""
    if left() < 150:
        say("demos: skipped (time budget)")
        return
    partial = WORK / "partial-patches"
    shutil.copytree(REPO / "patches", partial)
    series = partial / "speculators" / "0.3.0" / "series.toml"
    text = series.read_text()
    keep = text[text.index('[[patch]]\nfile = "0012') :]
    series.write_text(keep)
    harness("revert-patches", "--patches", str(REPO / "patches"), name="revert-patches")
    harness("apply-patches", "--patches", str(partial), name="apply-patches (0012 only)")
    r = harness(
        "run",
        "extract",
        "--force",
        "--kill-stale",
        *sets(),
        "--set",
        f"data={WORK}/data-partial",
        "--pipeline",
        str(REPO / "pipeline.toml"),
        "--patches",
        str(partial),
        name="run extract --force (vLLM patches missing)",
        timeout=min(240, left() - 60),
    )
    keep_log("extract", "unpatched-vllm-extract")
    (LOGS / "unpatched-vllm-summary.txt").write_text(r.err)
    for line in r.err.splitlines()[-12:]:
        say(f"  | {line}")
    harness("revert-patches", "--patches", str(partial), name="revert-patches (0012 only)")
    harness("apply-patches", *PIPE[2:], name="apply-patches (again)")
    if left() < 120:
        say("demo nospawn: skipped (time budget)")
        return
    nospawn = WORK / "nospawn.toml"
    nospawn.write_text(
        (REPO / "pipeline.toml")
        .read_text()
        .replace('env = { VLLM_WORKER_MULTIPROC_METHOD = "spawn" }', "")
    )
    r = harness(
        "run",
        "extract",
        "--kill-stale",
        *sets(),
        "--set",
        f"data={WORK}/data-nospawn",
        "--pipeline",
        str(nospawn),
        *PIPE[2:],
        name="run extract (no spawn variable)",
        timeout=min(200, left() - 20),
    )
    keep_log("extract", "nospawn-extract")
    (LOGS / "nospawn-summary.txt").write_text(r.err)
    for line in r.err.splitlines()[-8:]:
        say(f"  | {line}")


if __name__ == "__main__":
    sys.exit(main())
