"""The live views of a followed run's log: they print as the log arrives, so they are the
command line's (views return renderables; only the CLI prints).

On a terminal, :class:`LiveView` prints log lines above a status row (elapsed time, phase,
a progress bar for ``29/64``-style phases, the current ``\\r`` line). Anywhere else (a pipe,
a file, CI), :class:`PlainView` writes the log's bytes to stdout as they come, unchanged
(invalid UTF-8, ``\r`` and a missing last newline included), and its own messages to
stderr, so ``harness logs RUN > file`` is the log byte for byte.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

from harness.cli.common import console, show
from harness.runs.follow.decode import LineBuffer, Utf8Decoder
from harness.runs.follow.phases import PhaseTracker
from harness.runs.follow.stream import LocalCopy
from harness.runs.record.lifecycle import RunState
from harness.runs.record.models import FailureSummary, Phase, RunInfo
from harness.runs.record.state import duration_of, format_duration
from harness.views.runs import esc, failure

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.live import Live

READ_CHUNK = 1 << 20


class StreamView:
    """Shared by both live views: reads the local copy from its own offset, decodes, tracks.

    The view reads what the follower wrote into the copy rather than the bytes in flight, so
    it can start anywhere (``--offset``, ``--tail``) and replay from disk without holding
    anything in memory.
    """

    def __init__(self, info: RunInfo, copy: LocalCopy, start: int | None) -> None:
        self.info = info
        self.copy = copy
        self.pos = start  # None until known (--tail waits for the catch-up)
        self._resume: int | None = start
        self.decoder = Utf8Decoder()
        self.tracker = PhaseTracker()
        self._attached = time.monotonic()
        started, seen = info.started_at, info.observed_at
        self._elapsed0 = (seen - started) if started is not None and seen is not None else None

    def start_at(self, offset: int) -> None:
        self.pos = self._resume = offset
        self.pump()

    @property
    def resume_offset(self) -> int:
        """Where a reattach continues exactly after what was shown (no split character).

        Advanced only once a chunk is fully shown: a Ctrl-C in the middle of writing one
        makes the resumed stream repeat a little rather than skip anything.
        """
        return self._resume if self._resume is not None else (self.pos or 0)

    def elapsed(self) -> float | None:
        if self.info.state != RunState.RUNNING:
            return duration_of(self.info)
        if self._elapsed0 is None:
            return None
        return self._elapsed0 + time.monotonic() - self._attached

    def pump(self, offset: int | None = None, data: bytes = b"") -> None:
        """Show what the copy holds past our position.

        ``offset``/``data``: bytes that just landed there -- shown straight away when they
        are exactly what comes next, saving a read back from disk.
        """
        if self.pos is None:
            return
        if data and offset == self.pos:
            self._take(data)
        while True:
            chunk = self.copy.read(self.pos, READ_CHUNK)
            if not chunk:
                return
            self._take(chunk)

    def _take(self, data: bytes) -> None:
        assert self.pos is not None
        if self._resume is None:
            self._resume = self.pos
        self.pos += len(data)
        self.show_bytes(data)
        text = self.decoder.feed(data)
        if text:
            changed = self.tracker.update(text)
            self.show(text)
            if changed and self.tracker.phase is not None:
                self.phase_changed(self.tracker.phase)
        self._resume = self.pos - self.decoder.pending

    def flush(self) -> None:
        self.pump()
        tail = self.decoder.flush()
        if tail:
            self.tracker.update(tail)
            self.show(tail)
        if self.tracker.flush() and self.tracker.phase is not None:
            self.phase_changed(self.tracker.phase)
        self.end_of_text()

    # Hooks for the two views.
    def show_bytes(self, data: bytes) -> None: ...
    def show(self, text: str) -> None: ...
    def phase_changed(self, phase: Phase) -> None: ...
    def end_of_text(self) -> None: ...
    def idle(self) -> None: ...
    def message(self, markup: str) -> None: ...
    def close(self) -> None: ...


class PlainView(StreamView):
    """The log's bytes to stdout, unchanged, as they arrive; harness's own lines to stderr.

    Decoding still happens (phases are recognised from the text), but only for the messages:
    what a pipe or a file receives is the step's output byte for byte.
    """

    def __init__(self, info: RunInfo, copy: LocalCopy, start: int | None, err: Console) -> None:
        super().__init__(info, copy, start)
        self.err = err
        self._out = sys.stdout.buffer
        self._mid_line = False  # the log's last byte shown was not a newline

    def show_bytes(self, data: bytes) -> None:
        self._out.write(data)
        self._out.flush()
        if data:
            self._mid_line = not data.endswith(b"\n")

    def phase_changed(self, phase: Phase) -> None:
        self.message(f"[dim]phase: {esc(_phase_text(phase))}[/]")

    def end_of_text(self) -> None:
        self._out.flush()
        self._break_line()

    def message(self, markup: str) -> None:
        self._out.flush()
        self._break_line()
        self.err.print(markup, soft_wrap=True)

    def _break_line(self) -> None:
        """Where the log and harness's lines meet in one file (``2>&1``) and the log stopped
        mid-line, end that line on stderr, so no verdict is glued to the log's last line;
        stdout itself stays the log byte for byte."""
        if self._mid_line and same_file(self._out, self.err.file):
            self.err.file.write("\n")
            self.err.file.flush()
        self._mid_line = False


class LiveView(StreamView):
    """Terminal view: lines scroll above a status row that Rich redraws in place."""

    def __init__(self, info: RunInfo, copy: LocalCopy, start: int | None, out: Console) -> None:
        from rich.live import Live

        super().__init__(info, copy, start)
        self.out = out
        self.lines = LineBuffer(max_chars=max(out.width * 4, 400), max_lines=500)
        self._live: Live | None = Live(
            self._status(), console=out, auto_refresh=False, transient=True
        )
        self._live.start()
        self._last_refresh = 0.0

    def show(self, text: str) -> None:
        from rich.text import Text

        lines = self.lines.feed(text)
        skipped, self.lines.skipped = self.lines.skipped, 0
        block = Text()
        if skipped:
            block.append(f"… {skipped:,} lines not shown (all in {self.copy.path})\n", "dim")
        for line in lines:
            block.append_text(Text.from_ansi(line.text, end=""))
            if line.dropped:
                block.append(f" … [+{line.dropped:,} chars]", "dim")
            block.append("\n")
        if block:
            block.rstrip()
            self.out.print(block, soft_wrap=True)
        self.idle(force=False)

    def end_of_text(self) -> None:
        rest = self.lines.current
        if rest:
            self.lines.feed("\n")
            self.out.print(rest, soft_wrap=True, markup=False)

    def idle(self, force: bool = True) -> None:
        now = time.monotonic()
        if self._live is None or (not force and now - self._last_refresh < 0.1):
            return
        self._last_refresh = now
        self._live.update(self._status(), refresh=True)

    def message(self, markup: str) -> None:
        self.out.print(markup, soft_wrap=True)

    def close(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def _status(self) -> RenderableType:
        from rich.console import Group
        from rich.progress_bar import ProgressBar
        from rich.table import Table
        from rich.text import Text

        row = Table.grid(padding=(0, 1))
        phase = self.tracker.phase
        cells: list[Any] = [
            Text(self.info.id, style="bold"),
            Text(f"{self.info.state} {format_duration(self.elapsed())}", style="cyan"),
        ]
        if phase is not None:
            cells.append(Text(_phase_name(phase), style="magenta"))
            if phase.fraction is not None:
                cells.append(ProgressBar(total=1.0, completed=phase.fraction, width=24))
                cells.append(Text(f"{phase.done}/{phase.total}"))
        for _ in cells:
            row.add_column(no_wrap=True)
        row.add_row(*cells)
        current = self.lines.current
        if current:
            return Group(row, Text(current[: self.out.width - 1], style="dim", no_wrap=True))
        return row


def same_file(a: Any, b: Any) -> bool:
    """Whether two open streams write to one file, pipe or terminal (``2>&1``)."""
    import os

    try:
        x, y = os.fstat(a.fileno()), os.fstat(b.fileno())
    except (OSError, ValueError, AttributeError):
        return False
    return (x.st_dev, x.st_ino) == (y.st_dev, y.st_ino)


def _phase_name(phase: Phase) -> str:
    return phase.name + (f" ({phase.detail})" if phase.detail else "")


def _phase_text(phase: Phase) -> str:
    text = _phase_name(phase)
    if phase.done is not None and phase.total is not None:
        text += f" {phase.done}/{phase.total}"
    return text


def make_view(info: RunInfo, copy: LocalCopy, start: int | None) -> StreamView:
    out = console()
    if out.is_terminal:
        return LiveView(info, copy, start, out)
    return PlainView(info, copy, start, console(stderr=True))


class _Screen:
    """The terminal a followed run is shown on (:class:`harness.runs.follow.view.Screen`)."""

    @staticmethod
    def view(info: RunInfo, copy: LocalCopy, start: int | None) -> StreamView:
        return make_view(info, copy, start)

    @staticmethod
    def notes(shown: Any) -> Console:
        return shown.err if isinstance(shown, PlainView) else console()

    @staticmethod
    def failure(out: Console, summary: FailureSummary, installed: str | None) -> None:
        show(out, failure(summary, installed))


SCREEN = _Screen()
