"""Fetch only some members of a remote wheel, with HTTP range requests.

A wheel is a zip: the central directory (every member's name, size, CRC-32 and offset) sits at
the end, and each member is compressed on its own. So: one suffix request for the tail (the
end-of-central-directory record, and usually the whole directory), one more if the directory
starts earlier, then only the wanted members' byte spans -- each from its local header to the
next member's, neighbours merged when the gap between them is small. Every byte lands at its
own offset in a sparse file as large as the wheel, so :mod:`zipfile` reads it as the real wheel
(checking each member's CRC as it is read); unfetched regions are holes, never read.

:meth:`LazyWheel.members` hands out each member as soon as the bytes up to it are in, in the
order they lie in the wheel, so the caller decompresses and writes while later spans are still
on the wire. The spans go over :data:`WORKERS` kept-alive connection(s) of the one session
(the tail's): a range costs about a round trip on a warm connection, a new connection a TLS
handshake and, with a ``cert`` bundle configured, loading it again. Measured against PyPI's CDN
(vllm 0.20.2: 6 spans, 6.3 MB): 1 connection 0.05 s, 2 0.06 s, 4 0.10 s.

Every response must be a 206 for exactly the bytes asked (``If-Range`` ties the later ones to
the first one's validator, so a wheel replaced mid-fetch is noticed, not mixed). A server that
answers the first request with the whole file (200) raises :class:`NoRanges` before its body
is read.
"""

from __future__ import annotations

import os
import queue
import re
import struct
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import TargetError

#: Bytes asked for first, from the end: the end record, and a small wheel's whole directory.
TAIL = 64 * 1024
#: Members closer than this are fetched in one request (the gap costs less than a round trip).
GAP = 256 * 1024
#: Connections (and requests in flight) at once; the spans, in the wheel's order.
WORKERS = 1
CHUNK = 256 * 1024
_CONTENT_RANGE = re.compile(r"^bytes (\d+)-(\d+)/(\d+)$")
_HEADERS = {"Accept-Encoding": "identity"}


class NoRanges(Exception):
    """The server does not answer range requests with 206: fetch the whole wheel instead."""


@dataclass
class Fetched:
    """What one lazy fetch cost: the wheel's size, the bytes that crossed the wire, requests."""

    total: int = 0
    fetched: int = 0
    requests: int = 0


class _Remote:
    """One wheel URL on one session; writes what it fetches into ``out`` at its offsets."""

    def __init__(self, session: Any, url: str, out: int, stop: threading.Event) -> None:
        self.session, self.url, self.out, self.stop = session, url, out, stop
        self.validator: str | None = None
        self.stats = Fetched()
        self._lock = threading.Lock()

    def get(self, start: int | None, end: int) -> tuple[int, int]:
        """Fetch ``bytes=start-end`` (``start`` None: the last ``end`` bytes) into the file;
        the (start, end) the server sent."""
        spec = f"bytes=-{end}" if start is None else f"bytes={start}-{end}"
        headers = {**_HEADERS, "Range": spec}
        if self.validator:
            headers["If-Range"] = self.validator
        with self._lock:
            self.stats.requests += 1
        try:
            resp = self.session.get(self.url, headers=headers, stream=True)
            try:
                return self._take(resp, start, end)
            finally:
                resp.close()
        except OSError as exc:  # requests' errors are OSErrors too: the connection broke
            raise TargetError(
                f"pypi: fetching {self.url.rsplit('/', 1)[-1]} broke off: {exc}",
                "retry; if it persists, set HARNESS_PYPI_LAZY=0 to fetch whole wheels",
            ) from None

    def _take(self, resp: Any, start: int | None, end: int) -> tuple[int, int]:
        if resp.status_code != 206:
            if self.validator is None and resp.status_code == 200:
                raise NoRanges("HTTP 200 to a range request")
            if self.validator is None and resp.status_code == 416 and start is None:
                raise NoRanges("HTTP 416 to a suffix range request")
            changed = " (the wheel changed on the index mid-fetch)"
            raise TargetError(
                f"pypi: {self.url} answered a range request with HTTP {resp.status_code}"
                + (changed if resp.status_code == 200 else ""),
                "retry; if it persists, set HARNESS_PYPI_LAZY=0 to fetch whole wheels",
            )
        m = _CONTENT_RANGE.match(resp.headers.get("Content-Range", "").strip())
        if m is None:
            raise NoRanges("the index sent a 206 without a single Content-Range")
        got_start, got_end, total = (int(g) for g in m.groups())
        if self.validator is None:
            self.stats.total = total
            self.validator = resp.headers.get("ETag") or resp.headers.get("Last-Modified")
            if self.validator and self.validator.startswith("W/"):
                self.validator = None  # a weak ETag may not be used with If-Range
        elif total != self.stats.total or (got_start, got_end) != (start, end):
            raise TargetError(
                f"pypi: {self.url} sent bytes {got_start}-{got_end}/{total} for "
                f"{start}-{end}/{self.stats.total}",
                "retry; if it persists, set HARNESS_PYPI_LAZY=0 to fetch whole wheels",
            )
        pos = got_start
        for chunk in resp.iter_content(CHUNK):
            if self.stop.is_set():
                raise TargetError("pypi: fetch stopped")
            os.pwrite(self.out, chunk, pos)
            pos += len(chunk)
            with self._lock:
                self.stats.fetched += len(chunk)
        if pos != got_end + 1:
            raise TargetError(
                f"pypi: {self.url} ended after {pos - got_start} of "
                f"{got_end + 1 - got_start} bytes",
                "retry; the connection was cut",
            )
        return got_start, got_end


