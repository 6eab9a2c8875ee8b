"""Any command across several hosts: the same command line once per host, concurrently.

A command without a meaning of its own across hosts (``probe``, ``check``, ``patches``,
``diff``...) runs as a separate ``harness`` process per host -- each with that host in ``-t``
and its own kept connection -- and the outputs come back per host, in inventory order, with one
summary line and the worst exit code. ``--json`` gives ``{"host": <that host's JSON>}``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence

from harness.group.result import GroupResult, HostResult


class GroupTarget(Exception):
    """Raised where a single target was expected and ``-t`` named several hosts."""

    def __init__(self, hosts: tuple[str, ...]) -> None:
        super().__init__(", ".join(hosts))
        self.hosts = hosts


def per_host_argv(argv: Sequence[str], host: str) -> list[str]:
    """Pure: ``argv`` with every ``-t``/``--target`` value replaced by ``host``."""
    out: list[str] = []
    it = iter(range(len(argv)))
    for i in it:
        a = argv[i]
        if a in ("-t", "--target") and i + 1 < len(argv):
            out += [a, host]
            next(it, None)
        elif a.startswith("--target="):
            out.append(f"--target={host}")
        elif a.startswith("-t") and len(a) > 2 and not a.startswith("--"):
            out.append(f"-t{host}")
        else:
            out.append(a)
    return out


def fan_out(hosts: tuple[str, ...], argv: Sequence[str]) -> GroupResult[tuple[str, str]]:
    """Run ``harness ARGV`` once per host, concurrently; each value is (stdout, stderr)."""
    from concurrent.futures import ThreadPoolExecutor

    env = {**os.environ, "HARNESS_NO_FANOUT": "1"}  # a host name is one target: no recursion

    def one(host: str) -> HostResult[tuple[str, str]]:
        cp = subprocess.run(
            [sys.executable, "-m", "harness", *per_host_argv(argv, host)],
            capture_output=True, text=True, env=env, check=False,
        )  # fmt: skip
        return HostResult(host, value=(cp.stdout, cp.stderr), exit_code=cp.returncode)

    with ThreadPoolExecutor(max_workers=min(16, len(hosts))) as pool:
        return GroupResult(tuple(pool.map(one, hosts)))


def render(got: GroupResult[tuple[str, str]], as_json: bool) -> int:
    if as_json:
        doc = {}
        for r in got.results:
            out = r.value[0] if r.value else ""
            try:
                doc[r.host] = json.loads(out) if out.strip() else None
            except ValueError:
                doc[r.host] = {"stdout": out}
            if not r.ok:
                err = (r.value[1] if r.value else r.error or "")[-2000:]
                doc[r.host] = {"exit": r.exit_code, "result": doc[r.host], "stderr": err}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return got.exit_code
    for r in got.results:
        out, err = r.value or ("", r.error or "")
        sys.stdout.write(f"── {r.host} (exit {r.exit_code or (2 if r.error else 0)})\n")
        sys.stdout.write(out if out.endswith("\n") or not out else out + "\n")
        if err.strip():
            sys.stdout.write(err if err.endswith("\n") else err + "\n")
    sys.stdout.write(f"── {got.summary()}\n")
    return got.exit_code
