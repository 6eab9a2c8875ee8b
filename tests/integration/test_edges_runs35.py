"""Issue 35: the edges of ``harness run`` / ``runs`` / ``stop`` a new user still trips on, on
the ``local`` target with real runs (no mocks).

10. ``run STEP``'s own review said **ready** while ``report STEP`` said **not ready** for the
    same step (a missing script): ``run`` made its review without the preflight, then refused
    at the preflight. Now the launch makes its preflight first and shows the review with its
    verdicts in it: the same review, in the same words, as ``report``.
11. ``stop`` rewrote a run that had already ended by itself (lost: its supervisor and step
    were killed from outside) as "killed", with a duration up to the stop; a run whose
    directory was deleted while it ran could not be listed or stopped. Now the ended run is
    said to have ended and left as it was; the deleted one is listed and stopped.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.integration.test_edges_runs2 import PIPELINE, no_runs
from tests.integration.test_runs_ssh import Harness, gone, local_harness, marked, wait_for

SLEEPY = """
[steps.sleepy]
command = ["{python}", "-c", "import time; print('up', flush=True); time.sleep(120)"]
"""


@pytest.fixture
def local(tmp_path: Path) -> Harness:
    return local_harness(tmp_path, PIPELINE)


def review_of(text: str) -> list[str]:
    """The review's verdict line and its reasons, as printed."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("run review "))
    out = [lines[at]]
    for line in lines[at + 1 :]:
        if not line.startswith(("  ✗ ", "  ! ", "  · ")):
            break
        out.append(line)
    return out


@pytest.mark.parametrize(
    ("step", "code", "verdict"),
    [
        ("noscript", 2, "not ready"),
        ("missing", 2, "not ready"),
        ("nocwd", 2, "not ready"),
        ("hello", 0, "ready"),
    ],
)
def test_run_shows_the_review_that_report_shows(
    local: Harness, step: str, code: int, verdict: str
) -> None:
    report = local("report", step, "-t", "local")
    run = local("run", step, "-t", "local")
    assert run.code == code, run.out + run.err
    said = review_of(run.err)
    assert said[0] == f"run review local: {verdict}", run.err
    assert said == review_of(report.out), (run.err, report.out)
    if code:
        assert "error: preflight refused to launch" in run.err and no_runs(local)


def test_force_does_not_launch_what_the_preflight_refuses(local: Harness) -> None:
    run = local("run", "noscript", "-t", "local", "--force")
    assert run.code == 2 and "error: preflight refused to launch noscript" in run.err
    assert "launching anyway" not in run.err and no_runs(local)


@pytest.fixture
def sleepy(tmp_path: Path):
    h = local_harness(tmp_path, PIPELINE + SLEEPY)
    yield h
    for run in (h.workdir / ".harness" / "runs").glob("*"):  # nothing may outlive the test
        for pid in marked(run.name):
            os.kill(pid, 9)


def files_of(run_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(run_dir.iterdir()) if p.is_file()}


def test_stop_leaves_a_run_that_ended_by_itself_as_it_was(sleepy: Harness) -> None:
    run_id = sleepy.launch("sleepy")
    sup = json.loads((sleepy.run_dir(run_id) / "supervisor.json").read_text())
    wait_for(lambda: sup.get("step_pid") is not None, what="the step")
    for pid in (sup["pid"], sup["step_pid"]):  # the OOM killer, a reboot: nobody said
        os.kill(pid, 9)
    wait_for(lambda: gone(sup["pid"]) and gone(sup["step_pid"]), what="the kill")
    assert sleepy.state_of(run_id) == "lost"
    before = files_of(sleepy.run_dir(run_id))
    stop = sleepy("stop", run_id, "-t", "local")
    assert stop.code == 0, stop.out + stop.err
    assert f"{run_id} had already ended: lost; nothing to stop, nothing changed" in stop.out
    assert "SIGTERM" not in stop.out and "killed" not in stop.out
    assert files_of(sleepy.run_dir(run_id)) == before  # no stop.json, no status written
    assert sleepy.state_of(run_id) == "lost"


def test_stop_of_a_finished_run_changes_nothing(sleepy: Harness) -> None:
    run_id = sleepy.launch("hello")
    sleepy.status(run_id)
    before = files_of(sleepy.run_dir(run_id))
    stop = sleepy("stop", run_id, "-t", "local")
    assert stop.code == 0 and "had already ended: succeeded" in stop.out, stop.out + stop.err
    assert "nothing to stop, nothing changed" in stop.out
    assert files_of(sleepy.run_dir(run_id)) == before


@pytest.mark.parametrize("name", ["id", "step"])
def test_a_run_whose_directory_was_deleted_is_listed_and_stopped(
    sleepy: Harness, name: str
) -> None:
    run_id = sleepy.launch("sleepy")
    wait_for(lambda: len(marked(run_id)) > 0, what="the step")
    step_pids = marked(run_id)
    run_dir = sleepy.run_dir(run_id)
    shutil.rmtree(run_dir)
    runs = sleepy("runs", "-t", "local")
    assert runs.code == 0, runs.err
    assert f"{run_id}: its run directory {run_dir} was deleted while it ran; it still runs" in (
        runs.out
    ), runs.out
    assert f"end it with: harness stop {run_id}" in runs.out
    stop = sleepy("stop", run_id if name == "id" else "sleepy", "-t", "local")
    assert stop.code == 0, stop.out + stop.err
    assert f"{run_id}: its run directory {run_dir} was deleted while it ran; SIGTERM to " in (
        stop.out
    ), stop.out
    assert "state: gone" in stop.out and "Traceback" not in stop.err
    wait_for(lambda: all(gone(p) for p in step_pids), what="the step to end")
    assert not marked(run_id) and not run_dir.exists()
    runs = sleepy("runs", "-t", "local")
    assert run_id not in runs.out
    again = sleepy("stop", run_id, "-t", "local")
    assert again.code == 2 and f"error: no run {run_id!r}" in again.err
