"""Rich and Markdown views of patch plans. No logic: the plan already decided everything."""

from __future__ import annotations

from harness.patching.ops import DistReport
from harness.views.lines import Lines


def status(reports: list[DistReport], *, diffs: bool = False) -> Lines:
    lines = Lines()
    from rich.markup import escape

    for r in reports:
        have = r.installed or "not installed"
        lines.add(f"[bold]{escape(r.dist)}[/] {escape(have)}", soft_wrap=True)
        if r.recovered:
            lines.add(
                f"  [yellow]recovered an interrupted write (pid "
                f"{r.recovered.get('pid')}): rolled back "
                f"{', '.join(r.recovered.get('rolled_back') or []) or 'nothing'}[/]",
                soft_wrap=True,
            )
        if r.note:
            lines.add(f"  {escape(r.note)}", soft_wrap=True)
        for w in r.warnings:
            lines.add(f"  [bold yellow]warning:[/] {escape(w)}", soft_wrap=True)
        if r.plan is not None:
            where = r.series_dir or f"patches/{r.dist}/{r.plan.series_version or ''}"
            lines.add(f"  series {escape(where)}", soft_wrap=True)
            for p in r.plan.patches:
                detail = f" ({escape(p.detail)})" if p.detail else ""
                lines.add(
                    f"  [{p.state.style}]{p.state:16}[/] {escape(p.id)}{detail}", soft_wrap=True
                )
                lines.add(f"  {'':16} [dim]{escape(p.why)}[/]", soft_wrap=True)
                for o in p.offsets:
                    lines.add(f"  {'':16} [dim]{escape(o)}[/]", soft_wrap=True)
                if p.text_diff:
                    lines.add(f"  {'':16} applied text -> series text:")
                    _diff(lines, p.text_diff, indent=f"  {'':16} ")
                for c in p.conflicts:
                    lines.add(
                        f"  {'':16} [red]{escape(c.file)}: hunk {escape(c.hunk)}"
                        f" (patch line {c.patch_line})[/]",
                        soft_wrap=True,
                    )
                    lines.add(
                        f"  {'':16} expected:\n{_indent(c.expected)}",
                        soft_wrap=True,
                        markup=False,
                    )
                    lines.add(
                        f"  {'':16} found:\n{_indent(c.found or '(end of file)')}",
                        soft_wrap=True,
                        markup=False,
                    )
            for prob in r.plan.problems:
                lines.add(f"  [bold red]refused[/] {escape(prob)}", soft_wrap=True)
            if diffs:
                for ch in r.plan.changes:
                    lines.add(f"\n  [bold]{escape(ch.path)}[/] (against the live file)")
                    _diff(lines, ch.diff(), indent="    ")
        for path in r.hand_edited:
            lines.add(
                f"  [magenta]edited by hand[/] {escape(path)} (differs from RECORD and "
                "from what the patches produce)",
                soft_wrap=True,
            )
        if r.written:
            lines.add(
                f"  [green]wrote {len(r.written)} file(s):[/] {escape(', '.join(r.written))}",
                soft_wrap=True,
            )
    return lines


def _diff(lines: Lines, diff: str, indent: str) -> None:
    """A unified diff, coloured by line kind."""
    from rich.markup import escape

    for line in diff.splitlines():
        style = (
            "green"
            if line.startswith("+")
            else "red"
            if line.startswith("-")
            else "cyan"
            if line.startswith("@@")
            else ""
        )
        text = f"{indent}{escape(line)}"
        lines.add(f"[{style}]{text}[/]" if style else text, soft_wrap=True)


def _indent(text: str) -> str:
    return "\n".join("        " + line for line in text.rstrip("\n").splitlines()) or "        "


def markdown(reports: list[DistReport], target: str) -> str:
    """The patch-diff report for review in a pull request or an issue (embedded text escaped)."""
    from harness.mdtext import cell, code, fenced, text

    out = [f"# Patch report for {code(target)}", ""]
    for r in reports:
        out.append(f"## {text(r.dist)} {text(r.installed or '(not installed)')}")
        if r.note:
            out.append(f"\n{text(r.note)}\n")
        if r.plan is None:
            continue
        out.append("")
        out.append("| patch | state | why |")
        out.append("|---|---|---|")
        for p in r.plan.patches:
            detail = f" ({p.detail})" if p.detail else ""
            out.append(f"| {code(p.id)} | {cell(p.state + detail)} | {cell(p.why)} |")
        for p in r.plan.patches:
            if p.text_diff:
                out += ["", f"### {code(p.id)}: applied text -> series text", ""]
                out += fenced(p.text_diff, "diff")
        for prob in r.plan.problems:
            out.append(f"\n**Refused:** {text(prob)}")
        for ch in r.plan.changes:
            out += ["", f"### {code(ch.path)}", "", *fenced(ch.diff(), "diff")]
        if r.hand_edited:
            out += [
                "",
                "Edited by hand since install: " + ", ".join(code(p) for p in r.hand_edited),
            ]
        out.append("")
    return "\n".join(out) + "\n"
