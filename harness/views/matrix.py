"""``harness matrix``'s table: one row per callee version, within 100 columns."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console

from harness.reading.matrix import Matrix, Row
from harness.views.lines import Lines

#: The table is laid out for this many columns at most (less on a narrower terminal).
WIDTH = 100


def compact_ids(ids: list[str]) -> str:
    """Pure: ``0002-a, 0003-b, 0004-c, 0007-d`` -> ``0002-0004, 0007`` (the series' numbers;
    an id without a number is kept whole)."""
    nums: list[tuple[int, str]] = []
    other: list[str] = []
    for i in ids:
        m = re.match(r"^(\d+)", i)
        if m:
            nums.append((int(m.group(1)), m.group(1)))
        else:
            other.append(i)
    parts: list[str] = []
    run: list[tuple[int, str]] = []
    for n in sorted(set(nums)):
        if run and n[0] != run[-1][0] + 1:
            parts.append(_span(run))
            run = []
        run.append(n)
    if run:
        parts.append(_span(run))
    return ", ".join(parts + other)


def _span(run: list[tuple[int, str]]) -> str:
    return run[0][1] if len(run) == 1 else f"{run[0][1]}-{run[-1][1]}"


def gpu_cell(r: Row) -> str:
    """``verified`` where the series records a GPU run on this version, else ``-``."""
    return "verified" if r.gpu_verified else "-"


def matrix_table(m: Matrix, console_width: int) -> Lines:
    lines = Lines()
    from rich.markup import escape
    from rich.table import Table

    width = min(console_width, WIDTH)
    t = Table(
        title=f"{escape(m.caller)} against {escape(m.callee)}: {len(m.rows)} versions"
        + (" (with patches)" if m.with_patches else ""),
        title_justify="left",
    )
    t.add_column(m.callee, no_wrap=True)
    t.add_column("errors", justify="right", no_wrap=True)
    t.add_column("drift", justify="right", no_wrap=True)
    if m.with_patches:
        t.add_column("patches apply", overflow="fold")
        t.add_column("skip", overflow="fold")
        t.add_column("conflict", overflow="fold", style="red")
        t.add_column("GPU", no_wrap=True)
    else:
        t.add_column("note", overflow="fold")
    for r in m.rows:
        if r.failed is not None:
            cells = [escape(r.failed)] + ([""] * 3 if m.with_patches else [])
            t.add_row(r.version, "-", "-", *cells, style="dim")
            continue
        err = f"[bold red]{r.errors}[/]" if r.errors else "[green]0[/]"
        drift = f"[yellow]{r.drift}[/]" if r.drift else "0"
        if m.with_patches:
            extra = [
                compact_ids(r.patches.get(k, [])) or "-" for k in ("apply", "skip", "conflict")
            ] + [gpu_cell(r)]
        else:
            extra = [escape("\n".join(r.kinds))]
        t.add_row(r.version, err, drift, *extra)
    lines.add(t, width=width)
    lines.add(escape(summary(m)), soft_wrap=True)
    return lines


def summary(m: Matrix) -> str:
    """Pure: ``errors in 1 of 3 versions; 1 could not be checked``."""
    bad = [r.version for r in m.rows if r.errors]
    failed = [r.version for r in m.rows if r.failed]
    return f"errors in {len(bad)} of {len(m.rows)} versions" + (
        f"; {len(failed)} could not be checked" if failed else ""
    )


@contextmanager
def progress_line() -> Iterator[Callable[[int, int], None]]:
    """``checked 12/27 versions`` on stderr while the versions are fetched and checked, on a
    terminal only (nothing otherwise); yields the ``on_progress(done, total)`` to report to.

    Each version's fetch would draw its own download bar, several at once, over one another:
    meanwhile ``sys.stderr`` says it is no terminal, so those stay off and this line is the one
    progress shown (what is written to stderr still shows, above the line)."""
    if not Console(stderr=True).is_terminal:
        yield lambda done, total: None
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    real = sys.stderr
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TimeElapsedColumn(),
        console=Console(file=real, force_terminal=True),
        transient=True,
        redirect_stdout=False,
    )
    task = bar.add_task("listing the versions", total=None)

    def update(done: int, total: int) -> None:
        bar.update(
            task, description=f"checked {done}/{total} versions", completed=done, total=total
        )

    sys.stderr = _NotATerminal(real)
    try:
        with bar:
            yield update
    finally:
        sys.stderr = real


class _NotATerminal:
    """A stream that writes through to ``stream`` and is no terminal (Rich draws no bar on it)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def isatty(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
