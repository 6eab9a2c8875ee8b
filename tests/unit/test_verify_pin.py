"""Which files of a user's output check launch pins (``probes/runs/_pin.py``), by command form."""

from __future__ import annotations

from pathlib import Path

import pytest

from probes.runs._pin import moved, named, pin

CASES = [
    (["/usr/bin/python3", "check.py", "out.txt"], ["check.py"]),
    (["python", "-u", "-W", "error", "check.py", "out.txt"], ["check.py"]),
    (["python3.12", "-m", "pkg.run", "out.txt"], ["pkg/run.py"]),
    (["python", "-m", "pkg", "out.txt"], ["pkg/__main__.py"]),
    (["python", "-m", "pytest", "tests"], []),  # site-packages: not pinned
    (["python", "-c", "print(1)", "check.py"], []),
    (["bash", "check.sh", "out.txt"], ["check.sh"]),
    (["./tool.sh", "check.py"], ["tool.sh"]),  # a script of its own: its arguments are data
    (["torchrun", "--nproc", "2", "check.py"], ["check.py"]),
    (["mycli", "out.txt"], []),  # an output the step writes is never pinned
    ([], []),
]


@pytest.mark.parametrize(("argv", "want"), CASES)
def test_the_files_a_check_command_names(tmp_path: Path, argv: list[str], want: list[str]) -> None:
    for name in ("check.py", "check.sh", "out.txt", "pkg/run.py", "pkg/__main__.py"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("x")
    (tmp_path / "tool.sh").write_text("#!/bin/sh\n")
    assert named(argv, str(tmp_path)) == [str(tmp_path / w) for w in want]


def test_a_pinned_file_changed_or_gone_is_said(tmp_path: Path) -> None:
    (tmp_path / "check.py").write_text("ok")
    pinned = pin(["python", "check.py"], str(tmp_path))
    assert moved(pinned) is None
    (tmp_path / "check.py").write_text("print('pass')")
    assert "check.py was changed after launch (sha256 " in (moved(pinned) or "")
    (tmp_path / "check.py").unlink()
    assert "at launch, gone); not run" in (moved(pinned) or "")
