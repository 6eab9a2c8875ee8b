"""Issue 35 item 1: ``harness run`` launched, then died with a traceback, and the user never
learned the step was running (each retry launched another).

What a foreground run needs here -- a stdout, a folder for the log's local copy -- is checked
before anything launches; after the launch, a failure here still names the run and how to
follow or stop it. ``-t pypi:`` probes and ``check`` with a cache that cannot be written: one
line. Real runs on the ``local`` target, real read-only file systems (a ``ro`` tmpfs as HOME,
when root may mount one) or a cache whose folder is a file.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.test_runs_ssh import Harness, local_harness, marked
from tests.support.cli import run_cli

COUNT = "import time\\nfor i in range(3):\\n    print(i, flush=True); time.sleep(0.2)"
PIPELINE = f"""
[steps.count]
command = ["{{python}}", "-c", "{COUNT}"]
"""


@pytest.fixture
def local(tmp_path: Path) -> Iterator[Harness]:
    h = local_harness(tmp_path, PIPELINE)
    yield h
    for run in (h.workdir / ".harness" / "runs").glob("*"):
        for pid in marked(run.name):
            os.kill(pid, 9)


@pytest.fixture(params=["read-only HOME", "cache folder is a file"])
def no_cache(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, str]]:
    """An environment whose harness cache cannot be written: HOME on a read-only file system
    (no HARNESS_CACHE), or HARNESS_CACHE below a regular file."""
    if request.param == "read-only HOME":
        home = tmp_path / "rohome"
        home.mkdir()
        if os.geteuid() != 0:
            pytest.skip("mounting a read-only tmpfs needs root")
        got = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(home)], check=False
        )
        if got.returncode != 0:
            pytest.skip("cannot mount a tmpfs here")
        try:
            yield {"HOME": str(home), "HARNESS_CACHE": "", "XDG_CACHE_HOME": ""}
        finally:
            subprocess.run(["umount", "-l", str(home)], check=False)
    else:
        afile = tmp_path / "afile"
        afile.write_text("")
        yield {"HARNESS_CACHE": str(afile / "cache")}


def one_error(err: str) -> tuple[str, str]:
    assert "Traceback" not in err, err
    lines = [x for x in err.splitlines() if x.startswith(("error: ", "hint: "))]
    assert len(lines) == 2, err
    return lines[0], lines[1]


def runs_made(h: Harness) -> list[str]:
    return sorted(p.name for p in (h.workdir / ".harness" / "runs").glob("count-*"))


def test_a_cache_that_cannot_be_written_refuses_the_run_before_it_launches(
    local: Harness, no_cache: dict[str, str]
) -> None:
    r = local("run", "count", "-t", "local", **no_cache)
    assert r.code == 2, r.out + r.err
    error, hint = one_error(r.err)
    assert error.startswith("error: the run's log cannot be copied to "), error
    assert re.search(
        r" on this machine \((Read-only file system|Not a directory)\); nothing was launched$",
        error,
    ), error
    assert "set HARNESS_CACHE to a folder you can write" in hint
    assert runs_made(local) == []
    # --detach needs no local copy: it launches, and says how to follow it
    r = local("run", "count", "-t", "local", "--detach", **no_cache)
    assert r.code == 0 and "started count-" in r.err, r.err
    # and logs says the same one line instead of a traceback
    (run_id,) = runs_made(local)
    local.status(run_id)
    r = local("logs", run_id, "-t", "local", **no_cache)
    assert r.code == 2, r.out + r.err
    error, hint = one_error(r.err)
    assert error.startswith("error: the run's log cannot be copied to "), error


def test_a_closed_stdout_refuses_the_run_before_it_launches(local: Harness) -> None:
    def closed(*args: str) -> subprocess.CompletedProcess[str]:
        argv = " ".join(local.argv(*args))
        return subprocess.run(
            ["sh", "-c", f"exec {argv} >&-"], cwd=local.cwd, env=local.env,
            capture_output=False, stderr=subprocess.PIPE, text=True, timeout=60, check=False,
        )  # fmt: skip

    for args, words in (
        (("run", "count", "-t", "local"), "a foreground run has nowhere to show"),
        (("run", "count", "-t", "local", "--detach", "--json"), "--json has nowhere to write"),
    ):
        r = closed(*args)
        assert r.returncode == 2, r.stderr
        error, _ = one_error(r.stderr)
        assert error.startswith(f"error: stdout is closed: {words}"), error
        assert error.endswith("nothing was launched"), error
        assert runs_made(local) == []
    run_id = local.launch("count")
    local.status(run_id)
    r = closed("logs", run_id, "-t", "local")
    assert r.returncode == 2 and "error: stdout is closed: the log has nowhere to go" in r.stderr
    assert "Traceback" not in r.stderr


def test_a_failure_after_the_launch_still_names_the_run_and_how_to_reach_it(
    local: Harness,
) -> None:
    """stdout is /dev/full: the first line of the log cannot be written, after the launch."""
    with open("/dev/full", "w") as full:
        cp = subprocess.run(
            local.argv("run", "count", "-t", "local"), cwd=local.cwd, env=local.env,
            stdout=full, stderr=subprocess.PIPE, text=True, timeout=60, check=False,
        )  # fmt: skip
    assert cp.returncode == 2, cp.stderr
    (run_id,) = runs_made(local)
    error, hint = one_error(cp.stderr)
    assert re.fullmatch(
        rf"error: harness could not follow {run_id} here \(No space left on device\); "
        rf"{run_id} was launched and keeps running on local",
        error,
    ), error
    assert hint == (
        f"hint: follow it with: harness logs {run_id} -t local --follow; "
        f"stop it with: harness stop {run_id} -t local"
    )
    assert local.status(run_id)["exit_code"] == 0  # the step itself ran to its end
    shown = local("logs", run_id, "-t", "local")
    assert shown.code == 0 and shown.out == "0\n1\n2\n", shown.err


@pytest.mark.parametrize(
    "args",
    [
        ("probe", "packaging", "-t", "pypi:packaging==24.0"),
        ("check", "typer", "-t", "pypi:typer==0.12.0"),
    ],
)
def test_a_pypi_target_with_a_cache_that_cannot_be_written_is_one_line(
    cli_env: dict[str, str], no_cache: dict[str, str], args: tuple[str, ...]
) -> None:
    r = run_cli(*args, env={**cli_env, **no_cache}, timeout=60)
    assert r.code == 2, r.out + r.err
    error, hint = one_error(r.err)
    assert re.fullmatch(
        rf"error: {re.escape(args[-1])}: harness's cache \S+ cannot be written \(.+\); "
        "the wheels are unpacked there",
        error,
    ), error
    assert hint == "hint: set HARNESS_CACHE to a folder you can write"
