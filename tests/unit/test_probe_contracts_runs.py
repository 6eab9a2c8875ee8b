"""The envelopes of the probes that act on the target -- ``runs`` (launch, holders, preflight,
list, stop, and the run program's follow report) and ``patchops`` (read, write) -- each produced
for real on this machine and read by the function harness reads it with (see
``test_probe_contracts.py`` for the reading probes and the markers).
"""

from __future__ import annotations

import hashlib
import inspect
import os
import re
import sys
import time
from pathlib import Path

from harness import probe_files
from harness.patching.manifest import NONE, Backup, Manifest
from harness.patching.ops import read_state
from harness.patching.plan import FileChange
from harness.patching.writing import write_files
from harness.runs.follow.stream import Follower, LocalCopy, follower_argv
from harness.runs.pipeline.steps import ResolvedStep
from harness.runs.record.models import RunInfo
from harness.runs.target import remote
from harness.runs.target.timings import Timings
from harness.targets.local import LocalTarget
from probes.patching import patchops
from probes.runs import runs
from tests.support.tinydist import FolderTarget, install

HOLD = "import sys, time; f = open(sys.argv[1]); print('holding', flush=True); time.sleep(60)"


def test_runs_envelopes(tmp_path: Path) -> None:
    """One run through every op: launch, holders, preflight, list, follow, stop."""
    target, workdir, device = LocalTarget(label="here"), str(tmp_path / "w"), tmp_path / "gpu0"
    device.write_text("")  # an ordinary file stands in for /dev/nvidia0
    glob = str(tmp_path / "gpu*")
    step = ResolvedStep("hold", (sys.executable, "-c", HOLD, str(device)), str(tmp_path), {}, {})
    timings = Timings()

    launched = remote.launch(target, "hold-1", workdir, step, pipeline="p.toml", timings=timings)
    run = launched.run
    assert (run.record.id, run.record.step, run.record.pipeline) == ("hold-1", "hold", "p.toml")
    assert run.record.run_dir == f"{workdir}/.harness/runs/hold-1"
    assert run.supervisor is not None and run.supervisor.step_pid
    assert run.supervisor_alive is True and run.state == "running"
    assert set(probe_files.PROGRAM) <= {p.name for p in Path(run.record.run_dir).iterdir()}
    try:
        log = Path(run.record.run_dir) / "log"
        deadline = time.monotonic() + 30
        while b"holding" not in (log.read_bytes() if log.exists() else b""):
            assert time.monotonic() < deadline, "the step never opened its device"
            time.sleep(0.05)

        holders, runs = remote.gpu_holders(target, workdir, glob)
        (holder,) = holders
        assert (holder.pid, holder.run_id, holder.devices) == (
            run.supervisor.step_pid,
            "hold-1",
            (str(device),),
        )
        assert holder.starttime > 0 and holder.comm
        assert [r.record.id for r in runs] == ["hold-1"]

        pre = remote.preflight(target, workdir, step, glob)
        assert (pre.python, pre.workdir, pre.cwd) == (sys.executable, workdir, str(tmp_path))
        assert pre.workdir_exists and pre.workdir_writable and pre.cwd_exists
        assert (pre.argv0, pre.resolved) == (sys.executable, sys.executable)
        assert [h.run_id for h in pre.holders] == ["hold-1"]
        assert [r.record.id for r in pre.runs] == ["hold-1"]

        listed = remote.list_runs(target, workdir)
        assert listed.root == f"{workdir}/.harness/runs" and listed.now > 0
        assert [r.record.id for r in listed.runs] == ["hold-1"]
        assert listed.runs[0].log_size == len(b"holding\n")

        copy = LocalCopy(tmp_path / "copy" / "log")
        argv = follower_argv(target, run.record.run_dir, 0, wait=False, poll=0.05, lost_check=1.0)
        end = Follower(lambda offset: target.stream(argv), copy).run()  # the run program's
        assert (end.reason, end.size) == ("eof", len(b"holding\n"))
        assert copy.path.read_bytes() == b"holding\n"
        assert end.facts is not None
        assert RunInfo.from_facts(end.facts, None).record.id == "hold-1"
    finally:
        stopped = remote.stop(
            target, workdir, "hold-1", grace=2.0, timings=timings, device_glob=glob
        )
    assert run.supervisor.step_pid in stopped.terminated + stopped.killed
    assert stopped.remaining == () and stopped.holders == () and not stopped.already_finished
    assert stopped.run.stop_requested and stopped.run.status is not None
    assert stopped.run.state == "killed"


def test_patchops_envelopes(tmp_path: Path) -> None:
    """``read`` before and after a ``write``: files, RECORD, manifest and backups."""
    before, after = "X = 1\n", "X = 2\n"
    site = install(tmp_path / "site", "1.0", before)
    target = FolderTarget(site, "here")
    rel = "tinypkg/core.py"
    sha = hashlib.sha256(before.encode()).hexdigest()

    state = read_state(target, "tinypkg", [rel])
    assert (state.dist, state.version, state.root) == ("tinypkg", "1.0", os.path.realpath(site))
    live = state.live[rel]
    assert (live.text, live.sha256, live.record_sha256) == (before, sha, sha)
    assert live.mode == os.stat(site / rel).st_mode & 0o7777 and not live.binary
    assert state.record[rel] == sha and state.actual[rel] == sha
    assert (state.manifest, state.backups, state.lock, state.recovered) == (NONE, {}, None, None)

    written = {"files": {rel: {"series": "fix-x"}}, "dist": "tinypkg"}
    manifest = Manifest.from_json(written)
    change = FileChange(rel, before, after, sha, live.mode)
    assert write_files(target, "tinypkg", [change], manifest, "harness apply") == [rel]

    state = read_state(target, "tinypkg", [rel])
    assert state.live[rel].text == after == (site / rel).read_text()
    assert state.live[rel].record_sha256 == sha  # pip's hash: the wheel's file
    assert state.actual[rel] == hashlib.sha256(after.encode()).hexdigest()
    assert state.manifest == manifest  # what was written reads back, typed
    assert state.backups == {rel: Backup(sha, before)}


def test_runs_and_patchops_ops_are_the_ones_covered_above() -> None:
    """A new op fails here until its envelope is checked in a test above."""
    assert set(re.findall(r'"(\w+)": op_', inspect.getsource(runs.run))) == {
        "preflight",
        "holders",
        "launch",
        "list",
        "stop",
    }
    assert set(re.findall(r'action"\]? ?\)? == "(\w+)"', inspect.getsource(patchops.run))) == {
        "read",
        "write",
    }
