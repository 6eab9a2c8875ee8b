"""Rich views of the models. No logic here: every decision was made before rendering."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.models import ProbeReport, Symbol, SymbolKind, TargetFacts
from harness.views.lines import Lines

if TYPE_CHECKING:
    from rich.console import RenderableType

    from harness.analysis.findings import CheckReport
    from harness.cache import CacheEntry
    from harness.config import HostsConfig
    from harness.group.sameness import Sameness
    from harness.reading.compare import DiffReport


def _where(sym: Symbol) -> str:
    dist = f"  [dim]{sym.dist} {sym.version}[/]" if sym.dist else ""
    return f"[cyan]{sym.file}:{sym.line}[/]{dist}"


def _def_line(sym: Symbol) -> str:
    from rich.markup import escape

    prefix = "async def" if sym.is_async else sym.kind.keyword
    name = sym.qualname.rsplit(".", 1)[-1] if sym.kind != SymbolKind.CLASS else sym.qualname
    if sym.kind == SymbolKind.CLASS:
        sig = escape(f"({', '.join(sym.bases)})") if sym.bases else ""
    else:
        sig = "" if sym.kind == SymbolKind.VARIABLE else escape(sym.signature)
    return f"[bold]{prefix}[/] [green]{escape(name)}[/]{sig}".strip()


def _symbol(lines: Lines, sym: Symbol, indent: str = "") -> None:
    from rich.markup import escape

    for d in sym.decorators:
        lines.add(f"{indent}[magenta]@{escape(d)}[/]", soft_wrap=True)
    lines.add(f"{indent}{_def_line(sym)}", soft_wrap=True)
    lines.add(f"{indent}    {_where(sym)}", soft_wrap=True)
    for o in sym.overloads:
        sig = Symbol(sym.qualname, sym.kind, "", 0, 0, parameters=o.parameters, returns=o.returns)
        lines.add(f"{indent}    [dim]@overload[/] {escape(sig.signature)}", soft_wrap=True)
    if sym.kind == SymbolKind.CLASS:
        _class_details(lines, sym, indent)


def _class_details(lines: Lines, sym: Symbol, indent: str) -> None:
    from rich.markup import escape

    ctor = sym.constructor or {}
    via = ctor.get("via", "?")
    origin = ctor.get("from", "")
    inherited = " (inherited)" if ctor.get("inherited") else ""
    short = sym.qualname.rsplit(".", 1)[-1]
    lines.add(f"{indent}    [bold]{escape(short)}{escape(sym.signature)}[/]", soft_wrap=True)
    lines.add(
        f"{indent}    constructor via [bold]{escape(via)}[/]{inherited}"
        f"{' from ' + escape(origin) if inherited else ''}",
        soft_wrap=True,
    )
    if sym.parameters is None:
        lines.add(
            f"{indent}      [yellow]not known statically[/] (base {escape(origin)} is "
            "outside the import path; try --live)"
        )
    for p in sym.parameters or ():
        req = "[red]required[/]" if p.required else f"= {escape(p.default or '')}"
        kind = "" if p.kind == "positional-or-keyword" else f" [dim]({p.kind})[/]"
        iv = " [dim](InitVar)[/]" if p.init_var else ""
        ann = f": {escape(p.annotation)}" if p.annotation else ""
        lines.add(f"{indent}      {escape(p.name)}{ann}  {req}{kind}{iv}", soft_wrap=True)
    methods = [m for m in sym.members if m.kind != SymbolKind.CLASS]
    if methods:
        lines.add(f"{indent}    methods:")
        for m in methods:
            tag = "" if m.kind == SymbolKind.METHOD else f" [dim]({m.kind})[/]"
            name = m.qualname.rsplit(".", 1)[-1]
            lines.add(
                f"{indent}      [green]{escape(name)}[/]{escape(m.signature)}{tag}  "
                f"[dim]:{m.line}[/]",
                soft_wrap=True,
            )


def probe_report(report: ProbeReport) -> Lines:
    lines = Lines()
    from rich.markup import escape
    from rich.syntax import Syntax

    owner = f"{report.dist} {report.version}" if report.dist else "no owning dist found"
    live = "  [yellow](live import)[/]" if report.live else ""
    lines.add(
        f"[bold]{escape(report.module)}[/]  [dim]{escape(owner)} · "
        f"{escape(report.target)}[/]{live}",
        soft_wrap=True,
    )
    if report.file:
        lines.add(f"  {escape(report.root)}/[cyan]{escape(report.file)}[/]", soft_wrap=True)
    if len(report.chain) > 1:
        hops = " → ".join(
            f"{h.module}{':' + h.name if h.name else ''} ({h.file}:{h.line}, {h.how})"
            for h in report.chain
        )
        lines.add(f"  [dim]re-export chain:[/] {escape(hops)}", soft_wrap=True)
    lines.add()
    for sym in report.symbols:
        _symbol(lines, sym)
        lines.add()
    if report.reexports:
        names = ", ".join(f"{r['name']}→{r['target']}" for r in report.reexports[:40])
        more = f" … (+{len(report.reexports) - 40})" if len(report.reexports) > 40 else ""
        lines.add(f"[dim]re-exports:[/] {escape(names)}{more}", soft_wrap=True)
    if report.source:
        src = report.source
        lines.add(f"[dim]{escape(src.file)}:{src.start}-{src.end}[/]")
        lines.add(
            Syntax(
                src.text,
                "python",
                line_numbers=True,
                start_line=src.start,
                word_wrap=False,
                theme="ansi_dark",
            )
        )
    return lines


def hosts_table(hosts: HostsConfig, width: int) -> Lines:
    lines = Lines()
    from rich.table import Table

    from harness.views.fold import fit_widths, fold

    where = str(hosts.path) if hosts.path else "no hosts.toml found"
    t = Table(title=f"targets ({where})", title_justify="left")
    heads = ("name", "ssh", "python", "workdir", "defined at")
    rows = [
        (
            name + (" (default)" if name == hosts.default else ""),
            h.reach(),
            h.python,
            h.workdir or "",
            h.source or "",
        )
        for name, h in hosts.hosts.items()
    ]
    rows.append(
        (
            "local" + ("" if hosts.default else " (default)"),
            "this machine",
            "harness's own python",
            "",
            "built in",
        )
    )
    rows.append(("venv:PATH", "this machine", "PATH/bin/python", "", "built in"))
    rows.append(
        ("pypi:NAME==VER,...", "wheels from the index", "read-only, never imported", "", "built in")
    )
    # a narrow terminal wraps a long path onto more lines (never cut to "…": the path is
    # what the user came to read), broken after a "/" or "." -- not inside a word
    widths = fit_widths(heads, rows, width - (3 * len(heads) + 1))
    for col, width in zip(heads, widths, strict=True):
        t.add_column(col, width=width, overflow="fold")
    for row in rows:
        t.add_row(*(fold(cell, w) for cell, w in zip(row, widths, strict=True)))
    lines.add(t)
    return lines


def facts(f: TargetFacts) -> Lines:
    lines = Lines()
    from rich.markup import escape

    py = f.python
    lines.add(
        f"[bold green]✓[/] [bold]{escape(f.target)}[/]  "
        f"[dim]answered in {f.connect_seconds:.2f}s[/]"
    )
    lines.add(
        f"  python   {escape(str(py.get('executable')))}  {py.get('version')}"
        f"{'  (venv)' if py.get('in_venv') else ''}",
        soft_wrap=True,
    )
    for sp in f.site_packages:
        lines.add(f"  packages {escape(sp)}", soft_wrap=True)
    versions = "  ".join(f"{k} [bold]{v}[/]" if v else f"{k} [dim]-[/]" for k, v in f.dists.items())
    lines.add(f"  dists    {versions}", soft_wrap=True)
    if f.gpus:
        for g in f.gpus:
            lines.add(
                f"  gpu {g.index}    {escape(g.name)}  free {g.memory_free_mib} / "
                f"{g.memory_total_mib} MiB  driver {g.driver}"
            )
    else:
        lines.add(f"  gpus     [yellow]no GPU[/] ({escape(f.gpu_note or 'none found')})")
    return lines


def check_report(report: CheckReport) -> Lines:
    """Findings grouped by caller file; each with the callee's current signature and a fix."""
    lines = Lines()
    from itertools import groupby

    from rich.markup import escape

    from harness.views.fold import fold_signature

    callees = ", ".join(f"{k} {v}" for k, v in report.callees.items()) or "no callee"
    base = ", ".join(f"{k} {v}" for k, v in report.baseline.items())
    lines.add(
        f"[bold]{escape(report.caller)} {report.caller_version or ''}[/] → "
        f"{escape(callees)}  [dim]{escape(report.target)}[/]"
        + (f"  [dim]baseline {escape(base)}[/]" if base else ""),
        soft_wrap=True,
    )
    for file, group in groupby(report.findings, key=lambda f: f.file):
        lines.add(f"\n[bold underline]{escape(file)}[/]")
        for f in group:
            sev = f"[{f.severity.style}]{f.severity}[/]"
            lines.add(
                f"  [cyan]:{f.line}[/] {sev} [dim]{f.category}[/]  {escape(f.message)}",
                soft_wrap=True,
            )
            if f.source:
                lines.add(f"      [dim]│[/] {escape(f.source)}", soft_wrap=True)
            where = f"{f.callee_file}:{f.callee_line}" if f.callee_file else ""
            if f.signature:
                sig = fold_signature(f.signature, f.source or "", f.message)  # --json: whole
                lines.add(f"      [dim]now:[/] {escape(sig)}  [cyan]{where}[/]", soft_wrap=True)
            elif where:
                lines.add(f"      [dim]defined at[/] [cyan]{escape(where)}[/]", soft_wrap=True)
            lines.add(f"      [green]fix:[/] {escape(f.fix)}", soft_wrap=True)
    for note in report.notes:
        lines.add(f"[dim]note: {escape(note)}[/]", soft_wrap=True)
    s = report.stats
    parts = []
    if "files" in s or "flags" not in s:
        parts.append(f"{s.get('files')} files, {s.get('calls')} calls, {s.get('imports')} imports")
    if "flags" in s:  # check --step: the vllm serve arguments (alone, or with a caller's)
        parts.append(f"{s.get('flags')} flags, {s.get('keys')} config keys")
    what = ", ".join(parts)
    summary = (
        f"{report.count('error')} error(s), {report.count('warning')} warning(s), "
        f"{report.count('info')} info — {what} checked in {s.get('seconds')}s"
        + (" (cached)" if s.get("cached") else "")
    )
    style = "bold red" if report.errors else "bold green"
    lines.add(f"\n[{style}]{summary}[/]", soft_wrap=True)
    return lines


