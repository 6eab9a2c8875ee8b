"""Phase recognition from real vLLM 0.11/0.16 and speculators 0.3.0 log lines (pure)."""

from __future__ import annotations

import pytest

from harness.runs.follow.phases import PhaseTracker, recognise, scan
from harness.runs.record.models import Phase

W = "(VllmWorker TP0 pid=4711) INFO 01-07 14:22:33 [gpu_model_runner.py:2602] "
E = "(EngineCore_DP0 pid=4700) INFO 01-07 14:22:33 [core.py:210] "

CASES = [
    # vLLM weights: the bar_format of vllm/model_executor/model_loader/weight_utils.py
    (
        "Loading safetensors checkpoint shards:  45% Completed | 29/64 [00:10<00:12,  2.50it/s]",
        Phase("loading weights", 29, 64),
    ),
    (
        W + "Loading safetensors checkpoint shards:   0% Completed | 0/4 [00:00<?, ?it/s]",
        Phase("loading weights", 0, 4),
    ),
    (
        "Loading safetensors checkpoint shards (eager): 100% Completed | 4/4 [00:03<00:00]",
        Phase("loading weights", 4, 4),
    ),
    (
        "Loading pt checkpoint shards:  50% Completed | 1/2 [00:01<00:01,  1.00s/it]",
        Phase("loading weights", 1, 2),
    ),
    (
        W + "Starting to load model meta-llama/Llama-3.1-8B-Instruct...",
        Phase("loading model", detail="meta-llama/Llama-3.1-8B-Instruct"),
    ),
    (
        W + "Model loading took 14.9889 GiB and 18.215671 seconds",
        Phase("weights loaded", detail="14.9889 GiB in 18.215671 s"),
    ),
    (
        "INFO 01-07 14:22:33 [default_loader.py:268] Loading weights took 17.53 seconds",
        Phase("weights loaded", detail="17.53 s"),
    ),
    (
        "Memory profiling takes 3.21 seconds. Total non-torch memory: 0.5GiB",
        Phase("profiling memory"),
    ),
    # KV cache set-up (vllm/v1/worker/gpu_worker.py, v1/core/kv_cache_utils.py)
    (
        W + "Available KV cache memory: 52.31 GiB",
        Phase("KV cache", detail="52.31 GiB available"),
    ),
    (
        E + "GPU KV cache size: 428,528 tokens",
        Phase("KV cache", detail="428,528 tokens"),
    ),
    (
        E + "Maximum concurrency for 2,048 tokens per request: 209.24x",
        Phase("KV cache", detail="209.24x concurrency at 2,048 tokens"),
    ),
    ("INFO [executor_base.py:1] # GPU blocks: 26783", Phase("KV cache", detail="26783 blocks")),
    ("  Initializing KV cache on all workers...", Phase("KV cache")),
    (
        "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):  45%|████▌     | 30/67 "
        "[00:03<00:04,  9.1it/s]",
        Phase("capturing CUDA graphs", 30, 67),
    ),
    (
        W + "Graph capturing finished in 12 secs, took 0.62 GiB",
        Phase("CUDA graphs captured", detail="12 s"),
    ),
    (
        E + "init engine (profile, create kv cache, warmup model) took 61.37 seconds",
        Phase("engine ready", detail="start-up took 61.37 s"),
    ),
    # speculators 0.3.0 data generation (scripts/data_generation_offline.py)
    (
        "Generating hidden states:  12%|█▏        | 75/625 [01:02<07:38,  1.20it/s]",
        Phase("extracting hidden states", 75, 625),
    ),
    (
        "Saving files:  40%|████      | 2000/5000 [00:10<00:15]",
        Phase("saving hidden states", 2000, 5000),
    ),
    ("  Resuming: 1200 files already exist", Phase("resuming", detail="1200 files done")),
    ("▸ Initializing vLLM hidden states generator", Phase("starting vLLM")),
    ("  Starting dataset preprocessing", Phase("preprocessing")),
    ("▸ Tokenizing and building dataset", Phase("tokenising")),
    (
        "Map (num_proc=8):  45%|████▌     | 2250/5000 [00:01<00:01, 1800.00 examples/s]",
        Phase("tokenising", 2250, 5000),
    ),
    ("▸ Computing token frequency distribution", Phase("token frequencies")),
    (
        "INFO: Saved d2t to vocab/d2t.npy (shape: torch.Size([32000]))",
        Phase("vocab maps saved", detail="vocab/d2t.npy"),
    ),
    # speculators training (speculators/train/trainer.py)
    ("INFO Training epoch 2/10 started", Phase("training", detail="epoch 2/10")),
    ("INFO Validation epoch 2/10 started", Phase("validating", detail="epoch 2/10")),
    ("Epoch 1:  30%|███       | 300/1000 [01:00<02:20]", Phase("training", 300, 1000, "epoch 1")),
    # the supervisor's line before a step's output check (verify)
    ("harness: verifying the output: python check.py --data d", Phase("verifying the output")),
    # any other tqdm bar
    ("Downloading shards:  50%|█████     | 1/2 [00:30<00:30]", Phase("Downloading shards", 1, 2)),
    # nothing
    ("hello world", None),
    (W + "Using FlashAttention backend.", None),
    ("100% done", None),
]  # fmt: skip


