"""Following a run on several hosts: each host's log, interleaved, with its name in front."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def follow_across(
    names: Sequence[str], run_id: str, hosts_file: Path | None, err: Any, follow: bool = True,
    extra: Sequence[str] = (),
) -> int:  # fmt: skip
    """Each host's log, line by line with a ``[host]`` prefix (each local copy byte-exact:
    every follower is a ``harness logs`` of its own); exit code of the worst host."""
    lock = threading.Lock()
    codes: dict[str, int] = {}
    base = [sys.executable, "-m", "harness"] + (["--hosts", str(hosts_file)] if hosts_file else [])

    def follow_one(name: str) -> None:
        proc = subprocess.Popen(
            [*base, "logs", run_id, *(["--follow"] if follow else []), *extra, "-t", name],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            env={**os.environ, "HARNESS_NO_FANOUT": "1"},
        )  # fmt: skip
        assert proc.stdout is not None
        for raw in proc.stdout:
            with lock:
                sys.stdout.buffer.write(f"[{name}] ".encode() + raw)
                sys.stdout.buffer.flush()
        codes[name] = proc.wait()

    threads = [threading.Thread(target=follow_one, args=(n,)) for n in names]
    for t in threads:
        t.start()
    try:
        for t in threads:
            t.join()
    except KeyboardInterrupt:
        err.print(
            f"\ndetached: {run_id} keeps running; "
            f"harness logs {run_id} -t {','.join(names)} --follow"
        )
        return 130
    bad = {n: c for n, c in codes.items() if c != 0}
    if not follow:
        return max(bad.values(), default=0)
    if bad:
        err.print(
            f"[red]✗ {run_id} failed on "
            + ", ".join(f"{n} (exit {c})" for n, c in bad.items())
            + "[/]"
        )
        return max(bad.values())
    err.print(f"[green]✓ {run_id} succeeded on {', '.join(names)}[/]")
    return 0
