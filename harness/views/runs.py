"""Rich views of runs: preflight verdicts, the runs table, stop reports, failures.

No decisions here: states, labels, failure summaries and verdicts arrive made. The live
views of a followed run's log are the CLI's (:mod:`harness.cli.screen`): they print as
the log arrives.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from harness.runs.record.lifecycle import RunState, state_label
from harness.runs.record.models import FailureSummary, RunInfo, Verdict
from harness.runs.record.state import describe_holder, duration_of, format_duration
from harness.runs.record.stopped import StopReport
from harness.runs.target.disk import progress_words
from harness.views.lines import Lines

if TYPE_CHECKING:
    from rich.console import Console

    from harness.runs.target.remote import GoneRun


def esc(text: str) -> str:
    from rich.markup import escape

    return escape(text)


# -- one-shot views ------------------------------------------------------------------------


def verdict_lines(items: Sequence[Verdict], prefix: str = "") -> list[str]:
    """The preflight's verdicts as markup lines, each hint under its line."""
    width = max((len(v.check) for v in items), default=0)
    out = []
    for v in items:
        out.append(f"{esc(prefix)}{v.level.mark} {v.check.ljust(width)}  {esc(v.message)}")
        if v.hint and v.level.hinted:
            out.append(f"  {' ' * width}  [yellow]hint:[/] {esc(v.hint)}")
    return out


def _when(ts: float | None, how: str = "%Y-%m-%d %H:%M:%S") -> str:
    return "-" if ts is None else datetime.fromtimestamp(ts).strftime(how)


def runs_table(runs: Sequence[RunInfo], target: str, gone: Sequence[GoneRun] = ()) -> Lines:
    lines = Lines()
    for g in gone:  # deleted while they ran: no record, but still running
        lines.add(
            f"[yellow]{g.id}: its run directory {esc(g.run_dir)} was deleted while it ran; it "
            f"still runs (supervisor pid {g.pid})[/]; end it with: harness stop {g.id}",
            soft_wrap=True,
        )
    if not runs:
        if not gone:
            lines.add(f"no runs on {esc(target)} yet; start one with harness run STEP")
        return lines
    lines.piped_width = 250  # a pipe gets whole ids, not "count-2025…"
    rows = []
    for r in sorted(runs, key=lambda r: (r.started_at or 0.0, r.id)):
        from harness.runs.follow.services import users_of
        from harness.runs.record.lifecycle import exit_code_of

        users = users_of(runs, r.id) if r.record.service else []
        used = f" · used by {', '.join(users)}" if users else ""
        if r.progress and r.state == RunState.RUNNING:  # a budgeted step: how far it has got
            used += progress_words(r.progress)

        code = exit_code_of(r)
        style = r.state.style
        rows.append(
            (
                r.id,
                r.record.step + (" (smoke)" if r.record.smoke else ""),
                f"[{style}]{esc(state_label(r) + used)}[/]",
                r.started_at,
                format_duration(duration_of(r)),
                "-" if code is None else str(code),
            )
        )
    lines.add(RunsTable(tuple(rows)))
    return lines


class RunsTable:
    """``harness runs``' table, laid out for the width it is given: the run id (what ``logs``
    and ``stop`` need) is never cut and the exit code always shown; when the row is too wide,
    ``started`` loses its year and seconds, then goes, then ``duration``; the step and the
    state are cut last."""

    def __init__(self, rows: tuple[tuple[str, str, str, float | None, str, str], ...]) -> None:
        self.rows = rows

    def __rich_console__(self, console: Console, options: Any) -> Any:
        from rich.table import Table
        from rich.text import Text

        heads = ("run", "step", "state", "started", "duration", "exit")
        ids = max(len(r[0]) for r in self.rows)
        states = [Text.from_markup(r[2]).cell_len for r in self.rows]

        def cells(when: str) -> list[tuple[str, ...]]:
            return [(r[0], r[1], r[2], _when(r[3], when), r[4], r[5]) for r in self.rows]

        def wide(keep: tuple[int, ...], when: str) -> int:
            got = cells(when)
            width = [max(len(heads[i]), *(len(c[i]) for c in got)) for i in keep]
            if 2 in keep:
                width[keep.index(2)] = max(len(heads[2]), *states)
            return sum(width) + 2 * (len(keep) - 1)

        for keep, when in (
            ((0, 1, 2, 3, 4, 5), "%Y-%m-%d %H:%M:%S"),
            ((0, 1, 2, 3, 4, 5), "%m-%d %H:%M"),
            ((0, 1, 2, 4, 5), ""),
            ((0, 1, 2, 5), ""),
        ):
            if wide(keep, when) <= options.max_width:
                break
        table = Table(box=None, pad_edge=False, header_style="bold")
        for i in keep:  # the id and the exit whole; the step and the state wrap if they must
            table.add_column(
                heads[i],
                no_wrap=i not in (1, 2),
                overflow="fold",
                min_width={0: ids, 5: len(heads[5])}.get(i),
            )
        for row in cells(when):
            table.add_row(*(row[i] for i in keep))
        yield table


