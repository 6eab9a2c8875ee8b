"""Failure summaries from log tails: the final exception, its frames, root causes, the hint."""

# ruff: noqa: E501 -- the fixtures are real log lines, as long as vLLM writes them

from __future__ import annotations

import pytest

from harness.runs.follow.failure import clean_line, module_of, summarize
from harness.runs.record.models import FailureSummary, Frame

SP = "/root/venv/lib/python3.12/site-packages"

TYPEERROR_FROM_LIBRARY = f"""\
INFO 01-07 14:22:33 [__init__.py:216] Automatically detected platform cuda.
Traceback (most recent call last):
  File "/root/speculators/scripts/data_generation_offline.py", line 301, in <module>
    main()
  File "/root/speculators/scripts/data_generation_offline.py", line 296, in main
    num_saved = generate_and_save_hidden_states(args, dataset)
                ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "{SP}/speculators/data_generation/vllm_hidden_states_generator.py", line 125, in __init__
    self.scheduler_config = SchedulerConfig(
                            ^^^^^^^^^^^^^^^^
TypeError: SchedulerConfig.__init__() got an unexpected keyword argument 'is_encoder_decoder'
"""

VLLM_WORKER_ROOT_CAUSE = f"""\
(VllmWorker TP0 pid=4711) ERROR 01-07 14:22:33 [multiproc_executor.py:597] WorkerProc failed to start.
(VllmWorker TP0 pid=4711) ERROR 01-07 14:22:33 [multiproc_executor.py:597] Traceback (most recent call last):
(VllmWorker TP0 pid=4711) ERROR 01-07 14:22:33 [multiproc_executor.py:597]   File "{SP}/vllm/v1/executor/multiproc_executor.py", line 571, in worker_main
(VllmWorker TP0 pid=4711) ERROR 01-07 14:22:33 [multiproc_executor.py:597]     worker = WorkerProc(*args, **kwargs)
(VllmWorker TP0 pid=4711) ERROR 01-07 14:22:33 [multiproc_executor.py:597]   File "{SP}/vllm/v1/worker/gpu_worker.py", line 250, in load_model
(VllmWorker TP0 pid=4711) ERROR 01-07 14:22:33 [multiproc_executor.py:597]     self.model_runner.load_model(eep_scale_up=eep_scale_up)
(VllmWorker TP0 pid=4711) ERROR 01-07 14:22:33 [multiproc_executor.py:597] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB.
Traceback (most recent call last):
  File "/root/x.py", line 3, in <module>
    llm = LLM(model="m")
  File "{SP}/vllm/v1/engine/core_client.py", line 1, in __init__
    raise RuntimeError("Engine core initialization failed. See root cause above.")
RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {{}}
"""

CHAINED = """\
Traceback (most recent call last):
  File "/a.py", line 1, in f
    x = {}["k"]
KeyError: 'k'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/a.py", line 3, in <module>
    f()
  File "/a.py", line 2, in f
    raise ValueError("bad config")
ValueError: bad config
"""


def test_typeerror_from_a_library_frame_gives_probe_and_check_commands() -> None:
    s = summarize(TYPEERROR_FROM_LIBRARY, target="gpu")
    assert s is not None
    assert s.exc_type == "TypeError"
    assert "unexpected keyword argument 'is_encoder_decoder'" in s.message
    assert [f.func for f in s.frames] == ["<module>", "main", "__init__"]
    assert s.frames[-1] == Frame(
        f"{SP}/speculators/data_generation/vllm_hidden_states_generator.py",
        125,
        "__init__",
        "self.scheduler_config = SchedulerConfig(",
    )
    assert s.commands == (
        "harness probe speculators.data_generation.vllm_hidden_states_generator:SchedulerConfig"
        " -t gpu",
        "harness check speculators -t gpu",
    )
    assert s.hint is not None and "API mismatch" in s.hint


def test_a_generated_init_frame_is_not_the_caller() -> None:
    text = TYPEERROR_FROM_LIBRARY.replace(
        "TypeError:", '  File "<string>", line 3, in __init__\nTypeError:'
    )
    s = summarize(text, target="gpu")
    assert s is not None and s.frames[-1].file == "<string>"
    assert s.commands[1] == "harness check speculators -t gpu"


def test_typeerror_in_the_users_own_script_gets_no_probe_command() -> None:
    text = TYPEERROR_FROM_LIBRARY.replace(f"{SP}/speculators/data_generation", "/root/mine")
    s = summarize(text)
    assert s is not None and s.commands == () and s.hint and "different signature" in s.hint


def test_wrapper_error_keeps_the_worker_root_cause() -> None:
    s = summarize(VLLM_WORKER_ROOT_CAUSE)
    assert s is not None
    assert s.exc_type == "RuntimeError" and "See root cause above" in s.message
    assert s.root_cause is not None
    assert s.root_cause.exc_type == "torch.OutOfMemoryError"
    assert s.root_cause.message.startswith("CUDA out of memory")
    assert [f.func for f in s.root_cause.frames] == ["worker_main", "load_model"]


