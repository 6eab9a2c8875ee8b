"""Issue 35 item 15: the README's ``harness check`` example is what the command prints today:
its command, run for real, gives the counts of the example's last line, and every finding line
the example shows (the ``  :LINE`` ones, ``...`` marking what it leaves out)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from tests.support.cli import run_cli

README = Path(__file__).resolve().parents[2] / "README.md"
COUNTS = re.compile(r"^(\d+ error\(s\), \d+ warning\(s\), \d+ info — .* checked) in ")


def example() -> tuple[list[str], list[str]]:
    text = README.read_text(encoding="utf-8")
    section = text.split("### `harness check CALLER", 1)[1]
    block = re.search(r"```console\n(.*?)```", section, re.S)
    assert block is not None
    lines = block.group(1).splitlines()
    assert lines[0].startswith("$ harness check ")
    return shlex.split(lines[0][2:])[1:], lines[1:]


def test_the_check_example_matches_what_check_prints(cli_env: dict[str, str]) -> None:
    argv, shown = example()
    r = run_cli(*argv, env=cli_env)
    assert r.code == 1, r.err
    printed = r.out.splitlines()
    (said,) = [COUNTS.match(line).group(1) for line in printed if COUNTS.match(line)]
    (claimed,) = [COUNTS.match(line).group(1) for line in shown if COUNTS.match(line)]
    assert claimed == said
    assert shown[0] == printed[0]
    for line in shown:
        if re.match(r"^  :\d+ ", line):
            whole = line.removesuffix(" ...").removesuffix("; ...")
            assert any(p.startswith(whole) for p in printed), line
