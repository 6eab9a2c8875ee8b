"""Bytes of a log -> text for the screen, in bounded memory whatever the log holds.

Logs arrive in chunks cut anywhere: in the middle of a UTF-8 sequence, of a 100 MB line, of a
``\\r`` progress storm. :class:`Utf8Decoder` keeps at most 3 bytes between chunks, so a split
character comes out whole and an invalid byte becomes U+FFFD on screen (the local copy keeps
the bytes exact: decoding is for display only). :class:`LineBuffer` turns text into the lines a
terminal would show, keeping at most ``max_chars`` of any line and at most ``max_lines`` lines
per chunk, and counting what it left out. :func:`tail_offset` finds where the last N lines
start by reading backwards, a block at a time.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable
from dataclasses import dataclass


class Utf8Decoder:
    """Incremental UTF-8 with replacement: the same text however the bytes are chunked."""

    #: The longest incomplete sequence a UTF-8 decoder ever has to hold back.
    MAX_PENDING = 3

    def __init__(self) -> None:
        self._dec = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(self, data: bytes) -> str:
        return self._dec.decode(data, final=False)

    def flush(self) -> str:
        """End of stream: a dangling incomplete sequence becomes U+FFFD."""
        return self._dec.decode(b"", final=True)

    @property
    def pending(self) -> int:
        """Bytes held back (the start of a sequence split across chunks); at most 3."""
        return len(self._dec.getstate()[0])


@dataclass(frozen=True)
class Line:
    """One finished line as shown: at most ``max_chars`` of it, and how much was cut."""

    text: str
    dropped: int = 0


class LineBuffer:
    """Text -> finished lines, with a terminal's idea of ``\\r`` and bounded memory.

    ``\\r`` starts the line over (tqdm progress bars); what a terminal would show for the line
    is its last non-empty ``\\r`` segment. Only the first ``max_chars`` of a segment are kept
    (the rest is counted in ``dropped``); a chunk holding more than ``max_lines`` finished
    lines yields only its last ``max_lines`` (the rest are counted in ``skipped``) -- a live
    view cannot show more anyway, and the local copy has every byte.
    """

    def __init__(self, max_chars: int = 4096, max_lines: int = 2000) -> None:
        self.max_chars = max_chars
        self.max_lines = max_lines
        self.skipped = 0  # finished lines never returned (too many in one chunk)
        self._seg = ""  # the current \r segment (at most max_chars)
        self._seg_dropped = 0
        self._shown = ""  # the last non-empty segment of this line before a \r
        self._shown_dropped = 0

    @property
    def current(self) -> str:
        """The unfinished line as a terminal shows it now (for a live status row)."""
        return self._seg if self._seg or self._seg_dropped else self._shown

    def held_chars(self) -> int:
        """Characters held between calls -- the memory bound the tests assert."""
        return len(self._seg) + len(self._shown)

    def feed(self, text: str) -> list[Line]:
        count = text.count("\n")
        start = 0
        if count > self.max_lines:
            # Skip to just after the (count - max_lines)th newline without splitting it all.
            skip = count - self.max_lines
            for _ in range(skip):
                start = text.index("\n", start) + 1
            self.skipped += skip
            self._reset()
        out: list[Line] = []
        while True:
            end = text.find("\n", start)
            if end < 0:
                self._add(text[start:])
                return out
            self._add(text[start:end])
            out.append(self._finish())
            start = end + 1

    def _add(self, part: str) -> None:
        if "\r" not in part:
            self._append(part)
            return
        segments = part.split("\r")
        self._append(segments[0])
        for seg in segments[1:]:
            self._carriage_return()
            self._append(seg)

    def _append(self, seg: str) -> None:
        room = self.max_chars - len(self._seg)
        if len(seg) <= room:
            self._seg += seg
        else:
            self._seg += seg[: max(room, 0)]
            self._seg_dropped += len(seg) - max(room, 0)

    def _carriage_return(self) -> None:
        if self._seg or self._seg_dropped:
            self._shown, self._shown_dropped = self._seg, self._seg_dropped
        self._seg, self._seg_dropped = "", 0

    def _finish(self) -> Line:
        if self._seg or self._seg_dropped:
            line = Line(self._seg, self._seg_dropped)
        else:  # "...\r\n" or a bar that ended with \r: the terminal shows the last segment
            line = Line(self._shown, self._shown_dropped)
        self._reset()
        return line

    def _reset(self) -> None:
        self._seg, self._seg_dropped = "", 0
        self._shown, self._shown_dropped = "", 0


def tail_offset(
    read: Callable[[int, int], bytes], size: int, lines: int, block: int = 64 * 1024
) -> int:
    """Byte offset where the last ``lines`` lines of a ``size``-byte file start.

    Reads backwards ``block`` bytes at a time through ``read(offset, length)``; a newline
    that ends the file does not count as the start of an (empty) last line.
    """
    if lines <= 0:
        return size
    end = size
    need = lines
    pos = size
    skip_last = True
    while pos > 0:
        start = max(0, pos - block)
        chunk = read(start, pos - start)
        i = len(chunk)
        if skip_last and end == size and i and chunk[i - 1 : i] == b"\n":
            i -= 1  # the newline that ends the last line
        skip_last = False
        while i > 0:
            j = chunk.rfind(b"\n", 0, i)
            if j < 0:
                break
            need -= 1
            if need == 0:
                return start + j + 1
            i = j
        pos = start
    return 0


#: Lines of a log quoted when a service failed before it was ready.
LAST_LINES = 5


def last_lines(text: str, n: int = LAST_LINES) -> list[str]:
    """The last ``n`` non-blank lines of a log, harness's own lines left out (pure)."""
    lines = [ln.rstrip() for ln in text.replace("\r", "\n").splitlines()]
    return [ln for ln in lines if ln.strip() and not ln.startswith("harness: ")][-n:]
