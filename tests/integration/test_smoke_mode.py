"""``harness run STEP --smoke`` on a real interpreter with real transformers: the hook cuts what
every caller reads, only in that run, and the review knows when a smoke run is out of date.

The step is the part of speculators' extraction that decides the layers: it reads the model's
config with ``AutoConfig.from_pretrained`` and picks ``[2, L//2, L-3, L-1]``. Configs are
transformers' own ``LlamaConfig`` / ``DeepseekV3Config`` saved by transformers 4.57.6.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.pipvenvs import TRANSFORMERS_REQS, PipVenv, built_or_fail, ensure_pip_venv

STEP = """\
import json, sys
from transformers import AutoConfig
c = AutoConfig.from_pretrained(sys.argv[1])
n = c.num_hidden_layers
ids = [2, n // 2, n - 3, n - 1]
assert all(0 <= i < n for i in ids), f"layer ids {ids} out of range for {n} layers"
out = {"layers": n, "ids": ids, "dense": getattr(c, "first_k_dense_replace", None),
       "experts": getattr(c, "n_routed_experts", None), "samples": int(sys.argv[3])}
open(sys.argv[2], "w").write(json.dumps(out))
print("picked", ids, "of", n)
"""

PIPELINE = """\
[params]
model = "m"
out = "{workdir}/real-out.json"
n = 1000
[steps.pick]
command = ["{python}", "{workdir}/pick.py", "{model}", "{out}", "{n}"]
smoke = { samples = "n", layers = 3, params = { out = "{smoke_dir}/out.json" } }
[steps.plain]
command = ["{python}", "-c", "print(1)"]
"""


def write_pipeline(folder: Path) -> None:
    (folder / "pipeline.toml").write_text(PIPELINE)
    (folder / "pick.py").write_text(STEP)


@pytest.fixture(scope="module")
def tf_venv() -> PipVenv:
    return built_or_fail(ensure_pip_venv, "transformers", TRANSFORMERS_REQS)


def save_config(venv: PipVenv, folder: Path, kind: str) -> Path:
    """A real config.json, written by transformers itself (no weights: smoke reads none)."""
    import subprocess

    code = {
        "llama": "from transformers import LlamaConfig as C; C(num_hidden_layers=32)",
        "deepseek": "from transformers import DeepseekV3Config as C; "
        "C(num_hidden_layers=61, first_k_dense_replace=3, n_routed_experts=256)",
    }[kind]
    folder.mkdir(parents=True)
    subprocess.run(
        [str(venv.python), "-c", f"{code.split(';')[0]}; {code.split(';', 1)[1].strip()}"
         f".save_pretrained({str(folder)!r})"], check=True, capture_output=True,
    )  # fmt: skip
    return folder


def runs(env: dict[str, str], cwd: Path, target: str) -> list[dict]:
    r = run_cli("runs", "--json", "-t", target, env=env, cwd=cwd)
    assert r.code == 0, r.err
    return json.loads(r.out)


def test_smoke_run_cuts_layers_for_every_reader_only_in_that_run(
    tf_venv: PipVenv, cli_env: dict[str, str], tmp_path: Path
) -> None:
    write_pipeline(tmp_path)
    llama = save_config(tf_venv, tmp_path / "llama", "llama")
    t = ("-t", f"venv:{tf_venv.root}", "--patches", str(tmp_path / "no-patches"))
    args = (*t, "--set", f"model={llama}")

    r = run_cli("run", "pick", "--smoke", "--smoke-layers", "2", *args, env=cli_env, cwd=tmp_path)
    assert r.code == 0, r.err
    assert "picked [2, 1, 0, 2] of 3" in r.out  # the step's floor (3) beats --smoke-layers 2
    assert "harness smoke: llama at" in r.out and "num_hidden_layers 32 -> 3" in r.out
    (info,) = runs(cli_env, tmp_path, t[1])
    run_dir = Path(info["record"]["run_dir"])
    assert json.loads((run_dir / "smoke" / "out.json").read_text())["samples"] == 4
    assert not (tmp_path / "real-out.json").exists()  # never over the real output
    assert not (run_dir / "smoke-hook").exists()  # the hook is gone with the run
    assert info["record"]["smoke"]["layers"] == 3
    r = run_cli("runs", "-t", t[1], env=cli_env, cwd=tmp_path)
    assert "pick (smoke)" in r.out

    # the same step without --smoke: the whole model, the real output, no hook in sight
    r = run_cli("run", "pick", *args, env=cli_env, cwd=tmp_path)
    assert r.code == 0, r.err
    assert "picked [2, 16, 29, 31] of 32" in r.out and "harness smoke" not in r.out
    assert json.loads((tmp_path / "real-out.json").read_text())["layers"] == 32


def test_moe_keeps_an_expert_layer(
    tf_venv: PipVenv, cli_env: dict[str, str], tmp_path: Path
) -> None:
    write_pipeline(tmp_path)
    ds = save_config(tf_venv, tmp_path / "ds", "deepseek")
    r = run_cli("run", "pick", "--smoke", "-t", f"venv:{tf_venv.root}", "--set", f"model={ds}",
                "--patches", str(tmp_path / "none"), env=cli_env, cwd=tmp_path)  # fmt: skip
    assert r.code == 0, r.err
    (info,) = runs(cli_env, tmp_path, f"venv:{tf_venv.root}")
    got = json.loads((Path(info["record"]["run_dir"]) / "smoke" / "out.json").read_text())
    assert got == {"layers": 3, "ids": [2, 1, 0, 2], "dense": 2, "experts": 256, "samples": 4}
    assert "first_k_dense_replace 3 -> 2" in r.out


def test_a_step_without_a_smoke_mode_is_refused_before_anything_runs(
    tf_venv: PipVenv, cli_env: dict[str, str], tmp_path: Path
) -> None:
    write_pipeline(tmp_path)
    r = run_cli("run", "plain", "--smoke", "-t", f"venv:{tf_venv.root}", env=cli_env, cwd=tmp_path)
    assert r.code == 2
    assert "pipeline.toml:8: steps.plain: step 'plain' declares no smoke mode" in r.err
    assert not (tmp_path / ".harness").exists()


def test_review_says_when_the_last_green_smoke_run_is_out_of_date(
    tf_venv: PipVenv, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """The smoke run vouches for the dist versions it ran with; a change is said, and
    --require-smoke makes it a blocker (``harness run`` refuses)."""
    import shutil

    write_pipeline(tmp_path)
    llama = save_config(tf_venv, tmp_path / "llama", "llama")
    venv = tmp_path / "venv"  # a private copy: this test changes what is installed
    shutil.copytree(tf_venv.root, venv, symlinks=True)
    t = ("-t", f"venv:{venv}", "--patches", str(tmp_path / "none"), "--set", f"model={llama}")

    def smoke_reasons(*extra: str) -> tuple[int, list[tuple[str, str]]]:
        r = run_cli("report", "pick", "--format", "json", *t, *extra, env=cli_env, cwd=tmp_path)
        data = json.loads(r.out)
        return r.code, [(x["severity"], x["text"]) for x in data["reasons"] if "smoke" in x["text"]]

    assert smoke_reasons() == (0, [("warning", "step pick has not been smoke-tested here")])
    assert run_cli("run", "pick", "--smoke", *t, env=cli_env, cwd=tmp_path).code == 0
    assert smoke_reasons() == (0, [])

    site = next((venv / "lib").glob("python3*/site-packages"))
    info = site / "vllm-0.20.2.dist-info"  # the environment changes under the pipeline
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: vllm\nVersion: 0.20.2\n\n")
    code, said = smoke_reasons()
    assert code == 0 and len(said) == 1 and said[0][0] == "warning"
    assert said[0][1].startswith("step pick not smoke-tested since vllm absent -> 0.20.2 ")
    code, said = smoke_reasons("--require-smoke")
    assert code == 1 and said[0][0] == "blocker"
    r = run_cli("run", "pick", "--require-smoke", *t, env=cli_env, cwd=tmp_path)
    assert r.code != 0 and "not launching pick" in r.err
