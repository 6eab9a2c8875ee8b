"""Issue 21 item 14: ``harness runs --limit N`` on the ``local`` target, with real runs."""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.test_runs_ssh import local_harness

PIPELINE = """
[steps.hello]
command = ["{python}", "-c", "print('hello')"]
"""


def test_runs_limit_shows_the_newest_and_says_how_many_more(tmp_path: Path) -> None:
    h = local_harness(tmp_path, PIPELINE)
    for _ in range(3):
        r = h("run", "hello", "-t", "local")
        assert r.code == 0, r.err
    every = json.loads(h("runs", "-t", "local", "--json").out)  # --json: all, as before
    assert len(every) == 3

    def table(*limit: str) -> tuple[list[str], str]:
        r = h("runs", "-t", "local", *limit)
        assert r.code == 0, r.err
        rows = [line.split()[0] for line in r.out.splitlines()[1:] if line.startswith("hello-")]
        return rows, r.out

    full, out = table("--limit", "0")  # oldest first, the newest at the bottom
    assert len(full) == 3 and "not shown" not in out
    assert {e["record"]["id"] for e in every} == set(full)
    rows, out = table("--limit", "2")
    assert rows == full[-2:], out
    assert out.splitlines()[-1] == "1 older run(s) not shown; --limit 3 (or 0) shows all"
    assert table()[0] == full  # the default (20) shows all 3
    assert len(json.loads(h("runs", "-t", "local", "--json", "--limit", "2").out)) == 2
