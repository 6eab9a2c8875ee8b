"""Issue 21: the edges of ``harness run`` / ``report`` / ``logs`` a new user still trips on,
on the ``local`` target with real runs (no mocks).

2. ``harness report STEP`` said **ready** while ``harness run STEP`` refused at its preflight
   (the step's script, cwd or command missing): the review now makes the same preflight.
11. ``--workdir`` naming a regular file: the preflight said it would be created, then a
   probe crashed. Refused in the preflight, one line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.test_runs_ssh import Harness, local_harness

PIPELINE = """
[steps.hello]
command = ["{python}", "-c", "print('hello')"]

[steps.missing]
command = ["no-such-program-here", "--x"]

[steps.noscript]
command = ["{python}", "{workdir}/nope.py"]

[steps.nocwd]
command = ["{python}", "-c", "print(1)"]
cwd = "{workdir}/no/such/folder"
"""


@pytest.fixture
def local(tmp_path: Path) -> Harness:
    return local_harness(tmp_path, PIPELINE)


def no_runs(h: Harness) -> bool:
    return not list((h.workdir / ".harness" / "runs").glob("*"))


@pytest.mark.parametrize(
    ("step", "words"),
    [
        ("missing", "preflight command: 'no-such-program-here' not found"),
        ("noscript", "preflight command: script {workdir}/nope.py not found"),
        ("nocwd", "preflight command: the step's cwd {workdir}/no/such/folder does not exist"),
    ],
)
def test_the_review_is_not_ready_when_the_preflight_would_refuse(
    local: Harness, step: str, words: str
) -> None:
    words = words.format(workdir=local.workdir)
    run = local("run", step, "-t", "local")
    assert run.code == 2 and "preflight refused" in run.err, run.err  # as before
    r = local("report", step, "-t", "local")
    assert r.code == 1, r.out + r.err
    assert r.out.splitlines()[0] == "run review local: not ready", r.out
    assert f"✗ blocker {words}" in r.out, r.out
    data = json.loads(local("report", step, "-t", "local", "--format", "json").out)
    assert data["verdict"] == "not ready"
    (reason,) = [x for x in data["reasons"] if x["text"].startswith("preflight ")]
    assert reason["severity"] == "blocker" and reason["text"].startswith(words) and reason["hint"]
    assert [v["check"] for v in data["step"]["preflight"]] == ["command"]
    assert no_runs(local)


def test_a_ready_review_means_the_launch_starts(local: Harness) -> None:
    r = local("report", "hello", "-t", "local", "--format", "json")
    assert r.code == 0, r.out + r.err
    data = json.loads(r.out)
    assert data["verdict"] == "ready" and "preflight" not in data["step"]
    assert not [x for x in data["reasons"] if "stale GPU" in x["text"]]
    run = local("run", "hello", "-t", "local")
    assert run.code == 0 and "hello" in run.out, run.err


def test_the_review_warns_as_the_preflight_does(local: Harness) -> None:
    fresh = local.workdir / "not-yet"
    r = local("report", "hello", "-t", "local", "--format", "json", HARNESS_WORKDIR=str(fresh))
    data = json.loads(r.out)
    assert r.code == 0 and data["verdict"] == "ready", r.out + r.err
    warned = [x for x in data["reasons"] if x["text"].startswith("preflight workdir")]
    assert warned == [
        {
            "severity": "warning",
            "text": f"preflight workdir: {fresh} does not exist yet; it will be created",
            "hint": None,
        }
    ]
    assert not fresh.exists()  # the review creates nothing


@pytest.mark.parametrize("below", [False, True])
def test_a_workdir_that_is_a_file_is_refused_in_one_line(local: Harness, below: bool) -> None:
    afile = local.cwd / "afile"
    afile.write_text("keep me\n")
    workdir = afile / "sub" if below else afile
    r = local("run", "hello", "-t", "local", "--workdir", str(workdir))
    assert r.code == 2, r.out + r.err
    what = f"cannot be created: {afile} is a file" if below else "is a file"
    assert f"✗ workdir  {workdir} {what}, not a folder" in r.err, r.err
    assert "error: preflight refused to launch hello: workdir" in r.err
    assert "Traceback" not in r.err and "probe crashed" not in r.err
    assert "will be created" not in r.err
    assert afile.read_text() == "keep me\n"
    report = local("report", "hello", "-t", "local", HARNESS_WORKDIR=str(workdir))
    assert report.code == 1 and f"✗ blocker preflight workdir: {workdir} {what}" in report.out


def test_a_command_too_long_for_the_os_exits_as_the_step_and_is_shown_cut(
    local: Harness,
) -> None:
    """Item 12: E2BIG after substitution. The step's own exit (127) is harness's, no 65 KB
    follower error; the command line is shown cut; run.json keeps it whole."""
    big = "y" * 200_000  # over Linux's 128 KiB for one argument
    pipeline = local.cwd / "long.toml"
    pipeline.write_text(
        f'[params]\nbig = "{big}"\n[steps.long]\n'
        'command = ["{python}", "-c", "print(1)", "{big}"]\n'
    )
    r = local("run", "long", "-t", "local", "--pipeline", str(pipeline))
    assert r.code == 127, r.err[-2000:]
    assert len(r.err) < 4000 and big not in r.err, r.err[:4000]
    first = r.err.splitlines()[0]
    assert first.startswith("long on local: ") and first.endswith(" characters in all)"), first
    assert len(first) < 300 and " ... (200,0" in first
    assert "Argument list too long (the command is 200,0" in r.err
    assert "131,072 for one argument" in r.err
    assert "follower" not in r.err and "Traceback" not in r.err
    assert "failed (127)" in r.err
    (run_dir,) = (local.workdir / ".harness" / "runs").glob("long-*")
    record = json.loads((run_dir / "run.json").read_text())
    assert record["argv"][-1] == big  # the recorded command stays true
    assert json.loads((run_dir / "status.json").read_text())["exit_code"] == 127
    again = local("logs", "long", "-t", "local")  # a later look says the same, briefly
    assert again.code == 0 and len(again.err) < 4000, again.err[-2000:]
    assert "Argument list too long" in again.out + again.err


def test_logs_uses_the_complete_local_copy_when_the_targets_log_is_gone(
    local: Harness,
) -> None:
    """Item 5: the run's log was deleted on the target (or its whole run directory); the
    local copy harness announced is complete, so ``logs`` shows it and says so."""
    r = local("run", "hello", "-t", "local")
    assert r.code == 0 and r.out == "hello\n", r.err
    (run_dir,) = (local.workdir / ".harness" / "runs").glob("hello-*")
    run_id = run_dir.name
    copy = local.copy(run_id)
    assert copy.read_bytes() == b"hello\n" and f"log: {copy}" in r.err
    (run_dir / "log").unlink()
    for extra in ([], ["--tail", "1"], ["--follow"]):
        shown = local("logs", run_id, "-t", "local", *extra)
        assert shown.code == 0, shown.err
        assert shown.out == "hello\n", shown.out
        assert (
            f"{run_id}: its log on local is gone ({run_dir}/log); showing harness's local "
            f"copy, complete (6 bytes): {copy}"
        ) in shown.err, shown.err
        assert "missing on the target" not in shown.err and "Traceback" not in shown.err
        assert copy.read_bytes() == b"hello\n"  # not truncated by the attach
    for pid_file in run_dir.iterdir():
        pid_file.unlink()
    run_dir.rmdir()
    shown = local("logs", run_id, "-t", "local")
    assert shown.code == 0 and shown.out == "hello\n", shown.err
    assert f"{run_id} is no longer on local (its run directory is gone)" in shown.err


def test_logs_says_what_is_left_when_the_local_copy_may_be_short(local: Harness) -> None:
    run_id = local.launch("hello")
    local.status(run_id)
    (local.run_dir(run_id) / "log").unlink()  # gone before harness copied it to the end
    r = local("logs", run_id, "-t", "local")
    assert r.code == 2 and "Traceback" not in r.err, r.err
    assert f"error: {run_id}: its log on local is gone" in r.err
    assert "harness has no copy of it" in r.err and "hint: list the runs" in r.err
