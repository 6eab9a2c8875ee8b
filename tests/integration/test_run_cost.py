"""Issue 35 item 14: what a ``harness run`` costs, held by its structure (the time itself is
``bench/overhead_bench.py``'s, never a test's).

Over the kept connection to a real sshd, a run of a step makes two probe round trips -- the
preflight, which brings the review's facts back with it, and the launch -- and one stream
for the log, opened just before the launch so that the follower's start overlaps it (a
launch that fails leaves no follower behind); and it imports neither Paramiko (the kept
connection is stdlib) nor the checker or the patch machinery for a step that checks nothing
and has no series.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.integration.test_logs_mux import _imported_heavy, _server_up, kept  # noqa: F401
from tests.integration.test_runs_ssh import Harness, box, wait_for  # noqa: F401

pytestmark = pytest.mark.ssh

#: What the run of a step that checks nothing, with no patch series, never imports.
NOT_ON_THE_RUN_PATH = (
    "harness.analysis.checker",
    "harness.patching.ops",
    "harness.fixing",
    "harness.reading.check",
    "rich.markdown",
)


def _requests(stderr: str) -> list[str]:
    return re.findall(r"harness-mux: request (\w+):", stderr)


def test_a_run_over_the_kept_connection_makes_two_probe_round_trips(
    kept: Harness,  # noqa: F811
) -> None:
    first = kept("run", "count", "-t", "box", "--set", "delay=0", "--set", "code=0")
    assert first.code == 0, first.err
    _server_up(kept)
    again = kept("run", "count", "-t", "box", "--set", "delay=0", "--set", "code=0",
                 PYTHONPROFILEIMPORTTIME="1")  # fmt: skip
    assert again.code == 0, again.err
    assert "via mux" in again.err
    # the preflight (the review's facts in its answer); the log's stream, then the launch
    assert _requests(again.err) == ["python", "stream", "python"], again.err
    assert "run review box" in again.err and "succeeded" in again.err
    assert _imported_heavy(again.err) == []
    names = {line.split("|")[-1].strip() for line in again.err.splitlines() if "|" in line}
    assert not {n for n in names if n.startswith(NOT_ON_THE_RUN_PATH)}


def test_a_step_with_its_own_python_still_gets_its_facts_from_that_python(
    kept: Harness,  # noqa: F811
) -> None:
    """The preflight runs on the host's interpreter: a step naming another one is reviewed
    with that one's facts (the facts probe of its own), as before."""
    import sys

    step = f'\n[steps.own]\npython = "{sys.executable}"\ncommand = ["{{python}}", "-c", "1"]\n'
    (kept.cwd / "pipeline.toml").write_text((kept.cwd / "pipeline.toml").read_text() + step)
    assert kept("run", "own", "-t", "box").code == 0  # the first connect starts the server
    _server_up(kept)
    got = kept("run", "own", "-t", "box")
    assert got.code == 0, got.err
    assert _requests(got.err) == ["python", "python", "stream", "python"], got.err


def test_a_launch_that_fails_leaves_no_follower_on_the_box(kept: Harness) -> None:  # noqa: F811
    """The launch fails after every gate passed (its runs folder is a file, which the
    preflight does not look at): the follower opened for it leaves with harness."""
    assert kept("run", "count", "-t", "box", "--set", "delay=0", "--set", "code=0").code == 0
    _server_up(kept)
    shutil.rmtree(kept.workdir / ".harness" / "runs")
    (kept.workdir / ".harness" / "runs").write_text("not a folder")
    got = kept("run", "count", "-t", "box", "--set", "delay=0")
    assert got.code != 0 and "request stream" in got.err, got.err
    wait_for(lambda: not _followers_of(str(kept.workdir)), timeout=5, what="no follower")


def _followers_of(workdir: str) -> list[int]:
    """Processes whose command line is a follower of a run under ``workdir``."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes()
            if workdir.encode() in text and b"supervisor" in text:
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found
