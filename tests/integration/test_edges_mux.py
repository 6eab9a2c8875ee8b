"""Issue 35 item 2: a target interpreter that hangs at start-up, reached through the kept
connection, left a process on the box for good.

The mux server's warm probe worker (``probes/zygote.py``, started with the host's ``python``)
never became ready; the probe timed out saying the process "was killed (with its children)",
yet the worker stayed, and after ``harness hosts --disconnect`` it was re-parented to PID 1.
Here ``python =`` is a wrapper that execs ``sleep`` (an interpreter stuck in a CUDA or NFS
call at start-up), marked by a variable so that every process it left is found in /proc.
Real sshd on loopback, real mux server; each ``harness`` a fresh process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.test_mux import _logs, _ready_server, runtime  # noqa: F401 - a fixture
from tests.support.cli import run_cli
from tests.support.sshd import SshServer

pytestmark = pytest.mark.ssh


def marked(mark: str) -> list[int]:
    """Live processes (not zombies) whose environment holds ``HANG_MARK=mark``."""
    needle = f"HANG_MARK={mark}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
        except (OSError, IndexError):
            continue
        if state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def none_left(mark: str, within: float = 10.0) -> list[int]:
    """The marked processes still alive after ``within`` seconds (none, when all is well)."""
    deadline = time.monotonic() + within
    while marked(mark) and time.monotonic() < deadline:
        time.sleep(0.1)
    return marked(mark)


@pytest.fixture
def hung(sshd: SshServer, tmp_path: Path, runtime: Path) -> Iterator[tuple[dict[str, str], str]]:  # noqa: F811
    """(environment for harness with a kept connection, the mark) for a host whose
    ``python`` hangs at start-up; every marked process is killed at the end regardless."""
    mark = uuid.uuid4().hex
    wrapper = tmp_path / "hung-python"
    wrapper.write_text(f"#!/bin/sh\nHANG_MARK={mark}\nexport HANG_MARK\nexec sleep 1000\n")
    wrapper.chmod(0o755)
    hosts = tmp_path / "hosts.toml"
    hosts.write_text('default = "box"\n' + sshd.host_entry("box", python=str(wrapper), timeout=4))
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    env = {
        "HOME": str(home), "HARNESS_CACHE": str(tmp_path / "cache"),
        "HARNESS_HOSTS": str(hosts), "HARNESS_SSH_PERSIST": "600",
        "XDG_RUNTIME_DIR": str(runtime),
    }  # fmt: skip
    try:
        yield env, mark
    finally:
        for pid in marked(mark):
            os.kill(pid, signal.SIGKILL)


def _through_the_kept_connection(env: dict[str, str], runtime: Path, mark: str) -> None:  # noqa: F811
    """A first probe connects directly (and leaves the kept connection behind)."""
    first = run_cli("probe", "json", env=env, timeout=120)
    assert first.code == 2 and "timed out after 4s" in first.err, first.err
    _ready_server(runtime)
    assert none_left(mark) == [], "the direct probe left its process"


def test_a_worker_that_never_starts_is_killed_when_the_probe_times_out(
    hung: tuple[dict[str, str], str],
    runtime: Path,  # noqa: F811
) -> None:
    env, mark = hung
    _through_the_kept_connection(env, runtime, mark)
    start = time.monotonic()
    r = run_cli("probe", "json", env=env, timeout=120)
    took = time.monotonic() - start
    assert r.code == 2, (r.out, r.err)
    assert "timed out after 4s" in r.err and "Traceback" not in r.err, r.err + _logs(runtime)
    assert "it was killed (with its children)" in r.err
    assert took < 15, took  # the probe's own timeout, not the worker's start-up allowance
    assert none_left(mark) == [], "the worker that never started is still on the box"
    # and the kept connection still serves: the next probe says the same
    again = run_cli("probe", "json", env=env, timeout=120)
    assert again.code == 2 and "timed out after 4s" in again.err, again.err
    assert none_left(mark) == []


def test_hosts_disconnect_kills_a_worker_still_starting(
    hung: tuple[dict[str, str], str],
    runtime: Path,  # noqa: F811
) -> None:
    env, mark = hung
    _through_the_kept_connection(env, runtime, mark)
    full = {**os.environ, **env, "HARNESS_TIMEOUT": "300", "COLUMNS": "200", "NO_COLOR": "1"}
    probe = subprocess.Popen(
        [sys.executable, "-m", "harness", "probe", "json"], env=full,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not marked(mark):  # the worker is starting on the box
            assert probe.poll() is None, probe.communicate()
            assert time.monotonic() < deadline, "the worker never started"
            time.sleep(0.1)
        r = run_cli("hosts", "--disconnect", env=env, timeout=60)
        assert r.code == 0 and "closed 1 kept connection(s)" in r.out, r.err
        assert none_left(mark) == [], "the starting worker outlived its kept connection"
    finally:
        os.killpg(probe.pid, signal.SIGINT)
        probe.communicate(timeout=60)
    assert none_left(mark) == []