def _directory(tail: bytes, tail_start: int) -> tuple[int, int]:
    """(offset, size) of the central directory, from the end of the file (zip64 too)."""
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < 22:
        raise TargetError("pypi: the wheel has no zip end record: not a wheel")
    _sig, _d, _dcd, _n, entries, size, offset, _c = struct.unpack("<4s4H2LH", tail[at : at + 22])
    if 0xFFFFFFFF in (size, offset) or entries == 0xFFFF:
        loc = at - 20
        if loc < 0 or tail[loc : loc + 4] != b"PK\x06\x07":
            raise TargetError("pypi: the wheel's zip64 locator is missing")
        (eocd64,) = struct.unpack("<Q", tail[loc + 8 : loc + 16])
        rec = eocd64 - tail_start
        if rec < 0 or tail[rec : rec + 4] != b"PK\x06\x06":
            raise TargetError("pypi: the wheel's zip64 end record is missing")
        size, offset = struct.unpack("<2Q", tail[rec + 40 : rec + 56])
    return offset, size


def plan(
    infos: list[zipfile.ZipInfo], directory: int, wanted: Callable[[str], bool]
) -> list[tuple[int, int]]:
    """Inclusive byte spans to fetch: each wanted member from its local header to the next
    member's, neighbours closer than :data:`GAP` merged. Pure."""
    ordered = sorted(infos, key=lambda i: i.header_offset)
    ends = [i.header_offset for i in ordered[1:]] + [directory]
    spans: list[list[int]] = []
    for info, end in zip(ordered, ends, strict=True):
        if not wanted(info.filename) or end <= info.header_offset:
            continue
        if spans and info.header_offset - spans[-1][1] <= GAP:
            spans[-1][1] = end
        else:
            spans.append([info.header_offset, end])
    return [(a, b - 1) for a, b in spans]


