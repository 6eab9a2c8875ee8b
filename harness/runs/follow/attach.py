"""Attach to a run: stream its log into the local copy and onto the screen, to its end.

Used by a foreground ``harness run`` and by ``harness logs``. Ctrl-C detaches (the step keeps
running) and prints the exact ``--offset`` to resume from; a dropped link reconnects; at the
end the run's state is shown, with the failure summary when it failed.
"""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import Any, Protocol

from rich.markup import escape as esc

from harness.cache import cache_root
from harness.errors import ConnectError, HarnessError, RunError
from harness.runs.follow.decode import last_lines, tail_offset
from harness.runs.follow.failure import summarize
from harness.runs.follow.stream import (
    Follower,
    LocalCopy,
    complete_copy,
    copy_path,
    early_follower_argv,
    follower_argv,
    mark_complete,
)
from harness.runs.record.lifecycle import RunState, exit_code_of, state_label
from harness.runs.record.models import FailureSummary, RunInfo
from harness.runs.target.context import Context
from harness.targets.base import ByteStream, LinkLost, Target


class Shown(Protocol):
    """A run's log on the screen (:class:`harness.cli.screen.StreamView`)."""

    @property
    def resume_offset(self) -> int: ...
    def start_at(self, offset: int) -> None: ...
    def pump(self, offset: int | None = None, data: bytes = b"") -> None: ...
    def flush(self) -> None: ...
    def idle(self) -> None: ...
    def message(self, markup: str) -> None: ...
    def close(self) -> None: ...


class Screen(Protocol):
    """Where a followed run is shown: given by the CLI (:data:`harness.cli.screen.SCREEN`),
    so that this use case imports no view."""

    def view(self, info: RunInfo, copy: LocalCopy, start: int | None) -> Shown: ...
    def notes(self, shown: Shown) -> Any: ...
    def failure(self, out: Any, summary: FailureSummary, installed: str | None) -> None: ...


#: Bytes of the log's end searched for the final exception.
SUMMARY_TAIL = 256 * 1024


def follow_run(
    ctx: Context,
    target: Target,
    info: RunInfo,
    *,
    start: int | None = 0,
    tail: int | None = None,
    follow: bool = True,
    screen: Screen,
    until_ready: bool = False,
    first: ByteStream | None = None,
) -> int:
    """Stream the log (from ``start``, or the last ``tail`` lines) into the local copy and view.

    ``until_ready``: a service's start, followed until it is ready (0) or over. ``first``:
    a follower of this run opened while it was being launched (:func:`early_stream`), used
    for the stream from offset 0 (closed unused otherwise).

    Returns the step's exit code when following to the end, else 0; 130 when Ctrl-C
    detached (the step keeps running).
    """
    path = copy_path(cache_root(), target.name, info.id)
    if info.log_size is None and info.state != RunState.RUNNING:  # its log is gone on the target
        why = f"{info.id}: its log on {target.label} is gone ({info.log_path})"
        if first is not None:
            first.close()
        return show_copy(
            ctx, target, info, path, why, start=start, tail=tail, follow=follow, screen=screen
        )
    copy = LocalCopy(path)
    initial = info.log_size or 0
    if copy.size > initial and info.state != RunState.RUNNING:
        # An ended run's log does not grow: a longer copy is not of this log. Start over.
        # (While it runs, another `harness logs` may simply have copied further already.)
        copy.truncate(0)
    shown = screen.view(info, copy, None if tail is not None else start)
    notes = screen.notes(shown)
    pending_tail = [tail] if tail is not None else []

    def landed(offset: int = -1, data: bytes = b"", final: bool = False) -> None:
        # --follow: the last N lines as of the attach, then everything after them.
        # Without it: the last N lines as of the end of the read -- a live run's log grew
        # since it was listed, and N lines is what was asked for.
        if pending_tail and copy.size >= initial and (follow or final):
            end = initial if follow else copy.size
            shown.start_at(tail_offset(copy.read, end, pending_tail.pop()))
        shown.pump(offset, data)

    def link(what: str, why: str) -> None:
        if what == "lost":
            shown.message(
                f"[yellow]link to {esc(target.label)} lost ({esc(why)}); "
                "reconnecting -- the step keeps running[/]"
            )
        else:
            shown.message("[green]reconnected; resuming the log where it stopped[/]")

    early = [first] if first is not None else []

    def source(offset: int) -> Any:
        if early:
            got = early.pop()
            if offset == 0:
                return got
            got.close()
        argv = follower_argv(
            target,
            info.record.run_dir,
            offset,
            wait=follow,
            poll=ctx.timings.poll,
            lost_check=ctx.timings.lost_check,
            until_ready=until_ready,
        )
        return target.stream(argv)

    detach = _CtrlC()

    def idle() -> None:
        shown.idle()
        detach.check()

    def landed_then_check(offset: int, data: bytes) -> None:
        landed(offset, data)
        detach.check()

    follower = Follower(
        source,
        copy,
        on_bytes=landed_then_check,
        on_idle=idle,
        on_link=link,
        reconnect=ctx.timings.reconnect,
        tick=ctx.timings.refresh,
    )
    try:
        landed()  # what an earlier attach already copied
        if follow:
            shown.message(f"[dim]following {info.id} on {esc(target.label)}; log copy: {path}[/]")
        try:
            with detach:
                end = follower.run()
        except (_Detached, KeyboardInterrupt):
            shown.close()
            if until_ready:  # a service's start: what happens to it is the caller's to say
                return 130
            notes.print(f"\n[bold]detached[/]: {info.id} keeps running on {esc(target.label)}")
            print_next(notes, ctx, info, shown.resume_offset)
            return 130
        except ConnectError as e:
            shown.close()
            raise ConnectError(
                f"{e.message}; {info.id} keeps running on {target.label}",
                f"reattach with: harness logs {info.id}{ctx.flag} --follow "
                f"--offset {shown.resume_offset}",
            ) from None
        landed(final=True)
        shown.flush()
        shown.close()
        if end.reason == "ready":
            return 0
        final = _final(end.facts, info)
        if final.state not in (RunState.RUNNING, RunState.LOST) and final.log_size == copy.size:
            mark_complete(path, copy.size, final.to_dict())  # `logs` can rely on it later
        if final.state != RunState.RUNNING:
            _conclude(notes, screen, ctx, final, copy, path, target)
        elif not follow:
            notes.print(f"[dim]{info.id} is still running; add --follow to keep reading[/]")
        if not follow:
            return 0
        code = exit_code_of(final)
        return 1 if code is None else code
    finally:
        for unused in early:
            unused.close()
        shown.close()
        copy.close()


