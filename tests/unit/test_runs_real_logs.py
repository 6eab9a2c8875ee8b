"""Phases and failure summaries on the real logs of the H200 end-to-end run (bench/gpu/e2e.py).

The fixtures under ``tests/fixtures/logs/h200-vllm-0.20.2/`` are the step logs exactly as
``harness run`` recorded them there: speculators 0.3.0 on vLLM 0.20.2 with the series applied
(prepare, extract, vocab, train), the unpatched install, the install without its vLLM patches,
and a pipeline without the spawn variable. Each is fed to the recogniser the way a live log
arrives: in chunks of any size, ``\\r`` progress bars included.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.runs.follow.failure import summarize
from harness.runs.follow.phases import PhaseTracker
from harness.runs.record.models import Phase

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "logs" / "h200-vllm-0.20.2"
GEN = "speculators/data_generation/vllm_hidden_states_generator.py"


def log(name: str) -> str:
    return (LOGS / name).read_text(encoding="utf-8", errors="replace")


def phases(text: str, chunk: int) -> list[Phase]:
    """Every distinct phase a live view would have shown, fed ``chunk`` characters at a time."""
    tracker = PhaseTracker(interval=0)
    seen: list[Phase] = []
    for i in range(0, len(text), chunk):
        tracker.update(text[i : i + chunk])
        if tracker.phase is not None and (not seen or seen[-1] != tracker.phase):
            seen.append(tracker.phase)
    tracker.flush()
    if tracker.phase is not None and seen[-1] != tracker.phase:
        seen.append(tracker.phase)
    return seen


@pytest.mark.parametrize("chunk", [1, 97])
def test_extract_walks_through_load_kv_cache_batches_and_saving(chunk: int) -> None:
    seen = phases(log("extract.log"), chunk)
    names = [p.name for p in seen]
    for earlier, later in [
        ("preprocessing", "starting vLLM"),
        ("starting vLLM", "loading weights"),
        ("loading weights", "weights loaded"),
        ("weights loaded", "KV cache"),
        ("KV cache", "extracting hidden states"),
        ("extracting hidden states", "saving hidden states"),
    ]:
        assert names.index(earlier) < names.index(later), names
    assert Phase("weights loaded", detail="0.05 GiB in 0.332009 s") in seen
    assert Phase("extracting hidden states", 16, 16) in seen  # 256 samples, batch 16
    assert seen[-1] == Phase("saving hidden states", 256, 256)


def test_a_burst_still_ends_on_the_latest_phase() -> None:
    """A whole log at once (a late attach): the intermediate phases are skipped, not the end."""
    assert phases(log("extract.log"), 1 << 20)[-1] == Phase("saving hidden states", 256, 256)


@pytest.mark.parametrize("chunk", [1, 211])
def test_training_shows_the_step_inside_the_epoch_and_the_losses(chunk: int) -> None:
    seen = phases(log("train.log"), chunk)
    training = [p for p in seen if p.name == "training"]
    # the first epoch's steps are counted before any total is known (8 metric records) ...
    first = [p for p in training if (p.detail or "").startswith("epoch 1/4 · loss")]
    assert [p.done for p in first] == list(range(1, 9)) and {p.total for p in first} == {None}
    assert first[0].detail == "epoch 1/4 · loss 0.089"
    # ... later epochs are measured against the one before (the packing sampler varies it)
    assert Phase("training", 5, 8, "epoch 2/4 · loss 0.039 · val loss 0.046") in training
    # the validation loss of each epoch, as speculators logged it, and the last one at the end
    details = " | ".join(p.detail or "" for p in seen)
    for val in ("0.046", "0.036", "0.033"):
        assert f"val loss {val}" in details
    assert seen[-1] == Phase("validated", detail="epoch 4/4 · loss 0.023 · val loss 0.031")


def test_training_progress_survives_any_chunking() -> None:
    """Whatever the chunk sizes, the counts end the same: 4 epochs, 9 steps in the last."""
    text = log("train.log")
    ends = set()
    for chunk in (1, 2, 13, 1000, len(text)):
        tracker = PhaseTracker(interval=0)
        for i in range(0, len(text), chunk):
            tracker.update(text[i : i + chunk])
        t = tracker.training
        ends.add((t.epoch, t.epochs, t.step, t.per_epoch, t.loss, t.val_loss))
    assert ends == {(4, 4, 9, 9, "0.023", "0.031")}


def test_prepare_and_vocab() -> None:
    assert phases(log("prepare.log"), 64)[-1] == Phase("Counting token frequencies", 256, 256)
    assert phases(log("vocab.log"), 64)[-1] == Phase(
        "vocab maps saved", detail="/root/e2e/data/vocab/d2t.npy"
    )


def test_unpatched_install_fails_at_import_with_the_series_named() -> None:
    s = summarize(log("unpatched-extract.log"), target="gpu")
    assert s is not None and s.root_cause is None
    assert s.exc_type == "pydantic.errors.PydanticUndefinedAnnotation"
    assert s.message == "name 'torch' is not defined"
    assert s.caller is not None
    assert s.caller.file.endswith("speculators/utils/pydantic_utils.py") and s.caller.line == 35
    assert s.hint is not None and "transformers 5" in s.hint
    assert s.commands == ("harness patches -t gpu", "harness check speculators -t gpu")


def test_missing_vllm_patches_name_the_call_site_and_the_callee() -> None:
    """vLLM's configs are pydantic dataclasses: a missing argument is a ValidationError."""
    s = summarize(log("vllm-patches-missing-extract.log"), target="gpu")
    assert s is not None
    assert s.exc_type == "pydantic_core._pydantic_core.ValidationError"
    assert s.message == "1 validation error for SchedulerConfig"
    assert s.details[0] == "is_encoder_decoder"
    assert s.details[1].startswith("  Field required [type=missing, input_value=ArgsKwargs((), ")
    assert s.caller is not None
    assert s.caller.file.endswith(GEN) and s.caller.line == 194
    assert s.caller.code == "scheduler_config=SchedulerConfig("
    mod = "speculators.data_generation.vllm_hidden_states_generator"
    assert s.callee == f"{mod}:SchedulerConfig"
    assert s.commands == (
        f"harness probe {mod}:SchedulerConfig -t gpu",
        "harness check speculators -t gpu",
    )
    assert s.hint is not None and "requires 'is_encoder_decoder'" in s.hint