def diff_report(report: DiffReport, limit: int = 400) -> Lines:
    """Entries by status, breaking ones marked; with --used-by, the caller sites under each."""
    lines = Lines()
    from rich.markup import escape

    c = report.counts()
    who = f" used by {report.used_by}" if report.used_by else ""
    lines.add(
        f"[bold]{escape(report.dist)}[/] {report.old_version} → {report.new_version}"
        f"{escape(who)}  [dim]{escape(report.source)} → {escape(report.dest)}[/]",
        soft_wrap=True,
    )
    for e in report.entries[:limit]:
        mark = "[bold red]![/]" if e.breaking else " "
        where = f" → {escape(e.moved_to)}" if e.moved_to else ""
        lines.add(
            f"{mark} [{e.status.style}]{e.status:8}[/] {escape(e.symbol)}{where}", soft_wrap=True
        )
        for ch in e.changes:
            lines.add(
                f"      {'[red]' if ch.breaking else '[dim]'}- {escape(ch.describe())}[/]",
                soft_wrap=True,
            )
        for site in e.sites:
            lines.add(
                f"      [cyan]{escape(site['file'])}:{site['line']}[/]  "
                f"[dim]{escape(site['source'])}[/]",
                soft_wrap=True,
            )
    if len(report.entries) > limit:
        lines.add(f"[dim]… {len(report.entries) - limit} more (use --json for all)[/]")
    lines.add(
        f"\n{c['removed']} removed, {c['moved']} moved, {c['changed']} changed, "
        f"{c['added']} added; [bold]{c['breaking']} breaking[/] "
        f"[dim]({report.stats.get('seconds')}s)[/]",
        soft_wrap=True,
    )
    return lines


