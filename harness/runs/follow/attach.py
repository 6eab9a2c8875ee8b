"""Attach to a run: stream its log into the local copy and onto the screen, to its end.

Used by a foreground ``harness run`` and by ``harness logs``. Ctrl-C detaches (the step keeps
running) and prints the exact ``--offset`` to resume from; a dropped link reconnects; at the
end the run's state is shown, with the failure summary when it failed.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.markup import escape as esc

from harness.cache import cache_root
from harness.errors import ConnectError, HarnessError, RunError
from harness.runs.follow.decode import tail_offset
from harness.runs.follow.ending import conclude, final_info
from harness.runs.follow.stream import (
    Follower,
    LocalCopy,
    complete_copy,
    copy_path,
    early_follower_argv,
    follower_argv,
    mark_complete,
)
from harness.runs.follow.view import Screen, Shown
from harness.runs.record.lifecycle import RunState, exit_code_of
from harness.runs.record.models import RunInfo
from harness.runs.target.context import Context
from harness.targets.base import ByteStream, LinkLost, Target


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
    copy = _open_copy(path, info)
    initial = info.log_size or 0
    shown = screen.view(info, copy, None if tail is not None else start)
    notes = screen.notes(shown)
    detach = _CtrlC()
    feed = _Feed(shown, copy, detach, target.label, initial, tail, follow)
    early = [first] if first is not None else []
    source = _source(ctx, target, info.record.run_dir, early, follow, until_ready)
    follower = Follower(
        source,
        copy,
        on_bytes=feed.bytes,
        on_idle=feed.idle,
        on_link=feed.link,
        reconnect=ctx.timings.reconnect,
        tick=ctx.timings.refresh,
    )
    try:
        feed.landed()  # what an earlier attach already copied
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
        feed.landed(final=True)
        shown.flush()
        shown.close()
        if end.reason == "ready":
            return 0
        return _ended(final_info(end.facts, info), copy, path, notes, screen, ctx, target, follow)
    finally:
        for unused in early:
            unused.close()
        shown.close()
        copy.close()


def _open_copy(path: Path, info: RunInfo) -> LocalCopy:
    """The run's local copy, to go on from: started over when longer than an ended run's log
    (a log that no longer grows: the copy is not of it; while the run runs, another
    ``harness logs`` may simply have copied further already)."""
    copy = LocalCopy(path)
    if copy.size > (info.log_size or 0) and info.state != RunState.RUNNING:
        copy.truncate(0)
    return copy


def _ended(
    final: RunInfo,
    copy: LocalCopy,
    path: Path,
    notes: Any,
    screen: Screen,
    ctx: Context,
    target: Target,
    follow: bool,
) -> int:
    """What following returns once the log is drained: the step's exit code (0 without
    ``follow``); an ended run's copy is marked whole, and its end said."""
    if final.state not in (RunState.RUNNING, RunState.LOST) and final.log_size == copy.size:
        mark_complete(path, copy.size, final.to_dict())  # `logs` can rely on it later
    if final.state != RunState.RUNNING:
        conclude(notes, screen, ctx, final, copy, path, target)
    elif not follow:
        notes.print(f"[dim]{final.id} is still running; add --follow to keep reading[/]")
    if not follow:
        return 0
    code = exit_code_of(final)
    return 1 if code is None else code


def _source(
    ctx: Context,
    target: Target,
    run_dir: str,
    early: list[ByteStream],
    follow: bool,
    until_ready: bool,
) -> Callable[[int], ByteStream]:
    """The follower's streams: the one opened while launching (``early``) for offset 0, else a
    new follower from the offset."""

    def source(offset: int) -> ByteStream:
        if early:
            got = early.pop()
            if offset == 0:
                return got
            got.close()
        t = ctx.timings
        argv = follower_argv(
            target,
            run_dir,
            offset,
            wait=follow,
            poll=t.poll,
            lost_check=t.lost_check,
            until_ready=until_ready,
        )
        return target.stream(argv)

    return source


def early_stream(ctx: Context, target: Target, run_dir: str) -> ByteStream | None:
    """The log follower of a run about to be launched at ``run_dir``, started now so that its
    start overlaps the launch (``harness run`` in the foreground); ``None`` when the target
    cannot start it (the follower after the launch is then started as usual). Close it if
    the launch does not happen: its process on the target then leaves at once."""
    t = ctx.timings
    argv = early_follower_argv(
        target,
        run_dir,
        wait=t.handshake + t.stop_grace + 60.0,
        poll=t.poll,
        lost_check=t.lost_check,
    )
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
        conclude(notes, screen, ctx, info, copy, path, target)
        code = exit_code_of(info)
        return (1 if code is None else code) if follow else 0
    finally:
        shown.close()
        copy.close()


def print_next(out: Any, ctx: Context, info: RunInfo, offset: int | None = None) -> None:
    at = f" --offset {offset}" if offset is not None else ""
    out.print(f"  follow:  harness logs {info.id}{ctx.flag} --follow{at}", soft_wrap=True)
    out.print(f"  stop:    harness stop {info.id}{ctx.flag}", soft_wrap=True)
    out.print(f"  list:    harness runs{ctx.flag}", soft_wrap=True)


class _Feed:
    """Where the follower's bytes and link events land: the view of the local copy (the last
    ``tail`` lines cut once the copy holds them), Ctrl-C checked after each chunk and tick."""

    def __init__(
        self,
        shown: Shown,
        copy: LocalCopy,
        detach: _CtrlC,
        label: str,
        initial: int,
        tail: int | None,
        follow: bool,
    ) -> None:
        self.shown, self.copy, self.detach, self.label = shown, copy, detach, label
        self.initial, self.follow = initial, follow
        self.pending_tail = [tail] if tail is not None else []

    def landed(self, offset: int = -1, data: bytes = b"", final: bool = False) -> None:
        # --follow: the last N lines as of the attach, then everything after them.
        # Without it: the last N lines as of the end of the read -- a live run's log grew
        # since it was listed, and N lines is what was asked for.
        copy = self.copy
        if self.pending_tail and copy.size >= self.initial and (self.follow or final):
            end = self.initial if self.follow else copy.size
            self.shown.start_at(tail_offset(copy.read, end, self.pending_tail.pop()))
        self.shown.pump(offset, data)

    def bytes(self, offset: int, data: bytes) -> None:
        self.landed(offset, data)
        self.detach.check()

    def idle(self) -> None:
        self.shown.idle()
        self.detach.check()

    def link(self, what: str, why: str) -> None:
        if what == "lost":
            self.shown.message(
                f"[yellow]link to {esc(self.label)} lost ({esc(why)}); "
                "reconnecting -- the step keeps running[/]"
            )
        else:
            self.shown.message("[green]reconnected; resuming the log where it stopped[/]")


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
