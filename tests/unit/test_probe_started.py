"""A probe started before its arguments (the baseline beside the caller's scan) answers as a
plain run does; the scan's early word reaches the controller while it runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.probe_runner import run_probe, start_probe
from harness.targets.local import LocalTarget

SITE = str(Path(__file__).resolve().parents[1] / "fixtures" / "site")


def test_a_started_probe_answers_as_a_plain_run() -> None:
    args = {"refs": [["calleepkg.core", "Record"], ["calleepkg", "helper"]], "paths": [SITE]}
    plain = run_probe(LocalTarget(), "callsites", args)
    ready = start_probe(LocalTarget(), "callsites", {"prefetch": args["refs"], "paths": [SITE]})
    assert ready is not None
    got = run_probe(LocalTarget(), "callsites", args, started=ready)
    assert got.data == plain.data and got.fingerprint == plain.fingerprint
    assert ready.proc.returncode == 0


def test_a_started_probe_not_needed_is_ended() -> None:
    ready = start_probe(LocalTarget(), "callsites", {"prefetch": [], "paths": [SITE]})
    assert ready is not None
    ready.cancel()
    assert ready.proc.returncode is not None


def test_the_scan_says_early_what_the_baseline_needs() -> None:
    heard: list[dict[str, Any]] = []
    args = {"caller": "callerpkg", "callees": None, "paths": [SITE]}
    env = run_probe(LocalTarget(), "callsites", args, early=heard.append)
    assert len(heard) == 1
    said = heard[0]
    assert said["caller"]["dist"] == env.data["caller"]["dist"]
    assert said["caller"]["requires"] == env.data["caller"]["requires"]
    assert said["callees"] == env.data["callees"]
    assert said["imports"] and all(m.split(".")[0] in said["callees"] for m, _ in said["imports"])


def test_the_early_folders_of_gone_processes_are_swept(tmp_path: Path) -> None:
    """A harness killed with SIGKILL mid-check leaves its early-word folder: the next one
    removes it -- and leaves a live process's and anything else alone."""
    import os
    import subprocess
    import sys

    from harness.targets.started import sweep_stale

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    (tmp_path / f"harness-early-{gone}-abc").mkdir()
    (tmp_path / f"harness-early-{os.getpid()}-def").mkdir()
    (tmp_path / "harness-early-xyz").mkdir()
    (tmp_path / "other-1-x").mkdir()
    sweep_stale("harness-early-", str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        f"harness-early-{os.getpid()}-def", "harness-early-xyz", "other-1-x"
    ]  # fmt: skip
