"""`harness check --json` on a handwritten fixture pair (tests/support/fixpairs.py), one way.

A dozen integration tests each check an ``app`` fixture against one release of its ``lib`` and
read the JSON; they share this so the command, the exit-code rule (0: clean, 1: errors found;
anything else is a crash whose stderr the assertion shows) and the error table are written once.
"""

from __future__ import annotations

import json
from typing import Any

from tests.support.cli import run_cli


def check_fixpair(
    env: dict[str, str], app: str, lib: str, version: str, *extra_args: str,
    app_version: str = "0.1.0",
) -> dict[str, Any]:  # fmt: skip
    """The JSON report of ``harness check APP -t pypi:APP==app_version,LIB==version``, run in
    ``env`` (``fixpairs_env``) with ``extra_args`` after ``--json``."""
    spec = f"pypi:{app}=={app_version},{lib}=={version}"
    r = run_cli("check", app, "-t", spec, "--json", *extra_args, env=env)
    assert r.code in (0, 1), r.err
    data: dict[str, Any] = json.loads(r.out)
    return data


def errors_by_line(data: dict[str, Any]) -> dict[tuple[int, str], str]:
    """The message of each error finding, by its (line, category)."""
    return {
        (f["line"], f["category"]): f["message"]
        for f in data["findings"]
        if f["severity"] == "error"
    }