@pytest.mark.parametrize(("line", "want"), CASES, ids=[c[0][-40:] for c in CASES])
def test_recognise(line: str, want: Phase | None) -> None:
    assert recognise(line) == want


def test_scan_returns_the_latest_phase_of_a_chunk() -> None:
    text = (
        "noise\n"
        + CASES[0][0]
        + "\n"
        + "x" * 10_000
        + "\n"
        + "\r".join(f"Generating hidden states: {i}%|#| {i}/100 [00:01<00:01]" for i in range(100))
        + "\rtrailing"
    )
    assert scan(text) == Phase("extracting hidden states", 99, 100)
    assert scan("no phase here\n" * 1000) is None


def test_scan_is_cheap_on_a_huge_line() -> None:
    huge = "y" * 50_000_000 + " Loading weights took 3.50 seconds"
    assert scan(huge) == Phase("weights loaded", detail="3.50 s")


def test_tracker_reports_transitions_and_joins_split_lines() -> None:
    t = PhaseTracker(interval=0)
    line = W + "Model loading took 1.5 GiB and 2.0 seconds\n"
    assert t.update(line[:30]) is False  # cut in the middle: not recognisable yet
    assert t.update(line[30:]) is True
    assert t.phase == Phase("weights loaded", detail="1.5 GiB in 2.0 s")
    assert t.update("Available KV cache memory: 3.00 GiB\n") is True
    assert t.update("GPU KV cache size: 10 tokens\n") is False  # same phase, new detail
    assert t.phase is not None and t.phase.detail == "10 tokens"


def test_tracker_scans_at_most_every_interval_and_only_a_window() -> None:
    now = [0.0]
    t = PhaseTracker(interval=0.1, window=1000, clock=lambda: now[0])
    assert t.update("Available KV cache memory: 3.00 GiB\n") is True  # first scan: at once
    assert t.update("Memory profiling takes 1.00 seconds\n") is False  # too soon
    assert t.phase == Phase("KV cache", detail="3.00 GiB available")
    t.update("Loading weights took 2.00 seconds\n" + "noise\n" * 1000)  # buried in a burst
    now[0] = 0.2
    assert t.update("GPU KV cache size: 5 tokens\n") is False  # same name as before
    assert t.phase == Phase("KV cache", detail="5 tokens")  # the latest wins; the buried skipped
    t.update("init engine (profile, create kv cache, warmup model) took 9.0 seconds\n")
    assert t.flush() is True and t.phase is not None and t.phase.name == "engine ready"


def test_a_rule_fires_only_on_lines_holding_its_needle() -> None:
    """A rule cannot pass its table test yet never fire live: recognise() applies a rule
    only where the live prefilter (``scan``) would look, so a wrong needle fails the table."""
    import re

    from harness.runs.follow.phases import NEEDLES, RULES, Rule

    wrong = Rule(("no such words",), re.compile(r"Memory profiling takes"), lambda m: Phase("x"))
    assert wrong.match("Memory profiling takes 3.1 seconds") is None
    assert all(n in NEEDLES for rule in RULES for n in rule.needles)
    with pytest.raises(ValueError):
        Rule((), re.compile("x"), lambda m: Phase("x"))


@pytest.mark.parametrize("line", [line for line, want in CASES if want is not None])
def test_every_recognised_line_is_found_by_the_prefilter(line: str) -> None:
    """What recognise() finds in a line, scan() finds in a log made of it."""
    assert scan(f"noise\n{line}\nmore noise") == recognise(line)