def test_chained_exceptions_report_the_last() -> None:
    s = summarize(CHAINED)
    assert s is not None and (s.exc_type, s.message) == ("ValueError", "bad config")
    assert s.root_cause is None and s.commands == ()


@pytest.mark.parametrize(
    "text",
    [
        "",
        "all good\nexit 3\n",
        "Traceback (most recent call last):\n",  # cut off before any frame
        'Traceback (most recent call last):\n  File "/a.py", line 1, in f\n',
    ],
)
def test_no_complete_traceback_gives_none(text: str) -> None:
    assert summarize(text) is None


def test_only_the_last_frames_are_kept() -> None:
    frames = "".join(f'  File "/a.py", line {i}, in f{i}\n    call()\n' for i in range(20))
    s = summarize("Traceback (most recent call last):\n" + frames + "RecursionError: deep\n")
    assert s is not None and [f.line for f in s.frames] == [15, 16, 17, 18, 19]


@pytest.mark.parametrize(
    ("line", "want"),
    [
        ("(VllmWorker TP0 pid=1) ERROR 01-07 14:22:33 [x.py:5] Traceback", "Traceback"),
        ("(EngineCore_DP0 pid=9) INFO 01-07 14:22:33.123 [c.py:1] hi", "hi"),
        ("ERROR 2025-01-07 14:22:33,123 boom", "boom"),
        ('  File "/a.py", line 1, in f', '  File "/a.py", line 1, in f'),
        ("plain\r", "plain"),
        ('[rank0]:   File "/t.py", line 2, in main', '  File "/t.py", line 2, in main'),
        ("[rank12]: ValueError: x", "ValueError: x"),
        ("[rank] not a rank prefix", "[rank] not a rank prefix"),
    ],
)
def test_clean_line(line: str, want: str) -> None:
    assert clean_line(line) == want


@pytest.mark.parametrize(
    ("path", "want"),
    [
        (f"{SP}/vllm/v1/core/kv_cache_utils.py", ("vllm.v1.core.kv_cache_utils", "vllm")),
        (f"{SP}/vllm/config/__init__.py", ("vllm.config", "vllm")),
        ("/usr/lib/python3/dist-packages/yaml/x.py", ("yaml.x", "yaml")),
        ("/root/scripts/train.py", None),
        (f"{SP}/foo.so", None),
    ],
)
def test_module_of(path: str, want: tuple[str, str] | None) -> None:
    assert module_of(path) == want


def test_summary_round_trips() -> None:
    for text in (TYPEERROR_FROM_LIBRARY, VLLM_WORKER_ROOT_CAUSE):
        s = summarize(text, "gpu")
        assert s is not None
        assert FailureSummary.from_dict(s.to_dict()) == s


# the H200 run of 2026-12-01 (bench/results/gpu-kimi-h200.txt): vocab and train on the Kimi folder
KIMI_VOCAB = f"""\
Traceback (most recent call last):
  File "/root/pack/speculators/scripts/build_vocab_mapping.py", line 131, in <module>
    main()
  File "/root/pack/speculators/scripts/build_vocab_mapping.py", line 101, in main
    target_vocab_size = get_target_vocab_size(args)
  File "/root/pack/speculators/scripts/build_vocab_mapping.py", line 89, in get_target_vocab_size
    return config.vocab_size
  File "{SP}/transformers/configuration_utils.py", line 312, in __getattribute__
    return super().__getattribute__(key)
AttributeError: 'Kimi_K25Config' object has no attribute 'vocab_size'
"""
KIMI_TRAIN_TF4 = f"""\
[rank0]: Traceback (most recent call last):
[rank0]:   File "/root/pack/speculators/scripts/train.py", line 125, in main
[rank0]:     transformer_layer_config = create_transformer_layer_config(
[rank0]:   File "{SP}/transformers/models/auto/configuration_auto.py", line 1300, in from_pretrained
[rank0]:     trust_remote_code = resolve_trust_remote_code(
[rank0]: ValueError: The repository /root/vb/kimi contains custom code which must be executed to correctly load the model. You can inspect the repository content at /root/vb/kimi .
"""


@pytest.mark.parametrize(
    ("text", "hinted"),
    [
        (KIMI_VOCAB, True),
        (KIMI_TRAIN_TF4, True),
        # the same exception types for other reasons: no such hint
        (KIMI_VOCAB.replace("'vocab_size'", "'use_cache_v2'"), False),
        (KIMI_VOCAB.replace("Kimi_K25Config' object", "Tokenizer' object"), False),
        (KIMI_TRAIN_TF4.replace("contains custom code", "is not a folder"), False),
    ],
)
def test_a_wrappers_config_read_at_the_top_level_points_at_the_text_view(
    text: str, hinted: bool
) -> None:
    s = summarize(text, target="gpu")
    assert s is not None
    assert (s.commands[:1] == ("harness run text-view -t gpu",)) is hinted
    if hinted:
        assert s.hint is not None and "text_config" in s.hint
        assert s.commands[1] == "harness run STEP -t gpu --set verifier={text_view}"
        assert s.caller is not None
        assert s.caller.file.rsplit("/", 1)[-1] in ("build_vocab_mapping.py", "train.py")
