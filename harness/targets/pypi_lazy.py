"""A ``pypi:`` pin fetched lazily: only the wheel members harness reads, over HTTP ranges.

pip's own finder picks the wheel (:mod:`harness.targets.pipindex`), pip's session fetches the
tail, the central directory and the sources (:mod:`harness.targets.lazywheel`) into a sparse
file under ``wheels/.dl-*``, and :func:`harness.targets.unpack.write_layout` makes the same
folder a whole wheel would give -- member by member as the spans arrive, checking every
member's CRC-32 and every kept file against the wheel's RECORD sha256 before it is published.
The sparse file is then removed: the cache keeps the unpacked folder only, whose
``.complete`` records the index's sha256 for the wheel and what the fetch cost.

When lazy fetching cannot be done -- a ``file://`` index, a server or proxy without ranges,
a pip whose internals differ -- :func:`fetch_unpacked` says so in one line (or, where pip's
own run reports better, says nothing: no such version, no index) and returns None: the
caller downloads the whole wheel with ``pip download`` as before.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from harness.errors import Interrupted
from harness.targets.lazywheel import Fetched, LazyWheel, NoRanges
from harness.targets.pipindex import PipIndex, PipUnavailable, WheelLink
from harness.targets.unpack import current, member_kind, rmtree, write_layout

#: ``pip download`` options for the finder, as the CLI path passes them.
PIP_ARGS = ("--no-deps", "--only-binary=:all:", "--retries", "1", "--timeout", "15")
#: The first line of a ``.complete`` note written by a lazy fetch.
LAZY_NOTE = "fetched lazily:"


def enabled() -> bool:
    """``HARNESS_PYPI_LAZY=0`` downloads whole wheels (as before, e.g. to keep them)."""
    return os.environ.get("HARNESS_PYPI_LAZY", "1").strip() not in ("0", "no", "false", "off")


def say(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def fetch_unpacked(
    requirement: str,
    name: str,
    version: str,
    wheels: Path,
    folder_for: Callable[[str], Path],
    tags: Sequence[str],
) -> Path | None:
    """The unpacked folder of ``name==version``, fetched lazily; None: download it whole.

    ``wheels`` holds the temporary ``.dl-*`` folder; ``folder_for(version)`` is where the
    unpacked pin goes (the version as the wheel's file name spells it); ``tags`` are tried
    when no wheel matches this machine (as ``pip download --platform``).

    Raises:
        Interrupted: Ctrl-C; nothing is left in the cache.
        TargetError: the index sent a damaged wheel (a bad CRC, a RECORD mismatch) or broke
            off mid-way; nothing is left in the cache.
    """
    index = PipIndex(PIP_ARGS)
    tmp: Path | None = None
    trace = _Trace(requirement)
    try:
        try:
            link = index.find(name, version) or index.find(name, version, tags)
            trace.mark("index")
        except PipUnavailable as exc:
            say(f"pypi: {exc}; fetching whole wheels with pip download")
            return None
        if link is None:
            return None  # pip download says why (no such version, no index) in its words
        done = folder_for(link.filename.split("-")[1])
        if current(done):
            return done
        scheme = urlsplit(link.url).scheme
        if scheme not in ("http", "https"):
            say(
                f"pypi: {link.filename} is on a {scheme}: index, which has no byte ranges; "
                "fetching the whole wheel"
            )
            return None
        wheels.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=wheels, prefix=".dl-"))
        with (
            LazyWheel(index.session, link.url, tmp / link.filename) as wheel,
            _Bar(requirement) as bar,
        ):
            try:
                zf = wheel.open()
                trace.mark("directory")
            except NoRanges as exc:
                say(
                    f"pypi: {urlsplit(link.url).netloc} serves no byte ranges ({exc}); "
                    f"fetching the whole {link.filename}"
                )
                return None
            write_layout(
                zf,
                wheel.path,
                wheel.members(_wanted, bar.update),
                done,
                link.filename,
                "retry; the index sent a damaged wheel",
                notes=lambda: _notes(link, wheel.stats),
                check_record=True,
            )
            trace.mark("sources+unpack")
            trace.say(wheel.stats)
        return done
    except KeyboardInterrupt:
        raise Interrupted(
            f"nothing written: the partial download of {requirement} was removed; "
            "see the cache with: harness cache list"
        ) from None
    finally:
        if tmp is not None:
            rmtree(tmp)
        index.close()


class _Trace:
    """Where a lazy fetch's time went, on stderr when ``HARNESS_PYPI_TRACE=1`` (the bench)."""

    def __init__(self, what: str) -> None:
        self.what, self.t0 = what, time.perf_counter()
        self.at = self.t0
        self.phases: list[str] = []

    def mark(self, phase: str) -> None:
        now = time.perf_counter()
        self.phases.append(f"{phase} {now - self.at:.2f} s")
        self.at = now

    def say(self, stats: Fetched) -> None:
        if os.environ.get("HARNESS_PYPI_TRACE", "") in ("", "0"):
            return
        say(
            f"pypi: {self.what} lazily: {', '.join(self.phases)} ({stats.requests} requests, "
            f"{stats.fetched / 1e6:.2f} of {stats.total / 1e6:.1f} MB); "
            f"{self.at - self.t0:.2f} s"
        )


def _wanted(member: str) -> bool:
    return member_kind(member) == "keep"


def _notes(link: WheelLink, stats: Fetched) -> tuple[str, ...]:
    """The lines ``.complete`` keeps after the layout: the cost, the index's hash, the URL."""
    return (
        f"{LAZY_NOTE} {stats.fetched} of {stats.total} bytes in {stats.requests} requests",
        f"index sha256: {link.sha256 or 'none given'}",
        f"url: {link.url}",
    )


def lazy_sizes(done: Path) -> tuple[int, int] | None:
    """(bytes fetched, wheel size) from a lazily fetched folder's ``.complete``; else None."""
    try:
        lines = (done / ".complete").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith(LAZY_NOTE):
            words = line.split()
            try:
                return int(words[2]), int(words[4])
            except (IndexError, ValueError):
                return None
    return None


class _Bar:
    """Bytes fetched of the bytes planned, on a terminal only (Rich, on stderr)."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.progress: Any = None
        self.task: Any = None

    def __enter__(self) -> _Bar:
        from rich.console import Console

        if Console(stderr=True).is_terminal:
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                Progress,
                TextColumn,
                TransferSpeedColumn,
            )

            self.progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                DownloadColumn(),
                TransferSpeedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self.progress.start()
            self.task = self.progress.add_task(f"fetching {self.what} (sources)", total=None)
        return self

    def update(self, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress.update(self.task, completed=done, total=total)

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()
