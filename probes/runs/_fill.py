"""While a step that declared a disk budget runs, its output filesystem watched: at 90 %
full its log says so once, with the space left and the rate it fills at (and so roughly
when it is full) -- an hours-long generate that will run out says it while there is time.

Part of the run program (see :mod:`probes.runs.supervisor`), copied into every run directory.
Stdlib only; a daemon thread of the supervisor.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

#: the share of the filesystem in use at which the log says so
FULL_AT = 0.9
#: seconds between two looks (statvfs is cheap)
POLL = 1.0


def _nearest(path: str) -> str:
    path = os.path.abspath(path)
    while not os.path.exists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    return path


def _mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB"


def look(path: str) -> tuple[int, int]:
    """(bytes available to the step, bytes the filesystem holds) of ``path``'s filesystem."""
    st = os.statvfs(_nearest(path))
    return st.f_bavail * st.f_frsize, st.f_blocks * st.f_frsize


def words(path: str, free: int, total: int, rate: float) -> str:
    """``harness: /data's filesystem is 93% full: 12.0 MB left, filling at 2.0 MB/s (full
    in ~6 s)``."""
    used = 1.0 - free / total if total else 1.0
    when = f" (full in ~{free / rate:.0f} s)" if rate > 0 else ""
    return (f"harness: {path}'s filesystem is {used:.0%} full: {_mb(free)} left, filling at "
            f"{_mb(rate)}/s{when}")  # fmt: skip


def _clock(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def progress(out: str, since: float, total: int, per_token: int, elapsed: float) -> dict[str, Any]:
    """What the step has written to ``out`` so far, read from its files: samples done (every
    file there; those of an earlier run count as done), bytes and tokens this run wrote
    (files newer than ``since``; tokens = bytes / bytes per token), rates and ETA."""
    done, fresh, written = 0, 0, 0
    try:
        entries = list(os.scandir(out))
    except OSError:
        entries = []
    for e in entries:
        try:
            if not e.is_file() or e.name.startswith(".") or e.name.endswith(".tmp"):
                continue
            st = e.stat()
        except OSError:
            continue
        done += 1
        if st.st_mtime >= since:
            fresh += 1
            written += st.st_size
    tokens = written // per_token if per_token else 0
    rate = fresh / elapsed if elapsed > 0 else 0.0
    eta = (total - done) / rate if rate > 0 and total > done else None
    return {"done": done, "total": total, "bytes": written, "tokens": tokens,
            "tokens_per_s": tokens / elapsed if elapsed > 0 else 0.0, "elapsed": elapsed,
            "eta": eta}  # fmt: skip


def progress_words(p: dict[str, Any]) -> str:
    """``harness: progress 120/5,000 samples · 10,240 tokens/s · elapsed 0:10:00 · ETA
    6:46:40 · 7.5 GB written`` (and `` · server ...`` when its service's metrics answer)."""
    from probes.runs._metrics import words as server_words

    eta = "?" if p["eta"] is None else _clock(p["eta"])
    return (f"harness: progress {p['done']:,}/{p['total']:,} samples · "
            f"{p['tokens_per_s']:,.0f} tokens/s · elapsed {_clock(p['elapsed'])} · ETA {eta} · "
            f"{_mb(p['bytes'])} written" + server_words(p.get("server") or {}))  # fmt: skip


def watch(
    spec: dict[str, Any], say: Callable[[str], None], run_dir: str, poll: float = POLL
) -> Any:
    """Start the watch (a daemon thread: it ends with the supervisor): the fill of the output
    filesystem (once, at 90 %), and every ``every`` seconds a progress line in the log and
    ``progress.json`` in the run directory -- with the server's own counts when the step's
    service answers ``metrics`` (a URL the launch added; asked until it fails once)."""
    import json
    import threading  # here: a run that declares no budget does not import it

    from probes.runs._metrics import load, scrape

    path = str(spec["out"])
    total, per_token = int(spec.get("samples") or 0), int(spec.get("per_token") or 0)
    every = float(spec.get("every") or 60.0)
    since, started = time.time(), time.monotonic()
    metrics = [str(spec["metrics"])] if spec.get("metrics") else []

    def run() -> None:
        first: tuple[int, float] | None = None
        warned, last = False, started
        seen: tuple[dict[str, float], float] | None = None  # the last scrape, and when
        if metrics:
            got = scrape(metrics[0])
            seen = None if got is None else (got, started)
        while True:
            now = time.monotonic()
            try:
                free, size = look(path)
            except OSError:
                free, size = 0, 0
            first = first or (free, now)
            if not warned and size and 1.0 - free / size >= FULL_AT:
                took = now - first[1]
                say(words(path, free, size, (first[0] - free) / took if took > 0 else 0.0))
                warned = True
            if total and now - last >= every:
                last = now
                p = progress(path, since, total, per_token, now - started)
                got = scrape(metrics[0]) if metrics else None
                if got is not None:
                    p["server"] = load(seen[0] if seen else None, got, now - seen[1] if seen else 0)
                    seen = (got, now)
                elif metrics:  # no metrics there (or gone): stop asking
                    metrics.clear()
                say(progress_words(p))
                tmp = os.path.join(run_dir, "progress.json.tmp")
                try:
                    with open(tmp, "w", encoding="utf-8") as f:
                        json.dump({**p, "at": time.time()}, f)
                    os.replace(tmp, os.path.join(run_dir, "progress.json"))
                except OSError:
                    pass
            time.sleep(min(poll, every))

    t = threading.Thread(target=run, name="harness-fill", daemon=True)
    t.start()
    return t
