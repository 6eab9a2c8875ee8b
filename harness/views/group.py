"""Runs over several hosts, as renderables (the CLI prints them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.markup import escape

if TYPE_CHECKING:
    from rich.table import Table

    from harness.group.listing import GroupRun
    from harness.group.result import GroupResult


def group_runs_table(rows: Sequence[GroupRun]) -> Table:
    """``harness runs -t GROUP``: a row per run, each host's state in it."""
    from rich.table import Table

    table = Table(box=None, pad_edge=False, header_style="bold")
    for col in ("run", "step", "state", "hosts"):
        table.add_column(col, overflow="fold")
    for g in rows:
        step = g.step + (f" ({g.spread})" if g.spread else "")
        hosts = ", ".join(f"{h} {s}" for h, s in g.states.items())
        table.add_row(g.id, escape(step), g.state, escape(hosts))
    return table


def stopped_lines(got: GroupResult[list[str]], run: str) -> list[str]:
    """``harness stop RUN -t GROUP``: a markup line per host."""
    return [
        f"{r.host}: " + (", ".join(r.unwrap()) + " stopped" if r.unwrap() else f"no run {run}")
        if r.ok
        else f"[red]{r.host}: {escape(r.error or '')}[/]"
        for r in got.results
    ]
