"""Rich views of runs: preflight verdicts, the live log, the runs table, stop reports.

No decisions here: states, labels, phases, failure summaries and verdicts arrive made.

Two live views. On a terminal, :class:`LiveView` prints log lines above a status row
(elapsed time, phase, a progress bar for ``29/64``-style phases, the current ``\\r`` line).
Anywhere else (a pipe, a file, CI), :class:`PlainView` writes the log's bytes to stdout as
they come, unchanged (invalid UTF-8, ``\r`` and a missing last newline included), and its
own messages to stderr, so ``harness logs RUN > file`` is the log byte for byte.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from harness.runs.decode import LineBuffer, Utf8Decoder
from harness.runs.lifecycle import state_label
from harness.runs.models import FailureSummary, Phase, RunInfo, StopReport, Verdict
from harness.runs.phases import PhaseTracker
from harness.runs.state import describe_holder, duration_of, format_duration
from harness.runs.stream import LocalCopy

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.live import Live

READ_CHUNK = 1 << 20


def console(stderr: bool = False) -> Console:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=False)


def esc(text: str) -> str:
    from rich.markup import escape

    return escape(text)


# -- one-shot views ------------------------------------------------------------------------


def verdicts(out: Console, items: Sequence[Verdict], prefix: str = "") -> None:
    for line in verdict_lines(items, prefix):
        out.print(line, soft_wrap=True)


def verdict_lines(items: Sequence[Verdict], prefix: str = "") -> list[str]:
    """The preflight's verdicts as markup lines, each hint under its line."""
    width = max((len(v.check) for v in items), default=0)
    out = []
    for v in items:
        out.append(f"{esc(prefix)}{v.level.mark} {v.check.ljust(width)}  {esc(v.message)}")
        if v.hint and v.level.hinted:
            out.append(f"  {' ' * width}  [yellow]hint:[/] {esc(v.hint)}")
    return out


def _wide(out: Console) -> Console:
    from rich.console import Console

    return Console(file=out.file, width=max(out.width, 250), highlight=False, no_color=out.no_color)


def _when(ts: float | None) -> str:
    return "-" if ts is None else datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S")


def runs_table(out: Console, runs: Sequence[RunInfo], target: str) -> None:
    from rich.table import Table

    if not runs:
        out.print(f"no runs on {esc(target)} yet; start one with harness run STEP")
        return
    if not out.is_terminal:
        out = _wide(out)  # a pipe gets whole ids, not "count-2025…"
    table = Table(box=None, pad_edge=False, header_style="bold")
    for col in ("run", "step", "state", "started", "duration", "exit"):
        table.add_column(col, no_wrap=True)
    colour = {"running": "cyan", "succeeded": "green", "failed": "red", "killed": "magenta"}
    for r in sorted(runs, key=lambda r: (r.started_at or 0.0, r.id)):
        from harness.runs.lifecycle import exit_code_of

        code = exit_code_of(r)
        style = colour.get(r.state, "yellow")
        table.add_row(
            r.id,
            r.record.step + (" (smoke)" if r.record.smoke else ""),
            f"[{style}]{esc(state_label(r))}[/]",
            _when(r.started_at),
            format_duration(duration_of(r)),
            "-" if code is None else str(code),
        )
    out.print(table)


def stop_report(out: Console, rep: StopReport) -> None:
    run = rep.run
    if rep.already_finished and not (rep.terminated or rep.killed):
        out.print(f"{run.id} had already ended: {esc(state_label(run))}")
    else:
        n = len(rep.terminated)
        out.print(
            f"{run.id}: SIGTERM to {n} process(es)" + (f" ({_pids(rep.terminated)})" if n else "")
        )
        if rep.killed:
            out.print(f"  SIGKILL after the grace period to {len(rep.killed)}: {_pids(rep.killed)}")
        out.print(f"  state: [bold]{esc(state_label(run))}[/]")
    if rep.unwritten:
        out.print(
            f"[yellow]no space left on the disk that holds {esc(run.record.run_dir)}: "
            f"{', '.join(rep.unwritten)} could not be written; the processes were signalled "
            "all the same[/]",
            soft_wrap=True,
        )
    if rep.remaining:
        out.print(f"[red]still running: {_pids(rep.remaining)}[/] (not ours to signal?)")
    if rep.holders:
        out.print(f"[yellow]GPU holders remaining ({len(rep.holders)}):[/]")
        for h in rep.holders:
            out.print(f"  {esc(describe_holder(h))}  {', '.join(h.devices)}", soft_wrap=True)
    else:
        out.print("GPU holders remaining: none")


def _pids(pids: Sequence[int]) -> str:
    return ", ".join(str(p) for p in pids)


def failure(out: Console, summary: FailureSummary, installed: str | None = None) -> None:
    """The exception, its frames, and for an API mismatch the call site, the callee's
    installed signature (``installed``, probed by the caller) and the commands to run."""
    out.print(f"[bold red]{esc(summary.exc_type)}[/]: {esc(summary.message)}", soft_wrap=True)
    for d in summary.details[:4] if summary.callee else ():  # pydantic's per-field lines
        out.print(f"  {esc(d)}", soft_wrap=True)
    for f in summary.frames:
        out.print(f"  [cyan]{esc(f.file)}:{f.line}[/] in {esc(f.func)}", soft_wrap=True)
        if f.code:
            out.print(f"      [dim]{esc(f.code)}[/]", soft_wrap=True)
    cause = summary.root_cause
    if cause is not None:
        out.print("[bold]root cause (logged earlier):[/]")
        failure(out, cause, installed)
        return
    if summary.caller is not None and summary.callee is not None:
        site = summary.caller
        out.print(f"[bold]call site:[/] [cyan]{esc(site.file)}:{site.line}[/]", soft_wrap=True)
        if site.code:
            out.print(f"      [dim]{esc(site.code)}[/]", soft_wrap=True)
    if installed:
        out.print(f"[bold]{esc(installed)}[/]", soft_wrap=True)
    if summary.hint:
        out.print(f"[yellow]hint:[/] {esc(summary.hint)}", soft_wrap=True)
    for cmd in summary.commands:
        out.print(f"  [bold]{esc(cmd)}[/]", soft_wrap=True)


# -- live views ----------------------------------------------------------------------------


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
        if self.info.state != "running":
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

    def show_bytes(self, data: bytes) -> None:
        self._out.write(data)
        self._out.flush()

    def phase_changed(self, phase: Phase) -> None:
        self.message(f"[dim]phase: {esc(_phase_text(phase))}[/]")

    def end_of_text(self) -> None:
        self._out.flush()

    def message(self, markup: str) -> None:
        self._out.flush()
        self.err.print(markup, soft_wrap=True)


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
    """The terminal a followed run is shown on (:class:`harness.runs.attach.Screen`)."""

    @staticmethod
    def view(info: RunInfo, copy: LocalCopy, start: int | None) -> StreamView:
        return make_view(info, copy, start)

    @staticmethod
    def notes(shown: Any) -> Console:
        return shown.err if isinstance(shown, PlainView) else console()

    @staticmethod
    def failure(out: Console, summary: FailureSummary, installed: str | None) -> None:
        failure(out, summary, installed)


SCREEN = _Screen()
