"""``harness run`` on the ``local`` target: GPU holders (ordinary files stand in for
``/dev/nvidia*``), refusals before launch, and the read-only ``pypi:`` target.

The device glob is injectable (``HARNESS_RUN_GPU_DEVICES``) precisely so that stale-holder
detection and ``--kill-stale`` can be tested with real processes on a machine without a GPU.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.test_runs_ssh import Harness, base_env, gone, marked, toml_str, wait_for

HOLD = """
import os, sys, time
f = open(sys.argv[1], "rb")  # "the GPU"
print("holding", flush=True)
time.sleep(120)
"""
LEAVE_BEHIND = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    f = open(sys.argv[1], "rb")
    with open(sys.argv[2], "w") as out:
        out.write(str(os.getpid()))
    time.sleep(120)
    os._exit(0)
while not os.path.exists(sys.argv[2]):
    time.sleep(0.01)
print("left a worker behind", flush=True)
"""
ORPHAN = """
import os, sys, time
if os.fork() == 0:
    f = open(sys.argv[1], "rb")
    with open(sys.argv[2] + ".tmp", "w") as out:
        out.write(str(os.getpid()))
    os.rename(sys.argv[2] + ".tmp", sys.argv[2])
    time.sleep(120)
    os._exit(0)
while not os.path.exists(sys.argv[2]):
    time.sleep(0.01)
os._exit(0)  # the parent dies: the holder is re-parented to init
"""

RAW = r"""
import sys
out = sys.stdout.buffer
out.write(b"caf\xc3\xa9 \xff\xfe bad\r\nprogress 1\rprogress 2\nno newline at the end")
"""
RAW_BYTES = b"caf\xc3\xa9 \xff\xfe bad\r\nprogress 1\rprogress 2\nno newline at the end"

PIPELINE = f"""
[params]
gpu = "gpu0"

[steps.hold]
command = ["{{python}}", "-c", {toml_str(HOLD)}, "{{workdir}}/dev/{{gpu}}"]

[steps.leave]
command = ["{{python}}", "-c", {toml_str(LEAVE_BEHIND)},
           "{{workdir}}/dev/gpu0", "{{run_dir}}/daemon"]

[steps.hello]
command = ["{{python}}", "-c", "print('hello')"]

[steps.raw]
command = ["{{python}}", "-c", {toml_str(RAW)}]

[steps.missing]
command = ["no-such-program-here", "--x"]

[steps.noscript]
command = ["{{python}}", "{{workdir}}/nope.py"]
"""


@pytest.fixture
def local(tmp_path: Path) -> Iterator[Harness]:
    workdir = tmp_path / "work"
    (workdir / "dev").mkdir(parents=True)
    (workdir / "dev" / "gpu0").write_bytes(b"")
    (tmp_path / "pipeline.toml").write_text(PIPELINE)
    hosts = tmp_path / "hosts.toml"
    hosts.write_text("")
    env = base_env(tmp_path) | {
        "HARNESS_HOSTS": str(hosts),
        "HARNESS_WORKDIR": str(workdir),
        "HARNESS_RUN_GPU_DEVICES": str(workdir / "dev" / "gpu*"),
    }
    h = Harness(tmp_path, env, "local", workdir)
    started: list[int] = []
    h.started = started  # type: ignore[attr-defined]
    yield h
    for pid in started:
        if not gone(pid):
            os.kill(pid, signal.SIGKILL)
    for run in (workdir / ".harness" / "runs").glob("*"):  # nothing may outlive the test
        for pid in marked(run.name):
            os.kill(pid, signal.SIGKILL)


def orphan_holder(h: Harness) -> int:
    pid_file = h.cwd / "orphan.pid"
    subprocess.run(
        [sys.executable, "-c", ORPHAN, str(h.workdir / "dev" / "gpu0"), str(pid_file)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        timeout=10,
        check=True,
    )
    pid = int(pid_file.read_text())
    h.started.append(pid)  # type: ignore[attr-defined]
    wait_for(lambda: Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1] == "1")
    return pid


def test_an_orphan_gpu_holder_is_refused_then_killed_with_kill_stale(local: Harness) -> None:
    pid = orphan_holder(local)
    r = local("run", "hello", "-t", "local")
    assert r.code == 2, r.err
    assert "✗ stale GPU" in r.err and f"{pid} " in r.err and "parent gone" in r.err
    assert "--kill-stale" in r.err and not gone(pid)
    r = local("run", "hello", "-t", "local", "--kill-stale")
    assert r.code == 0, r.err
    assert f"ended stale GPU process(es): {pid}" in r.err and "hello" in r.out
    assert gone(pid)