def stop_report(rep: StopReport) -> Lines:
    lines = Lines()
    run = rep.run
    if rep.gone:
        n = len(rep.terminated)
        lines.add(
            f"{run.id}: its run directory {esc(run.record.run_dir)} was deleted while it ran; "
            f"SIGTERM to {n} process(es)" + (f" ({_pids(rep.terminated)})" if n else ""),
            soft_wrap=True,
        )
        if rep.killed:
            lines.add(f"  SIGKILL after the grace period to {len(rep.killed)}: {_pids(rep.killed)}")
        lines.add("  state: [bold]gone[/] (no record of how it ended is left)")
    elif rep.already_finished and not (rep.terminated or rep.killed):
        lines.add(
            f"{run.id} had already ended: {esc(state_label(run))}; nothing to stop, nothing changed"
        )
    else:
        n = len(rep.terminated)
        lines.add(
            f"{run.id}: SIGTERM to {n} process(es)" + (f" ({_pids(rep.terminated)})" if n else "")
        )
        if rep.killed:
            lines.add(f"  SIGKILL after the grace period to {len(rep.killed)}: {_pids(rep.killed)}")
        lines.add(f"  state: [bold]{esc(state_label(run))}[/]")
    for svc in rep.services:  # the services it had started and not kept
        if svc.get("already_finished") and not (svc.get("terminated") or svc.get("killed")):
            lines.add(f"  the service it needed, {esc(str(svc.get('run_id')))}, has ended too")
        else:
            n = len(svc.get("terminated") or ())
            lines.add(
                f"  stopped the service it needed, {esc(str(svc.get('run_id')))}: "
                f"SIGTERM to {n} process(es)"
            )
    if rep.unwritten:
        lines.add(
            f"[yellow]no space left on the disk that holds {esc(run.record.run_dir)}: "
            f"{', '.join(rep.unwritten)} could not be written; the processes were signalled "
            "all the same[/]",
            soft_wrap=True,
        )
    if rep.remaining:
        lines.add(f"[red]still running: {_pids(rep.remaining)}[/] (not ours to signal?)")
    if rep.holders:
        lines.add(f"[yellow]GPU holders remaining ({len(rep.holders)}):[/]")
        for h in rep.holders:
            lines.add(f"  {esc(describe_holder(h))}  {', '.join(h.devices)}", soft_wrap=True)
    else:
        lines.add("GPU holders remaining: none")
    return lines


def _pids(pids: Sequence[int]) -> str:
    return ", ".join(str(p) for p in pids)


def failure(summary: FailureSummary, installed: str | None = None) -> Lines:
    """The exception, its frames, and for an API mismatch the call site, the callee's
    installed signature (``installed``, probed by the caller) and the commands to run."""
    lines = Lines()
    _failure(lines, summary, installed)
    return lines


def _failure(out: Lines, summary: FailureSummary, installed: str | None) -> None:
    out.add(f"[bold red]{esc(summary.exc_type)}[/]: {esc(summary.message)}", soft_wrap=True)
    for d in summary.details[:4] if summary.callee else ():  # pydantic's per-field lines
        out.add(f"  {esc(d)}", soft_wrap=True)
    for f in summary.frames:
        out.add(f"  [cyan]{esc(f.file)}:{f.line}[/] in {esc(f.func)}", soft_wrap=True)
        if f.code:
            out.add(f"      [dim]{esc(f.code)}[/]", soft_wrap=True)
    cause = summary.root_cause
    if cause is not None:
        out.add("[bold]root cause (logged earlier):[/]")
        _failure(out, cause, installed)
        return
    if summary.caller is not None and summary.callee is not None:
        site = summary.caller
        out.add(f"[bold]call site:[/] [cyan]{esc(site.file)}:{site.line}[/]", soft_wrap=True)
        if site.code:
            out.add(f"      [dim]{esc(site.code)}[/]", soft_wrap=True)
    if installed:
        out.add(f"[bold]{esc(installed)}[/]", soft_wrap=True)
    if summary.hint:
        out.add(f"[yellow]hint:[/] {esc(summary.hint)}", soft_wrap=True)
    for cmd in summary.commands:
        out.add(f"  [bold]{esc(cmd)}[/]", soft_wrap=True)