def test_forked_workers_get_the_spawn_hint_under_the_wrapper() -> None:
    s = summarize(log("no-spawn-extract.log"), target="gpu")
    assert s is not None and s.root_cause is not None
    assert "WorkerProc initialization failed" in s.message  # vLLM's wrapper, kept as final
    cause = s.root_cause
    assert cause.exc_type == "RuntimeError"
    assert cause.message.startswith("Cannot re-initialize CUDA in forked subprocess")
    assert cause.hint is not None and 'VLLM_WORKER_MULTIPROC_METHOD = "spawn"' in cause.hint


def test_vocab_on_a_kimi_folder_points_at_its_text_view() -> None:
    """speculators' build_vocab_mapping.py on a Kimi-K2.5 checkpoint (H200, vLLM 0.26.0,
    transformers 5.17, 2026-12-01): the config has no top-level vocab_size."""
    text = (LOGS.parent / "h200-vllm-0.26.0-kimi" / "vocab-no-view.log").read_text()
    s = summarize(text, target="gpu", step="vocab")
    assert s is not None and s.exc_type == "AttributeError"
    assert s.caller is not None and s.caller.file.endswith("scripts/build_vocab_mapping.py")
    assert s.caller.line == 89
    assert s.commands == (
        "harness run text-view -t gpu",
        "harness run vocab -t gpu --set verifier={text_view}",
    )
    assert s.hint is not None and "Kimi_K25Config has no top-level vocab_size" in s.hint