def early_stream(ctx: Context, target: Target, run_dir: str) -> ByteStream | None:
    """The log follower of a run about to be launched at ``run_dir``, started now so that its
    start overlaps the launch (``harness run`` in the foreground); ``None`` when the target
    cannot start it (the follower after the launch is then started as usual). Close it if
    the launch does not happen: its process on the target then leaves at once."""
    t = ctx.timings
    argv = early_follower_argv(target, run_dir, wait=t.handshake + t.stop_grace + 60.0,
                               poll=t.poll, lost_check=t.lost_check)  # fmt: skip
    try:
        return target.stream(argv)
    except (HarnessError, LinkLost, OSError):
        return None


def show_copy(
    ctx: Context,
    target: Target,
    info: RunInfo,
    path: Path,
    why: str,
    *,
    start: int | None = 0,
    tail: int | None = None,
    follow: bool = False,
    screen: Screen,
) -> int:
    """A run whose log is no longer on the target: harness's local copy, said so, when
    harness saw the run end with the copy whole; else one line saying what is left."""
    if complete_copy(path) is None:
        size = path.stat().st_size if path.is_file() else 0
        left = (
            f"; the local copy {path} holds {size:,} bytes, but harness did not see the run "
            "end with it whole, so it may be short"
            if size
            else "; harness has no copy of it"
        )
        raise RunError(
            f"{why}{left}",
            f"read what is left with: cat {path}"
            if size
            else f"list the runs: harness runs{ctx.flag}",
        )
    copy = LocalCopy(path)
    shown = screen.view(info, copy, None if tail is not None else start)
    notes = screen.notes(shown)
    try:
        notes.print(
            f"[yellow]{esc(why)}; showing harness's local copy, complete "
            f"({copy.size:,} bytes): {path}[/]",
            soft_wrap=True,
        )
        if tail is not None:
            shown.start_at(tail_offset(copy.read, copy.size, tail))
        shown.pump()
        shown.flush()
        shown.close()
        _conclude(notes, screen, ctx, info, copy, path, target)
        code = exit_code_of(info)
        return (1 if code is None else code) if follow else 0
    finally:
        shown.close()
        copy.close()


