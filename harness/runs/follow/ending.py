"""How a followed run's end reads: its state and time, the summary of its failure with what the
callee takes on the target now, the disk that was full, where its log's copy is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.markup import escape as esc

from harness.runs.follow.decode import last_lines
from harness.runs.follow.failure import summarize
from harness.runs.follow.stream import LocalCopy
from harness.runs.follow.view import Screen
from harness.runs.record.lifecycle import RunState, state_label
from harness.runs.record.models import FailureSummary, RunInfo
from harness.runs.target.context import Context
from harness.targets.base import Target

#: Bytes of the log's end searched for the final exception.
SUMMARY_TAIL = 256 * 1024


def final_info(facts: dict[str, Any] | None, info: RunInfo) -> RunInfo:
    """The run as the follower found it at the end; a record it left out (a command too big
    for its end report) is the one the run was listed with."""
    if not facts:
        return info
    if not facts.get("record"):
        facts = {**facts, "record": info.record.to_dict()}
    return RunInfo.from_facts(facts, None)


def conclude(
    out: Any,
    screen: Screen,
    ctx: Context,
    info: RunInfo,
    copy: LocalCopy,
    path: Path,
    target: Target | None = None,
) -> None:
    """The run's last lines on ``out``: its state and time; when it failed, the summary of its
    failure (with what the callee takes now) or its error; a disk that was full; its log."""
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
            screen.failure(out, summary, installed_signature(target, summary))
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


def installed_signature(target: Target | None, summary: FailureSummary) -> str | None:
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