def test_a_running_runs_worker_is_busy_not_stale_and_stop_reports_holders(
    local: Harness,
) -> None:
    holder = local.launch("hold")
    wait_for(lambda: b"holding" in (local.run_dir(holder) / "log").read_bytes())
    r = local("run", "hello", "-t", "local")
    assert r.code == 0, r.err
    assert "! GPU in use" in r.err and f"run {holder} is running" in r.err
    stop = local("stop", holder, "-t", "local", "--json")
    assert stop.code == 0, stop.err
    report = json.loads(stop.out)
    assert report["holders"] == [] and report["run"]["state"] == "killed"


def test_a_worker_left_behind_by_a_finished_run_is_stale_and_stop_cleans_it(
    local: Harness,
) -> None:
    run_id = local.launch("leave")
    assert local.status(run_id)["exit_code"] == 0
    daemon = int((local.run_dir(run_id) / "daemon").read_text())
    local.started.append(daemon)  # type: ignore[attr-defined]
    assert not gone(daemon) and local.state_of(run_id) == "succeeded · unverified"
    r = local("run", "hello", "-t", "local")
    assert r.code == 2 and f"run {run_id}" in r.err, r.err
    stop = local("stop", run_id, "-t", "local")
    assert stop.code == 0, stop.out + stop.err
    assert "had already ended: succeeded" in stop.out or "SIGTERM to 1" in stop.out
    assert "GPU holders remaining: none" in stop.out
    wait_for(lambda: gone(daemon), timeout=5)


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (["run", "missing"], 2, "'no-such-program-here' not found"),
        (["run", "noscript"], 2, "nope.py not found"),
        (["run", "hello", "--set", "gpuu=1"], 2, "did you mean 'gpu'"),
        (["run", "helo"], 2, "did you mean 'hello'"),
        (["run", "hello", "-t", "pypi:vllm==0.16.0"], 2, "read-only"),
        (["logs", "nothing", "-t", "local"], 2, "no runs yet"),
        (["logs", "x", "-t", "local", "--tail", "1", "--offset", "3"], 2, "give one"),
    ],
)
def test_refusals_before_anything_runs(
    local: Harness, args: list[str], code: int, words: str
) -> None:
    if "-t" not in args:
        args = [*args, "-t", "local"]
    r = local(*args)
    assert r.code == code and words in r.err, r.err
    assert "Traceback" not in r.err
    assert not list((local.workdir / ".harness" / "runs").glob("*/supervisor.json"))


def test_run_without_a_step_lists_the_pipeline(local: Harness) -> None:
    r = local("run")
    assert r.code == 0 and "hold" in r.out and "parameters: gpu" in r.out
    as_json = json.loads(local("run", "--json").out)
    assert list(as_json["steps"]) == ["hold", "leave", "hello", "raw", "missing", "noscript"]


def test_local_run_streams_and_logs_replays(local: Harness) -> None:
    t0 = time.monotonic()
    r = local("run", "hello", "-t", "local")
    assert r.code == 0 and r.out == "hello\n", r.err
    assert time.monotonic() - t0 < 15
    again = local("logs", "hello", "-t", "local")
    assert again.code == 0 and again.out == "hello\n" and "succeeded" in again.err


def test_stale_holders_hook_for_the_report(local: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.runs.follow.commands import stale_gpu_holders
    from harness.targets.local import LocalTarget

    pid = orphan_holder(local)
    monkeypatch.setenv("HARNESS_WORKDIR", str(local.workdir))
    monkeypatch.setenv("HARNESS_RUN_GPU_DEVICES", local.env["HARNESS_RUN_GPU_DEVICES"])
    found = stale_gpu_holders(LocalTarget())
    assert [h["pid"] for h in found] == [pid] and "python" in str(found[0]["cmd"])


def test_run_and_logs_write_the_steps_bytes_unchanged(local: Harness) -> None:
    """Issue 10: invalid UTF-8, a \\r and a missing last newline reach stdout as they were."""

    def stdout_of(*args: str) -> bytes:
        cp = subprocess.run(
            local.argv(*args), cwd=local.cwd, env=local.env, capture_output=True, timeout=60,
            check=False,
        )  # fmt: skip
        assert cp.returncode == 0, cp.stderr
        return cp.stdout

    assert stdout_of("run", "raw", "-t", "local") == RAW_BYTES
    assert stdout_of("logs", "raw", "-t", "local") == RAW_BYTES
    assert stdout_of("logs", "raw", "-t", "local", "--tail", "1") == b"no newline at the end"