def _final(facts: dict[str, Any] | None, info: RunInfo) -> RunInfo:
    """The run as the follower found it at the end; a record it left out (a command too big
    for its end report) is the one the run was listed with."""
    if not facts:
        return info
    if not facts.get("record"):
        facts = {**facts, "record": info.record.to_dict()}
    return RunInfo.from_facts(facts, None)


def print_next(out: Any, ctx: Context, info: RunInfo, offset: int | None = None) -> None:
    at = f" --offset {offset}" if offset is not None else ""
    out.print(f"  follow:  harness logs {info.id}{ctx.flag} --follow{at}", soft_wrap=True)
    out.print(f"  stop:    harness stop {info.id}{ctx.flag}", soft_wrap=True)
    out.print(f"  list:    harness runs{ctx.flag}", soft_wrap=True)


class _Detached(Exception):
    """Ctrl-C, taken at a point where everything shown is also counted."""


class _CtrlC:
    """Ctrl-C while following means "detach": noted by the handler, acted on between chunks.

    A KeyboardInterrupt raised in the middle of writing a chunk would leave the resume
    offset unsure; so the first Ctrl-C only sets a flag that the follow loop checks after
    each chunk and on each idle tick (<= 0.1 s). A second Ctrl-C interrupts at once.
    """

    def __init__(self) -> None:
        self.asked = False
        self._previous: Any = None

    def check(self) -> None:
        if self.asked:
            raise _Detached

    def _handler(self, signum: int, frame: Any) -> None:
        if self.asked:
            raise KeyboardInterrupt
        self.asked = True

    def __enter__(self) -> _CtrlC:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handler)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None


def _conclude(
    out: Any,
    screen: Screen,
    ctx: Context,
    info: RunInfo,
    copy: LocalCopy,
    path: Path,
    target: Target | None = None,
) -> None:
    from harness.runs.record.state import duration_of, format_duration

    label = state_label(info)
    took = format_duration(duration_of(info))
    if info.state == RunState.SUCCEEDED:
        out.print(f"[green]✓ {info.id} {esc(label)}[/] in {took}")
    elif info.state == RunState.LOST:
        out.print(
            f"[red]✗ {info.id} lost[/]: its supervisor is gone, so how the step ended is "
            "unknown (it may still be running)"
        )
        out.print(f"  clean up with: harness stop {info.id}{ctx.flag}")
    else:
        out.print(f"[red]✗ {info.id} {esc(label)}[/] after {took}")
        summary = failure_summary(copy, ctx.target_name, info.record.step)
        if summary is not None and info.state == RunState.FAILED:
            screen.failure(out, summary, _installed_signature(target, summary))
        elif info.status is not None and info.status.error:
            out.print(f"  {esc(info.status.error)}")
        if info.status is not None and info.status.not_ready and summary is None:
            text = copy.read(max(0, copy.size - SUMMARY_TAIL), SUMMARY_TAIL)
            for line in last_lines(text.decode("utf-8", "replace")):
                out.print(f"  [red]│[/] {esc(line)}", soft_wrap=True)
    full = info.status.disk_full if info.status is not None else None
    if full:
        where = f" on {target.label}" if target is not None else ""
        out.print(
            f"[yellow]no space left on the disk that holds {esc(full.path)}"
            f"{esc(where)} when the step ended ({(full.space_left or 0) // 1024:,}"
            " KiB free): its output, and the log, may be cut short[/]",
            soft_wrap=True,
        )
    out.print(f"[dim]log: {path}[/]")


def _installed_signature(target: Target | None, summary: FailureSummary) -> str | None:
    """``now: X(sig)  file:line (dist ver)`` for a call that no longer binds: one probe,
    resolved from the caller's module the way its import resolves -- so the summary shows
    what the callee takes on this target without another command."""
    cause = summary.root_cause or summary
    if target is None or cause.callee is None:
        return None
    from harness.errors import HarnessError
    from harness.reading.probe import probe

    try:
        report = probe(target, cause.callee)
    except HarnessError:
        return None
    if not report.symbols:
        return None
    sym = report.symbols[0]
    short = sym.qualname.rsplit(".", 1)[-1]
    ver = f" ({sym.dist} {sym.version})" if sym.dist else ""
    return f"now: {short}{sym.signature}  {sym.file}:{sym.line}{ver}"


def failure_summary(
    copy: LocalCopy, target_name: str, step: str | None = None
) -> FailureSummary | None:
    size = copy.size
    start = max(0, size - SUMMARY_TAIL)
    text = copy.read(start, size - start).decode("utf-8", "replace")
    return summarize(text, target_name, step)
