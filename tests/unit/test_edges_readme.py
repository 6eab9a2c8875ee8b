"""Issue 21 item 15: the README's set-up installs into a project-local venv, never into
whichever ``pip`` comes first on PATH, and says what ``.ci/run`` installs."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _setup_block() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Set-up", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block is not None
    return block.group(1).strip().splitlines()


def test_the_first_command_installs_into_a_project_venv_only() -> None:
    first = _setup_block()[0]
    steps = [shlex.split(step) for step in first.split("&&")]
    assert steps[0] == ["python3", "-m", "venv", ".venv"]
    for argv in steps[1:]:  # every later program is the venv's own
        assert argv[0].startswith(".venv/bin/"), argv
    assert [".venv/bin/pip", "install", "-e", "."] in steps
    assert steps[-1][:2] == [".venv/bin/harness", "probe"]


def test_the_readme_says_ci_run_installs_chromium() -> None:
    assert "chromium" in (ROOT / ".ci" / "run").read_text()
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    setup = text.split("## Set-up", 1)[1].split("\n## ", 1)[0]
    assert "Chromium" in setup and "browser tests" in setup


def test_the_readme_says_ci_run_takes_20_minutes_and_installs_as_root_with_apt() -> None:
    assert "apt-get install" in (ROOT / ".ci" / "run").read_text()
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    setup = " ".join(text.split("## Set-up", 1)[1].split("\n## ", 1)[0].split())
    assert "about 20 minutes" in setup
    assert "OS packages, as root, with `apt-get`" in setup
