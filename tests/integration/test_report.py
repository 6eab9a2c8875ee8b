"""`harness report` on a venv "container" over loopback sshd: not ready -> apply -> ready."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.browser import inner_text
from tests.support.cli import run_cli
from tests.support.sshd import SshServer
from tests.support.wheels import SeedVenv

REPO = Path(__file__).resolve().parents[2]
GEN = "speculators/data_generation/vllm_hidden_states_generator.py"


@pytest.fixture
def box_env(
    sshd: SshServer, fresh_venv: Callable[..., SeedVenv], tmp_path: Path, cli_env: dict[str, str]
) -> dict[str, str]:
    venv = fresh_venv()
    hosts = tmp_path / "hosts.toml"
    hosts.write_text('default = "box"\n' + sshd.host_entry("box", python=str(venv.python)))
    return {**cli_env, "HARNESS_HOSTS": str(hosts)}


def report(env: dict[str, str], *args: str) -> tuple[int, dict]:
    r = run_cli("report", "--format", "json", "--patches", str(REPO / "patches"), *args, env=env)
    assert r.code in (0, 1), r.err
    return r.code, json.loads(r.out)


def test_not_ready_before_patches_then_ready_after(box_env: dict[str, str], tmp_path: Path) -> None:
    code, data = report(box_env)
    assert (code, data["verdict"]) == (1, "not ready")
    blockers = [r["text"] for r in data["reasons"] if r["severity"] == "blocker"]
    assert any("not applied" in b for b in blockers)
    for line, words in ((136, "kv_cache_specs"), (148, "block_size"), (194, "is_encoder_decoder")):
        assert any(b.startswith(f"{GEN}:{line}:") and words in b for b in blockers)
    assert data["facts"]["dists"]["vllm"] == "0.16.0"
    page = tmp_path / "before.html"
    r = run_cli(
        "report",
        "--format",
        "html",
        "-o",
        str(page),
        "--patches",
        str(REPO / "patches"),
        env=box_env,
    )
    assert r.code == 1
    seen = inner_text(page)
    assert "Run review: not ready" in seen
    assert "+            kv_cache_groups=kv_cache_groups," not in seen  # only context there
    assert "-            kv_cache_specs=kv_cache_spec," in seen  # the diff, rendered
    assert (
        "+        self.tokenizer = AutoTokenizer.from_pretrained(model_path, "
        "trust_remote_code=True)" in seen
    )

    applied = run_cli("apply-patches", "--patches", str(REPO / "patches"), env=box_env)
    assert applied.code == 0, applied.err
    code, data = report(box_env)
    assert (code, data["verdict"]) == (0, "ready"), data["reasons"]
    assert not [r for r in data["reasons"] if r["severity"] == "blocker"]
    page = tmp_path / "after.html"
    assert (
        run_cli(
            "report",
            "--format",
            "html",
            "-o",
            str(page),
            "--patches",
            str(REPO / "patches"),
            env=box_env,
        ).code
        == 0
    )
    assert "Run review: ready" in inner_text(page)
    md = run_cli("report", "--format", "md", "--patches", str(REPO / "patches"), env=box_env)
    assert md.out.startswith("# Run review: **ready**")


GATE_PIPELINE = """
[steps.hello]
command = ["{python}", "-c", "print('hello from the step')"]
"""


def test_run_is_gated_by_the_review_and_force_saves_it(
    sshd: SshServer, fresh_venv: Callable[..., SeedVenv], tmp_path: Path, cli_env: dict[str, str]
) -> None:
    venv = fresh_venv()
    work = tmp_path / "work"
    work.mkdir()
    hosts = tmp_path / "hosts.toml"
    hosts.write_text(
        'default = "box"\n' + sshd.host_entry("box", python=str(venv.python), workdir=str(work))
    )
    pipeline = tmp_path / "pipeline.toml"
    pipeline.write_text(GATE_PIPELINE)
    env = {**cli_env, "HARNESS_HOSTS": str(hosts)}
    common = ("--pipeline", str(pipeline), "--patches", str(REPO / "patches"))
    refused = run_cli("run", "hello", *common, env=env)
    assert refused.code == 1
    assert "not ready" in refused.err and "--force" in refused.err
    assert "kv_cache_specs" in refused.err  # the summary names the blockers
    assert not (work / ".harness" / "runs").exists() or not any(
        (work / ".harness" / "runs").iterdir()
    )  # nothing was launched
    forced = run_cli("run", "hello", "--force", *common, env=env)
    assert forced.code == 0, forced.err
    assert "hello from the step" in forced.out + forced.err
    (run_dir,) = (work / ".harness" / "runs").iterdir()
    saved = json.loads((run_dir / "review.json").read_text())
    assert saved["verdict"] == "not ready" and saved["target"].startswith("box (")
    assert any("kv_cache_specs" in r["text"] for r in saved["reasons"])
    assert saved["step"]["name"] == "hello"  # the review shows the step that would run
    assert "print('hello from the step')" in saved["step"]["command"]