class LazyWheel:
    """A remote wheel fetched into the sparse file ``path``: :meth:`open` reads its directory,
    :meth:`members` streams the members. Close it (``with``) to stop the fetch threads."""

    def __init__(self, session: Any, url: str, path: Path) -> None:
        self.path, self.stop = path, threading.Event()
        self._fh = open(path, "w+b")  # noqa: SIM115 -- closed in close()
        self.remote = _Remote(session, url, self._fh.fileno(), self.stop)
        self.zip: zipfile.ZipFile | None = None
        self._have = 0  # from here to the end, the file holds the wheel's bytes
        self._threads: list[threading.Thread] = []

    @property
    def stats(self) -> Fetched:
        return self.remote.stats

    def open(self) -> zipfile.ZipFile:
        """Fetch the tail and the central directory; the wheel as a zip (holes unread).

        Raises:
            NoRanges: the server does not serve ranges (nothing useful was read).
            TargetError: the server misbehaved, or the file is no zip.
        """
        start, end = self.remote.get(None, TAIL)
        self._fh.truncate(self.stats.total)
        offset, _size = _directory(os.pread(self._fh.fileno(), end + 1 - start, start), start)
        if offset < start:
            self.remote.get(offset, start - 1)
        self._have = min(start, offset)
        # unbuffered: a read never runs ahead of a member into a hole that fills in later
        raw = open(self.path, "rb", buffering=0)  # noqa: SIM115 -- the ZipFile owns it
        try:
            self.zip = zipfile.ZipFile(raw)
        except zipfile.BadZipFile as exc:
            raw.close()
            raise TargetError(f"pypi: the wheel's central directory is unreadable: {exc}") from None
        return self.zip

    def members(
        self, wanted: Callable[[str], bool], on_progress: Callable[[int, int], None] | None = None
    ) -> Iterator[zipfile.ZipInfo]:
        """Every member, in the order they lie in the wheel, each once the bytes up to it are
        in the file (the ``wanted`` ones' own bytes fetched, the others only named);
        ``on_progress(fetched, planned)`` while waiting.

        Raises:
            TargetError: the server misbehaved or broke off mid-way.
        """
        assert self.zip is not None, "open() first"
        infos = sorted(self.zip.infolist(), key=lambda i: i.header_offset)
        limit = self._have  # what lies from here on is in the file already
        spans = [(a, min(b, limit - 1)) for a, b in plan(infos, limit, wanted) if a < limit]
        planned = self.stats.fetched + sum(b + 1 - a for a, b in spans)
        done = self._start(spans)
        landed: set[int] = set()
        ready = 0  # spans[:ready] are all in
        for info in infos:
            # wait for every span that starts at or before this member
            while ready < len(spans) and spans[ready][0] <= info.header_offset:
                while ready not in landed:
                    if on_progress is not None:
                        on_progress(self.stats.fetched, planned)
                    landed.add(self._next(done))
                ready += 1
            yield info

    def _start(self, spans: list[tuple[int, int]]) -> queue.SimpleQueue[Any]:
        """Fetch ``spans`` in order on :data:`WORKERS` daemon threads; each puts the index of
        the span it fetched, or the error that stopped it, on the queue returned."""
        todo: queue.SimpleQueue[int] = queue.SimpleQueue()
        for i in range(len(spans)):
            todo.put(i)
        done: queue.SimpleQueue[Any] = queue.SimpleQueue()

        def work() -> None:
            while not self.stop.is_set():
                try:
                    i = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    self.remote.get(*spans[i])
                except BaseException as exc:
                    done.put(exc)
                    return
                done.put(i)

        for _ in range(min(WORKERS, len(spans))):
            self._threads.append(threading.Thread(target=work, daemon=True))
            self._threads[-1].start()
        return done

    def _next(self, done: queue.SimpleQueue[Any]) -> int:
        """The index of the next span fetched, or -1 after a short wait for none (so Ctrl-C
        and the progress bar get through)."""
        try:
            got = done.get(timeout=0.1)
        except queue.Empty:
            if not any(t.is_alive() for t in self._threads) and done.empty():
                raise TargetError("pypi: a fetch worker ended without a word") from None
            return -1
        if isinstance(got, BaseException):
            raise got
        return int(got)

    def close(self) -> None:
        """Stop the fetch threads (between chunks), close the files."""
        self.stop.set()
        deadline = time.monotonic() + 2
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))
        if self.zip is not None:
            self.zip.close()
        self._fh.close()

    def __enter__(self) -> LazyWheel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
