"""Rich view of a :class:`~harness.fixing.model.FixReport`; no logic."""

from __future__ import annotations

from typing import Any

from harness.fixing.model import FixReport


def fix_report(console: Any, r: FixReport) -> None:
    """What was fixed (with the proof), what needs a person (with the callee), the diff."""
    from rich.markup import escape
    from rich.syntax import Syntax

    base = ", ".join(f"{k} {v}" for k, v in r.baseline.items())
    now = ", ".join(f"{k} {v}" for k, v in r.callees.items())
    console.print(
        f"[bold]{escape(r.caller)} {r.caller_version or ''}[/] → {escape(now)}  "
        f"[dim]{escape(r.target)}  written for {escape(base)}[/]",
        soft_wrap=True,
    )
    if r.fixed:
        console.print(f"\n[bold green]fixed ({len(r.fixed)}):[/]")
    for fx in r.fixed:
        console.print(
            f"  [cyan]{escape(fx.finding.file)}:{fx.finding.line}[/] [green]{fx.kind}[/]  "
            f"{escape(fx.summary)}",
            soft_wrap=True,
        )
    if r.manual:
        console.print(f"\n[bold yellow]needs a person ({len(r.manual)}):[/]")
    for m in r.manual:
        f = m.finding
        console.print(
            f"  [cyan]{escape(f.file)}:{f.line}[/] [dim]{f.category}[/]  {escape(f.message)}",
            soft_wrap=True,
        )
        console.print(f"      [yellow]why:[/] {escape(m.reason)}", soft_wrap=True)
        if m.signature:
            console.print(
                f"      [dim]callee:[/] {escape(m.signature)}  [cyan]{escape(m.location or '')}[/]",
                soft_wrap=True,
            )
    diff = r.diff()
    if diff:
        console.print()
        console.print(
            Syntax(diff, "diff", theme="ansi_dark", background_color="default", word_wrap=False),
            soft_wrap=True,
        )
    for note in r.notes:
        console.print(f"[dim]note: {escape(note)}[/]", soft_wrap=True)
    s = r.stats
    timing = f"{s.get('seconds')}s ({s.get('fix_seconds')}s on top of the check)"
    if r.patch:
        gates = ", ".join(f"{d} {v}" for d, v in r.requires.items()) or "none"
        console.print(
            f"\n[green]wrote[/] {escape(r.patch)} and appended it to series.toml "
            f"(requires {escape(gates)}) in {timing}",
            soft_wrap=True,
        )
    elif r.dry_run and diff:
        console.print(f"\n[yellow]dry run: nothing written[/] ({timing})")
    elif not r.manual:
        console.print(f"\n[green]no errors: nothing to fix, nothing written[/] ({timing})")
    else:
        console.print(f"\n[yellow]nothing to fix mechanically: nothing written[/] ({timing})")