def cache_table(root: str, entries: list[CacheEntry], now: float) -> Lines:
    """``harness cache list``: one row per entry, sizes and last use, the total below."""
    lines = Lines()
    from rich.filesize import decimal
    from rich.markup import escape
    from rich.table import Table

    from harness.cache import ago

    if not entries:
        lines.add(f"the cache at {escape(root)} is empty", soft_wrap=True)
        return lines
    t = Table(title=f"cache ({escape(root)})", title_justify="left")
    t.add_column("kind")
    t.add_column("what", overflow="fold")
    t.add_column("size", justify="right")
    t.add_column("last used")
    for e in sorted(entries, key=lambda e: (e.kind.text, -e.size)):
        what = escape(e.name)
        if e.lazy is not None:  # issue 26: the sources only, no wheel kept
            fetched, wheel = e.lazy
            what += f" [dim](sources only: {decimal(fetched)} of a {decimal(wheel)} wheel)[/]"
        t.add_row(e.kind.text, what, decimal(e.size), ago(now - e.last_used))
    lines.add(t)
    total = sum(e.size for e in entries)
    lines.add(
        f"{len(entries)} entries, {decimal(total)}; free space with: harness cache prune",
        soft_wrap=True,
    )
    return lines


def sameness_table(same: Sameness) -> Lines:
    """One column per host; a row whose values differ is marked, and its blocker follows."""
    lines = Lines()
    for part in sameness(same):
        lines.add(part, soft_wrap=isinstance(part, str))
    return lines


def sameness(same: Sameness) -> list[RenderableType]:
    """The table of :func:`sameness_table`, then its blockers as markup lines."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(box=None, pad_edge=False, header_style="bold")
    table.add_column("")
    for h in same.hosts:
        table.add_column(escape(h), overflow="fold")
    for row in same.rows:
        style = "red" if row.differs else ""
        mark = "≠ " if row.differs else "  "
        cells = [escape(row.values[h] or "-") for h in same.hosts]
        table.add_row(f"{mark}{escape(row.what)}", *cells, style=style)
    out: list[RenderableType] = [table]
    out += [f"  [red]✗ blocker[/] {escape(b)}" for b in same.blockers]
    if not same.blockers:
        out.append("  [green]the same on every host[/] where a multi-node run needs it")
    return out
