"""Run ``pip download`` and show its progress (size, rate, time left) with Rich.

pip does the network work, so the user's index, proxy and certificates apply; its own bar is
turned off and its output captured (errors are parsed, not dumped on the user). Progress is
read from outside: pip names the file and its size on stdout (``Downloading X (400.9 MB)``)
and writes it under ``$TMPDIR``, which points into our own temporary folder, so the bar is
the partial file's size. On anything but a terminal nothing is drawn.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import TargetError
from harness.targets.pipout import downloading

#: Seconds between looks at the partial file (and redraws).
POLL_S = 0.1


@dataclass
class _Seen:
    """What pip's stdout has said so far (filled by a reader thread)."""

    name: str | None = None
    total: int | None = None
    out: list[str] = field(default_factory=list)


def run_pip(
    argv: list[str], workdir: Path, what: str, timeout: float = 1800.0
) -> subprocess.CompletedProcess[str]:
    """Run a ``pip download`` argv whose ``-d`` lies in ``workdir``; progress on a terminal.

    Raises:
        TargetError: pip ran longer than ``timeout`` seconds (it is killed).
        KeyboardInterrupt: after pip (which got the Ctrl-C too) has ended.
    """
    tmp = workdir / ".tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "TMPDIR": str(tmp)}
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    seen = _Seen()
    err: list[str] = []
    readers = [
        threading.Thread(target=_read_out, args=(proc, seen), daemon=True),
        threading.Thread(target=lambda: err.append(proc.stderr.read() if proc.stderr else "")),
    ]
    for t in readers:
        t.start()
    try:
        _wait(proc, workdir, what, seen, time.monotonic() + timeout)
    except KeyboardInterrupt:
        _end(proc)
        raise
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    for t in readers:
        t.join()
    return subprocess.CompletedProcess(argv, proc.returncode, "".join(seen.out), "".join(err))


def _read_out(proc: subprocess.Popen[str], seen: _Seen) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        seen.out.append(line)
        got = downloading(line)
        if got is not None:
            seen.name, seen.total = got


def _wait(
    proc: subprocess.Popen[str], workdir: Path, what: str, seen: _Seen, deadline: float
) -> None:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    console = Console(stderr=True)
    progress: Progress | None = None
    task = None
    try:
        while proc.poll() is None:
            if time.monotonic() > deadline:
                raise TargetError(f"pypi: pip download of {what} took too long; it was stopped")
            time.sleep(POLL_S)
            size = _partial_size(workdir)
            if not console.is_terminal or (seen.total is None and not size):
                continue
            if progress is None:
                progress = Progress(
                    TextColumn("[bold]{task.description}"),
                    BarColumn(),
                    DownloadColumn(),
                    TransferSpeedColumn(),
                    TimeRemainingColumn(),
                    console=console,
                    transient=True,
                )
                progress.start()
                task = progress.add_task(f"downloading {what}", total=seen.total)
            assert task is not None
            total = seen.total if seen.total is None else max(seen.total, size)
            progress.update(task, completed=size, total=total)
    finally:
        if progress is not None:
            progress.stop()


def _partial_size(workdir: Path) -> int:
    """Bytes of the wheel being written (pip writes it under $TMPDIR, then copies it). pip
    makes and removes its temporary folders meanwhile: ``os.walk`` passes over one that
    vanishes mid-walk (``Path.rglob`` raised FileNotFoundError there)."""
    biggest = 0
    for root, _dirs, files in os.walk(workdir):
        for name in files:
            if name.endswith(".whl"):
                try:
                    biggest = max(biggest, os.stat(os.path.join(root, name)).st_size)
                except OSError:
                    continue
    return biggest


def _end(proc: subprocess.Popen[str]) -> None:
    """pip got the same Ctrl-C: give it a moment to clean up, then make sure it is gone."""
    try:
        proc.wait(timeout=3)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
