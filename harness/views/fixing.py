"""Rich view of a :class:`~harness.fixing.model.FixReport`; no logic."""

from __future__ import annotations

from harness.fixing.model import FixReport
from harness.views.lines import Lines


def fix_report(r: FixReport) -> Lines:
    """What was fixed (with the proof), what needs a person (with the callee), the diff."""
    lines = Lines()
    from rich.markup import escape
    from rich.syntax import Syntax

    base = ", ".join(f"{k} {v}" for k, v in r.baseline.items())
    now = ", ".join(f"{k} {v}" for k, v in r.callees.items())
    lines.add(
        f"[bold]{escape(r.caller)} {r.caller_version or ''}[/] → {escape(now)}  "
        f"[dim]{escape(r.target)}  written for {escape(base)}[/]",
        soft_wrap=True,
    )
    if r.fixed:
        lines.add(f"\n[bold green]fixed ({len(r.fixed)}):[/]")
    for fx in r.fixed:
        lines.add(
            f"  [cyan]{escape(fx.finding.file)}:{fx.finding.line}[/] [green]{fx.kind}[/]  "
            f"{escape(fx.summary)}",
            soft_wrap=True,
        )
    if r.manual:
        lines.add(f"\n[bold yellow]needs a person ({len(r.manual)}):[/]")
    for m in r.manual:
        f = m.finding
        lines.add(
            f"  [cyan]{escape(f.file)}:{f.line}[/] [dim]{f.category}[/]  {escape(f.message)}",
            soft_wrap=True,
        )
        lines.add(f"      [yellow]why:[/] {escape(m.reason)}", soft_wrap=True)
        if m.signature:
            lines.add(
                f"      [dim]callee:[/] {escape(m.signature)}  [cyan]{escape(m.location or '')}[/]",
                soft_wrap=True,
            )
    diff = r.diff()
    if diff:
        lines.add()
        lines.add(
            Syntax(diff, "diff", theme="ansi_dark", background_color="default", word_wrap=False),
            soft_wrap=True,
        )
    for note in r.notes:
        lines.add(f"[dim]note: {escape(note)}[/]", soft_wrap=True)
    s = r.stats
    timing = f"{s.get('seconds')}s ({s.get('fix_seconds')}s on top of the check)"
    if r.patch:
        gates = ", ".join(f"{d} {v}" for d, v in r.requires.items()) or "none"
        lines.add(
            f"\n[green]wrote[/] {escape(r.patch)} and appended it to series.toml "
            f"(requires {escape(gates)}) in {timing}",
            soft_wrap=True,
        )
    elif r.dry_run and diff:
        lines.add(f"\n[yellow]dry run: nothing written[/] ({timing})")
    elif not r.manual:
        lines.add(f"\n[green]no errors: nothing to fix, nothing written[/] ({timing})")
    else:
        lines.add(f"\n[yellow]nothing to fix mechanically: nothing written[/] ({timing})")
    return lines
