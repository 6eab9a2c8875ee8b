"""The remote half's building blocks (probes/runs/_rundir.py, _proctree.py, runs.py), on /proc."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from probes.runs import _paths, _proctree, _rundir


@pytest.mark.parametrize(
    ("text", "want"),
    [
        (
            "4711 (python3) S 1 4711 4711 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 98765 0 0",
            {"pid": 4711, "comm": "python3", "state": "S", "ppid": 1, "pgrp": 4711,
             "session": 4711, "starttime": 98765},
        ),
        (
            "12 (a) (b) c) Z 3 4 5 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 777 0 0",
            {"pid": 12, "comm": "a) (b) c", "state": "Z", "ppid": 3, "pgrp": 4, "session": 5,
             "starttime": 777},
        ),
        ("garbage", None),
        ("1 (x) S 0", None),
    ],
)  # fmt: skip
def test_parse_stat(text: str, want: dict[str, object] | None) -> None:
    assert _rundir.parse_stat(text) == want


@pytest.mark.parametrize(
    ("argv", "want"),
    [
        (["python", "scripts/train.py", "--x"], "scripts/train.py"),
        (["/v/bin/python3.12", "-u", "-B", "a.py"], "a.py"),
        (["python", "-m", "torch.distributed.run", "x.py"], None),
        (["python", "-c", "print(1)"], None),
        (["torchrun", "x.py"], None),
        (["python", "notes.txt"], None),
    ],
)
def test_script_of(argv: list[str], want: str | None) -> None:
    assert _paths.script_of(argv) == want


def test_atomic_json_write_and_tolerant_read(tmp_path: Path) -> None:
    path = str(tmp_path / "status.json")
    assert _rundir.read_json(path) is None
    _rundir.write_json_atomic(path, {"exit_code": 3})
    assert _rundir.read_json(path) == {"exit_code": 3}
    Path(path).write_text('{"exit_co')  # torn by someone else's non-atomic write
    assert _rundir.read_json(path) is None
    assert [p.name for p in tmp_path.iterdir()] == ["status.json"]  # no temp files left


def test_is_alive_checks_the_start_time_too() -> None:
    me = _rundir.proc_stat(os.getpid())
    assert me is not None
    assert _rundir.is_alive(os.getpid(), me["starttime"], _rundir.boot_id())
    assert not _rundir.is_alive(os.getpid(), me["starttime"] + 1)  # a recycled pid
    assert not _rundir.is_alive(os.getpid(), me["starttime"], "another-boot")
    assert not _rundir.is_alive(None, None)


TREE = r"""
import os, sys, time, signal
out = sys.argv[1]
child = os.fork()
if child == 0:
    grand = os.fork()
    if grand == 0:
        os.setsid()  # a worker that leaves the session and ignores SIGTERM
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(60)
        os._exit(0)
    time.sleep(60)
    os._exit(0)
with open(out, "w") as f:
    f.write(f"{os.getpid()} {child}")
time.sleep(60)
"""


def test_run_tree_finds_setsid_workers_and_terminate_escalates(tmp_path: Path) -> None:
    pids_file = tmp_path / "pids"
    env = {**os.environ, _rundir.RUN_ID_ENV: "tree-run"}
    proc = subprocess.Popen(
        [sys.executable, "-c", TREE, str(pids_file)], env=env, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 10
        while not pids_file.exists() or not pids_file.read_text():
            assert time.monotonic() < deadline
            time.sleep(0.01)
        time.sleep(0.2)  # let the grandchild call setsid
        members = _proctree.run_tree("tree-run", {proc.pid}, proc.pid, set())
        found = {m["pid"] for m in members}
        assert {proc.pid, *map(int, pids_file.read_text().split())} <= found
        assert len(found) == 3
        # Without the step as a root and with another session id, the env marker still finds all.
        assert {m["pid"] for m in _proctree.run_tree("tree-run", set(), -1, set())} == found
        assert _proctree.run_tree("other-run", set(), -1, set()) == []
        report = _proctree.terminate(members, grace=0.5)
        assert set(report["terminated"]) == found
        assert len(report["killed"]) == 1  # the one that ignored SIGTERM
        assert report["remaining"] == []
    finally:
        proc.kill()
        proc.wait()


def test_gpu_holders_sees_an_open_device_file(tmp_path: Path) -> None:
    dev = tmp_path / "fakegpu0"
    dev.write_bytes(b"")
    code = "import sys, time; f = open(sys.argv[1], 'rb'); print('ok', flush=True); time.sleep(30)"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(dev)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ok\n"
        holders = _proctree.gpu_holders(str(tmp_path / "fakegpu*"))
        assert [(h["pid"], h["devices"], h["ppid"]) for h in holders] == [
            (proc.pid, [str(dev)], os.getpid())
        ]
        assert json.dumps(holders)  # travels as JSON
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
