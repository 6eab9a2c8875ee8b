"""Issue 35 item 4: Ctrl-C said too little.

``revert-patches`` interrupted gave a generic line even when the revert had completed, or
nothing at all (exit 130); now it says, as ``apply-patches`` does, exactly what it left:
"nothing written" before the writes, "the series is reverted" once they have begun (they
finish). A Ctrl-C in the first moments of any command (while harness's modules load) printed
a 40-line ``KeyboardInterrupt`` traceback; now it is one line, exit 130.

Real processes: a venv with tinypkg installed the way pip leaves it, the transactional probe
slowed between its file swaps (``HARNESS_TEST_SWAP_DELAY``), SIGINT to the process group as a
terminal sends it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.test_patches_faults import (
    DELAY_S,
    SERIES_FILES,
    Harness,
    Tiny,
    installed,
    journal_pid,
    leftovers,
    reaped,
    series,  # noqa: F401 - a fixture
    tiny,  # noqa: F401 - a fixture
    wait_for,
)


def ctrl_c(proc: subprocess.Popen[str]) -> tuple[int, str]:
    os.killpg(proc.pid, signal.SIGINT)
    code = proc.wait(60)
    _out, err = proc.communicate()
    return code, err


@pytest.fixture
def applied(cli_env: dict[str, str], tiny: Tiny, series: Callable) -> tuple[Harness, dict]:  # noqa: F811
    """The good series applied on the venv; (harness, the pristine files)."""
    h = Harness({**cli_env}, tiny, series("good"))
    pristine = installed(tiny.site)
    r = h("apply-patches", target="venv")
    assert r.code == 0, r.err
    assert installed(tiny.site) != pristine
    return h, pristine


def test_ctrl_c_mid_revert_finishes_it_and_says_so(
    applied: tuple[Harness, dict],
    tiny: Tiny,  # noqa: F811
) -> None:
    h, pristine = applied
    first = tiny.path(SERIES_FILES[0])
    want = (Path(tiny.site) / SERIES_FILES[0]).read_bytes()  # patched now
    proc = h.spawn(
        "revert-patches", target="venv", session=True, HARNESS_TEST_SWAP_DELAY=str(DELAY_S)
    )
    with reaped(proc):

        def swapped_back() -> bool:
            if proc.poll() is not None:
                pytest.fail(f"harness ended before the first swap: {proc.communicate()}")
            return journal_pid(tiny) is not None and first.read_bytes() != want

        wait_for(swapped_back, "the first file restored")
        code, err = ctrl_c(proc)
    assert code == 130, err
    assert err.splitlines() == [
        "interrupted: the series is reverted (3 file(s) restored byte-identical); see it "
        f"with: harness patches -t venv:{tiny.root} --patches {h.patches}"
    ]
    assert installed(tiny.site) == pristine and leftovers(tiny.site) == []


def test_ctrl_c_before_the_revert_writes_leaves_it_applied(
    applied: tuple[Harness, dict],
    tiny: Tiny,  # noqa: F811
    tmp_path: Path,
) -> None:
    h, _ = applied
    patched = installed(tiny.site)
    calls = tmp_path / "calls"
    slow = tmp_path / "slow-python"
    slow.write_text(f'#!/bin/sh\necho "$$" >> {calls}\nsleep 5\nexec {tiny.python} "$@"\n')
    slow.chmod(0o755)
    proc = h.spawn("revert-patches", target=f"local:{slow}", session=True)
    with reaped(proc):
        wait_for(calls.exists, "the first probe (reading the target)")
        code, err = ctrl_c(proc)
    assert code == 130, err
    assert err.splitlines() == [
        f"interrupted: nothing written; see it with: harness patches -t local:{slow} "
        f"--patches {h.patches}"
    ]
    assert installed(tiny.site) == patched


@pytest.mark.parametrize("after", ["harness.errors", "typer", "harness.cli.common"])
def test_ctrl_c_while_harness_starts_is_one_line(tmp_path: Path, after: str) -> None:
    """``-X importtime`` says on stderr when each module has loaded: the Ctrl-C lands while
    the rest of harness's modules still load (the ~0.2 s before a command runs)."""
    env = {**os.environ, "HARNESS_HOSTS": str(tmp_path / "hosts.toml"), "NO_COLOR": "1"}
    (tmp_path / "hosts.toml").write_text("")
    proc = subprocess.Popen(
        [sys.executable, "-X", "importtime", "-m", "harness", "hosts"], env=env, cwd=tmp_path,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    assert proc.stderr is not None
    try:
        for line in iter(proc.stderr.readline, ""):
            if line.startswith("import time:") and line.split("|")[-1].strip() == after:
                break
        else:
            pytest.fail(f"{after} was never imported")
        os.killpg(proc.pid, signal.SIGINT)
        err = proc.stderr.read()
        code = proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    said = [x for x in err.splitlines() if not x.startswith("import time:")]
    assert (code, said) == (130, ["interrupted"]), err[-3000:]
