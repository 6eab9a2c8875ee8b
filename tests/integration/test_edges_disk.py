"""Issue 21 item 6: a full disk on the target, on a real small filesystem (a 1 MiB tmpfs).

A full workdir made a run read "lost ... may still be running" and the suggested ``stop``
crash with ENOSPC; a full disk during ``apply-patches`` / ``revert-patches`` kept the files
safe but read "probe crashed ... OSError". Now the cause is named (no space left, where), and
the state things are in: "nothing written", "still fully applied", a run's status.
Mounting needs root; elsewhere these tests are skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.test_patches_faults import FIXTURES, installed, leftovers, make_tiny
from tests.integration.test_runs_ssh import Harness, base_env, gone, marked, wait_for
from tests.support.cli import run_cli

FILL = """
import sys, time
print("filling", flush=True)
try:
    with open(sys.argv[1], "wb") as f:
        while True:
            f.write(b"x" * 4096)
            f.flush()
except OSError:
    pass
time.sleep(60)
"""


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB filesystem of its own (unmounted after the test)."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    got = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], check=False)
    if got.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def fill(mnt: Path, leave_pages: int = 0) -> Path:
    """Take all the space but ``leave_pages`` 4 KiB pages; the filler, to free it again."""
    st = os.statvfs(mnt)
    filler = mnt / "filler"
    with open(filler, "wb") as f:
        f.write(b"\0" * max(0, st.f_bavail * st.f_frsize - leave_pages * 4096))
    return filler


def one_line(err: str) -> str:
    assert "Traceback" not in err and "probe crashed" not in err and "OSError" not in err, err
    (line,) = [x for x in err.splitlines() if x.startswith("error: ")]
    return line


# -- patches ------------------------------------------------------------------------------


@pytest.mark.parametrize("leave", [0, 2, 5, 9])
def test_apply_on_a_full_disk_says_so_and_writes_nothing(
    disk: Path, cli_env: dict[str, str], leave: int
) -> None:
    tiny = make_tiny(disk / "venv")
    t = ("-t", f"venv:{tiny.root}", "--patches", str(FIXTURES / "good"))
    before = installed(tiny.site)
    filler = fill(disk, leave)
    r = run_cli("apply-patches", *t, env=cli_env)
    assert r.code == 2, r.out + r.err
    assert one_line(r.err) == (
        f"error: venv:{tiny.root}: no space left on the disk that holds {tiny.site}: "
        "nothing written"
    )
    assert "harness patches -t venv:" in r.err  # how to see the state
    assert installed(tiny.site) == before and leftovers(tiny.site) == []
    filler.unlink()
    r = run_cli("apply-patches", *t, env=cli_env)
    assert r.code == 0, r.err
    assert installed(tiny.site) != before and leftovers(tiny.site) == []


@pytest.mark.parametrize("leave", [0, 3])
def test_revert_on_a_full_disk_says_the_series_is_still_applied(
    disk: Path, cli_env: dict[str, str], leave: int
) -> None:
    tiny = make_tiny(disk / "venv")
    t = ("-t", f"venv:{tiny.root}", "--patches", str(FIXTURES / "good"))
    original = installed(tiny.site)
    assert run_cli("apply-patches", *t, env=cli_env).code == 0
    patched = installed(tiny.site)
    filler = fill(disk, leave)
    r = run_cli("revert-patches", *t, env=cli_env)
    assert r.code == 2, r.out + r.err
    assert one_line(r.err) == (
        f"error: venv:{tiny.root}: no space left on the disk that holds {tiny.site}: "
        "nothing written: the tinypkg series is still fully applied"
    )
    assert installed(tiny.site) == patched and leftovers(tiny.site) == []
    filler.unlink()
    assert run_cli("revert-patches", *t, env=cli_env).code == 0
    assert installed(tiny.site) == original


# -- runs ---------------------------------------------------------------------------------


@pytest.fixture
def on_disk(tmp_path: Path, disk: Path) -> Iterator[Harness]:
    """``harness run`` on ``local`` with its workdir on the small filesystem."""
    (tmp_path / "fill.py").write_text(FILL)
    (tmp_path / "pipeline.toml").write_text(
        '[steps.fill]\ncommand = ["{python}", "' + str(tmp_path / "fill.py") + '", '
        '"{workdir}/big"]\n\n[steps.hello]\ncommand = ["{python}", "-c", "print(1)"]\n'
    )
    (tmp_path / "hosts.toml").write_text("")
    env = base_env(tmp_path) | {
        "HARNESS_HOSTS": str(tmp_path / "hosts.toml"),
        "HARNESS_WORKDIR": str(disk),
        "HARNESS_RUN_GPU_DEVICES": str(disk / "no-gpu*"),
        "HARNESS_RUN_GRACE_S": "2",
        "HARNESS_RUN_STATUS_WAIT_S": "5",
    }
    h = Harness(tmp_path, env, "local", disk)
    yield h
    for run in (disk / ".harness" / "runs").glob("*"):  # nothing may outlive the test
        for pid in marked(run.name):
            os.kill(pid, 9)


def test_a_step_that_fills_the_workdir_is_stopped_and_reads_killed(on_disk: Harness) -> None:
    run_id = on_disk.launch("fill")
    wait_for(lambda: os.statvfs(on_disk.workdir).f_bavail == 0, what="the disk to fill")
    assert on_disk.state_of(run_id) == "running"
    stop = on_disk("stop", run_id, "-t", "local")
    assert stop.code == 0 and "Traceback" not in stop.err, stop.out + stop.err
    assert "SIGTERM to 1" in stop.out and "state: killed" in stop.out, stop.out
    assert on_disk.state_of(run_id).startswith("killed")
    status = json.loads((on_disk.run_dir(run_id) / "status.json").read_text())
    assert status["disk_full"]["path"] == str(on_disk.run_dir(run_id))
    assert not (on_disk.run_dir(run_id) / "reserve").exists()  # its space went back
    logs = on_disk("logs", run_id, "-t", "local")
    assert logs.code == 0 and "filling" in logs.out, logs.err
    assert (
        f"no space left on the disk that holds {on_disk.run_dir(run_id)} on local when the "
        "step ended"
    ) in logs.err.replace("\n", " ")
    assert not marked(run_id)


def test_a_full_workdir_is_refused_before_anything_is_made(on_disk: Harness) -> None:
    filler = fill(on_disk.workdir)
    r = on_disk("run", "hello", "-t", "local")
    assert r.code == 2, r.out + r.err
    assert f"✗ workdir  no space left on the disk that holds {on_disk.workdir} (0 KiB" in r.err
    assert "Traceback" not in r.err and "probe crashed" not in r.err
    assert not (on_disk.workdir / ".harness" / "runs").exists() or not list(
        (on_disk.workdir / ".harness" / "runs").iterdir()
    )
    report = on_disk("report", "hello", "-t", "local")
    assert report.code == 1 and "✗ blocker preflight workdir: no space left" in report.out
    filler.unlink()
    assert on_disk("run", "hello", "-t", "local").code == 0


def test_stop_signals_all_the_same_when_its_record_cannot_be_written(on_disk: Harness) -> None:
    """A run made before the reserve (an older harness's, or one whose reserve is gone): the
    stop cannot write stop.json on the full disk, says so, and stops the step anyway."""
    run_id = on_disk.launch("fill")
    wait_for(lambda: os.statvfs(on_disk.workdir).f_bavail == 0, what="the disk to fill")
    (on_disk.run_dir(run_id) / "reserve").unlink()
    fill(on_disk.workdir)  # what the reserve gave back
    sup = json.loads((on_disk.run_dir(run_id) / "supervisor.json").read_text())
    stop = on_disk("stop", run_id, "-t", "local")
    assert "Traceback" not in stop.err and "probe crashed" not in stop.err, stop.err
    assert stop.code == 0, stop.out + stop.err
    text = stop.out.replace("\n", " ")
    assert f"no space left on the disk that holds {on_disk.run_dir(run_id)}: " in text
    assert "could not be written; the processes were signalled all the same" in text
    assert gone(sup["step_pid"]) and not marked(run_id)
