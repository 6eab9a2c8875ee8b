"""A step's ``requires`` and ``checks`` in the review and the run gate, on real targets.

``requires`` is judged against what the step's own imports would see -- its ``PYTHONPATH``
first, as when it runs -- so a folder of transformers 4.x in front of a 5.x install meets
``transformers = ">=4.56,<5"``. ``checks`` limits the review to the callers the step exercises.
Dist versions come from handwritten ``*.dist-info`` folders (pinning the rule) and from the
real seed venv (speculators 0.3.0 on vLLM 0.16.0, its patch series not applied).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.cli import run_cli
from tests.support.wheels import SeedVenv

REPO = Path(__file__).resolve().parents[2]

PIPELINE = """\
[params]
extra = ""
[steps.train]
command = ["{python}", "-c", "import sys; print('trained with', sys.argv[1:])", "ok"]
requires = { needdist = ">=2,<3" }
env = { PYTHONPATH = "{extra}" }
checks = []
"""


def dist(folder: Path, name: str, version: str) -> Path:
    info = folder / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\n")
    return folder


def review(env: dict[str, str], cwd: Path, *args: str) -> tuple[int, dict]:
    r = run_cli("report", "train", "--format", "json", *args, env=env, cwd=cwd)
    assert r.code in (0, 1), r.err
    return r.code, json.loads(r.out)


def blockers(data: dict) -> list[tuple[str, str | None]]:
    return [(x["text"], x["hint"]) for x in data["reasons"] if x["severity"] == "blocker"]


def test_requires_are_judged_on_the_steps_own_import_path(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "pipeline.toml").write_text(PIPELINE)
    old = dist(tmp_path / "old", "needdist", "1.5")
    new = dist(tmp_path / "new", "NeedDist", "2.1")
    args = ("-t", "local", "--patches", str(tmp_path / "no-patches"))
    py = sys.executable

    code, data = review(cli_env, tmp_path, *args)
    assert code == 1
    assert blockers(data) == [
        (
            "step train needs needdist>=2,<3; its environment has not installed",
            f"{py} -m pip install 'needdist>=2,<3'",
        )
    ]
    code, data = review(cli_env, tmp_path, *args, "--set", f"extra={old}")
    assert blockers(data) == [
        (
            "step train needs needdist>=2,<3; its environment has 1.5",
            f"{py} -m pip install --target {old} 'needdist>=2,<3'",
        )
    ]
    code, data = review(cli_env, tmp_path, *args, "--set", f"extra={new}:{old}")
    assert code == 0 and blockers(data) == []  # the first folder wins, as in the step
    assert data["step"]["requires"] == [
        {"dist": "needdist", "spec": ">=2,<3", "found": "2.1", "ok": True}
    ]

    # the run gate refuses before launching, and launches once the need is met
    r = run_cli("run", "train", *args, "--set", f"extra={old}", env=cli_env, cwd=tmp_path)
    assert r.code != 0 and "not launching train" in r.err and "trained" not in r.out
    r = run_cli("run", "train", *args, "--set", f"extra={new}", env=cli_env, cwd=tmp_path)
    assert r.code == 0, r.err
    assert "trained with ['ok']" in r.out


def test_checks_limit_the_review_to_what_the_step_exercises(
    cli_env: dict[str, str], seed_venv: SeedVenv, tmp_path: Path
) -> None:
    """On the seed venv the speculators series is pending and check finds 3 errors: a step
    that exercises speculators' vLLM calls is not ready; one that declares none is."""
    (tmp_path / "pipeline.toml").write_text(
        "[steps.extract]\ncommand = ['true']\nchecks = { speculators = ['vllm'] }\n"
        "[steps.train]\ncommand = ['true']\nchecks = []\n"
        "[steps.old]\ncommand = ['true']\n"
    )
    t = ("-t", f"venv:{seed_venv.root}", "--patches", str(REPO / "patches"))
    for step, ready in (("extract", False), ("old", False), ("train", True)):
        r = run_cli("report", step, "--format", "json", *t, env=cli_env, cwd=tmp_path)
        data = json.loads(r.out)
        assert (r.code == 0) is ready, (step, data["reasons"])
        texts = [x["text"] for x in data["reasons"] if x["severity"] == "blocker"]
        if step == "train":
            assert data["patches"] == [] and data["check"] is None and texts == []
        else:
            assert any("are not applied" in x for x in texts)
            assert sum("no longer" in x or "argument" in x for x in texts) == 3
            assert data["check"]["callees"] == {"vllm": "0.16.0"}


def _offline() -> bool:
    return subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0


def test_no_index_reports_the_errors_and_says_drift_was_skipped(
    cli_env: dict[str, str], seed_venv: SeedVenv, tmp_path: Path, wheels: dict[str, Path]
) -> None:
    """As on a GPU box without network: a network namespace with nothing in it but loopback."""
    import pytest

    if not _offline():
        pytest.skip("unshare -n is not permitted here")
    env = {**cli_env, "HARNESS_CACHE": str(tmp_path / "empty-cache")}
    harness = [sys.executable, "-m", "harness", "check", "speculators", "--json"]
    target = ["-t", f"venv:{seed_venv.root}"]
    cp = subprocess.run(
        ["unshare", "-n", *harness, *target], env=env, capture_output=True, text=True, timeout=120
    )
    assert cp.returncode == 1, cp.stderr
    data = json.loads(cp.stdout)
    errors = {(f["line"], f["category"]) for f in data["findings"] if f["severity"] == "error"}
    assert errors == {(136, "unexpected-kwarg"), (148, "missing-required-arg"),
                      (194, "missing-required-arg")}  # fmt: skip
    assert data["baseline"] == {} and not any(f["category"] == "drift" for f in data["findings"])
    (note,) = [n for n in data["notes"] if n.startswith("drift not checked")]
    assert "vllm==0.11.0" in note and "no package index answers" in note
    assert "--baseline-from" in note

    # the baseline's wheel brought along: drift is back, still offline
    folder = Path(wheels["vllm==0.11.0"]).parent
    cp = subprocess.run(
        ["unshare", "-n", *harness, *target, "--baseline-from", str(folder)],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    data = json.loads(cp.stdout)
    assert data["baseline"] == {"vllm": "0.11.0"}
    assert any(f["category"] == "drift" for f in data["findings"])
