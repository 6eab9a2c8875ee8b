"""Issue 35 item 12: 80 columns. ``runs`` cut the run id (what ``logs``/``stop`` need) and
dropped the exit column; a long ``patches`` line ran past the terminal's edge, to be cut
mid-word by it; harness's own summaries were wrapped at 80 even into a pipe or a file.

Now on a terminal (a real pseudo-terminal, 80 columns) the run id is whole and the exit shown,
and long lines wrap at word boundaries at its width, under their own indent; into a pipe
nothing is wrapped.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from tests.integration.test_patches_faults import FIXTURES, make_tiny
from tests.integration.test_runs_ssh import Harness, local_harness
from tests.support.cli import run_cli, run_tty

PIPELINE = """
[steps.hello]
command = ["{python}", "-c", "print('hello')"]

[steps.a-rather-long-step-name]
command = ["{python}", "-c", "import sys; sys.exit(3)"]
"""


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[Harness, list[str]]:
    h = local_harness(tmp_path, PIPELINE)
    ids = [h.launch(step) for step in ("hello", "a-rather-long-step-name")]
    for run_id in ids:
        h.status(run_id)
    return h, ids


@pytest.mark.parametrize("columns", [80, 100])
def test_runs_never_cuts_the_run_id_and_keeps_the_exit(
    two_runs: tuple[Harness, list[str]], columns: int
) -> None:
    h, ids = two_runs
    r = run_tty("runs", "-t", "local", env=h.env, cwd=h.cwd, columns=columns)
    assert r.code == 0, r.out
    lines = r.out.splitlines()
    assert all(len(line) <= columns for line in lines), r.out
    assert lines[0].split()[0] == "run" and lines[0].split()[-1] == "exit", r.out
    for run_id, code in zip(ids, ("0", "3"), strict=True):
        (row,) = [line for line in lines if line.startswith(run_id)]
        assert row.split()[0] == run_id and row.split()[-1] == code, r.out
    assert "…" not in r.out


def long_why(tmp_path: Path) -> tuple[tuple[str, ...], str]:
    tiny = make_tiny(tmp_path / "venv")
    patches = tmp_path / "patches"
    shutil.copytree(FIXTURES / "good", patches)
    series = patches / "tinypkg" / "1.0" / "series.toml"
    why = " ".join(f"word{i:03d}" for i in range(60))
    series.write_text(series.read_text().replace('"friendlier greeting"', f'"{why}"'))
    return ("-t", f"venv:{tiny.root}", "--patches", str(patches)), why


def test_a_long_line_wraps_at_words_on_a_terminal(cli_env: dict[str, str], tmp_path: Path) -> None:
    t, why = long_why(tmp_path)
    r = run_tty("patches", *t, env=cli_env, columns=80)
    assert r.code == 0, r.out
    lines = r.out.splitlines()
    assert all(len(line) <= 80 for line in lines), r.out
    assert why in " ".join(r.out.split())  # every word whole, in order
    at = next(i for i, line in enumerate(lines) if "word000" in line)
    indent = lines[at].index("word000")
    wrapped = [line for line in lines if re.search(r"word\d{3}", line)]
    assert len(wrapped) > 1 and all(line.index("word") == indent for line in wrapped), r.out


def test_nothing_is_wrapped_into_a_pipe(cli_env: dict[str, str], tmp_path: Path) -> None:
    t, why = long_why(tmp_path)
    env = {k: v for k, v in cli_env.items() if k != "COLUMNS"}
    r = run_cli("patches", *t, env={**env, "COLUMNS": ""})
    assert r.code == 0 and f" {why}\n" in r.out, r.out
    assert run_cli("apply-patches", *t, env=env).code == 0
    alpha = next(Path(t[1].removeprefix("venv:")).rglob("tinypkg/alpha.py"))
    alpha.write_text(alpha.read_text() + "# tuned\n")
    r = run_cli("make-patch", "tinypkg", "--name", "tune", *t, env={**env, "COLUMNS": ""})
    assert r.code == 0, r.err
    (said,) = [line for line in r.out.splitlines() if line.startswith("wrote ")]
    assert said.endswith(" and appended it to series.toml") and len(said) > 80, r.out
    assert os.path.exists(said.split()[1])
