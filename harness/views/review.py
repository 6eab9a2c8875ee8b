"""The review as Markdown (for a PR or an issue), self-contained HTML, or a terminal summary.

No logic: every decision is in the Review already.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from harness.mdtext import cell, code, fenced, text
from harness.report.model import Review
from harness.views.fold import cut_command

if TYPE_CHECKING:
    from harness.analysis.findings import CheckReport, Finding
    from harness.runs.target.describe import StepPlan


def _facts_rows(r: Review) -> list[tuple[str, str]]:
    f = r.facts
    py = f.python if f is not None else {}
    rows = [
        ("target", r.target),
        ("python", f"{py.get('executable')} {py.get('version')}"),
        ("site-packages", ", ".join(f.site_packages if f is not None else ())),
    ]
    rows += [(k, v or "not installed") for k, v in (f.dists if f is not None else {}).items()]
    gpus = f.gpus if f is not None else ()
    rows.append(
        (
            "GPUs",
            "; ".join(f"{g.index}: {g.name} {g.memory_free_mib} MiB free" for g in gpus)
            or f"none ({f.gpu_note if f is not None else None})",
        )
    )
    rows.append(("stale GPU holders", ", ".join(str(h.pid) for h in r.stale_gpu_holders) or "none"))
    return rows


def _findings(check: CheckReport | None) -> list[Finding]:
    return list(check.findings) if check is not None else []


# -- Markdown -------------------------------------------------------------------------------
def markdown(r: Review) -> str:
    """Everything embedded is escaped (:mod:`harness.mdtext`): a ``|`` in a patch's why, a
    backtick in a path or a fence inside a diff cannot break the document."""
    out = [f"# Run review: **{r.verdict}**", "", f"{code(r.target)} · {text(r.generated)}", ""]
    out.append("## Verdict")
    out.append("")
    for reason in r.reasons or []:
        hint = f" — {code(reason.hint)}" if reason.hint else ""
        out.append(f"- **{reason.severity}** {text(reason.text)}{hint}")
    if not r.reasons:
        out.append("- nothing stands in the way")
    out += ["", "## Target", "", "| | |", "|---|---|"]
    out += [f"| {cell(k)} | {cell(v)} |" for k, v in _facts_rows(r)]
    if r.step:
        out += ["", "## Step", "", *fenced(_step_text(r.step))]
    out += ["", "## Patch series"]
    for d in r.patches:
        out += ["", f"### {text(d.dist)} {text(d.installed or '')}"]
        if d.note:
            out.append(f"\n{text(d.note)}")
        if d.patches:
            out += ["", "| patch | state | why |", "|---|---|---|"]
            out += [f"| {code(p.id)} | {cell(p.state.value)} | {cell(p.why)} |" for p in d.patches]
        for c in d.changes:
            out += ["", f"#### {code(c.path)} (diff against the live file)", ""]
            out += fenced(c.diff, "diff")
        if d.hand_edited:
            out.append(
                "\nEdited by hand since install: " + ", ".join(code(p) for p in d.hand_edited)
            )
    for title, check in (
        ("Check (live environment)", r.check),
        ("Check (after the patches)", r.check_with_patches),
        ("Check (vllm serve arguments)", r.serve),
    ):
        if check is None:
            continue
        out += ["", f"## {title}", ""]
        fs = _findings(check)
        out += [
            f"- **{text(f.severity.value)}** {code(str(f.file) + ':' + str(f.line))} "
            f"{text(f.message)}"
            for f in fs
        ]
        if not fs:
            out.append("- no findings")
    return "\n".join(out) + "\n"


def _step_text(step: StepPlan) -> str:
    if step.error:
        return f"{step.name}: {step.error}"
    lines = [f"step: {step.name}", f"command: {cut_command(' '.join(step.command))}"]
    if step.cwd:
        lines.append(f"cwd: {step.cwd}")
    for k, v in step.env.items():
        lines.append(f"env {k}={v}")
    if step.tensor_parallel:
        lines.append(f"tensor-parallel: {step.tensor_parallel}")
    for n in step.requires:
        mark = "ok" if n.ok else "NOT MET"
        lines.append(f"needs {n.dist}{n.spec}: {n.found or 'not installed'} ({mark})")
    if step.checks is not None:
        said = [f"{c} -> {', '.join(v)}" if v else c for c, v in step.checks.items()]
        lines.append(f"checks: {'; '.join(said) or 'none (facts and GPUs only)'}")
    return "\n".join(lines)


# -- HTML -----------------------------------------------------------------------------------
CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#1d2330}
h1 .ready{color:#0a7d32} h1 .not-ready{color:#c0262d}
.reason{margin:.2em 0} .blocker{color:#c0262d} .warning{color:#9a6700} .info{color:#3451b2}
table{border-collapse:collapse} td,th{border:1px solid #d0d7de;padding:.25em .6em;text-align:left}
details{margin:.6em 0;border:1px solid #d0d7de;border-radius:6px;padding:.4em .8em}
summary{cursor:pointer;font-weight:600} code,pre{font:12px/1.4 ui-monospace,monospace}
pre{background:#f6f8fa;padding:.6em;overflow:auto}
pre.diff span{display:block} .add{background:#e6ffec;color:#116329}
.del{background:#ffebe9;color:#82071e}
.hunk{color:#3451b2} .state-conflicts{color:#c0262d} .state-applied{color:#0a7d32}
"""


def _diff_html(diff: str) -> str:
    """One block per line and nothing between them: a newline between blocks inside a
    ``<pre>`` is a line of its own, which drew every diff double-spaced."""
    rows = []
    for line in diff.splitlines():
        cls = (
            "add"
            if line.startswith("+") and not line.startswith("+++")
            else "del"
            if line.startswith("-") and not line.startswith("---")
            else "hunk"
            if line.startswith("@@")
            else "ctx"
        )
        rows.append(f'<span class="{cls}">{html.escape(line) or " "}</span>')
    return "<pre class='diff'>" + "".join(rows) + "</pre>"


def html_page(r: Review) -> str:
    e = html.escape
    v = "ready" if r.ready else "not-ready"
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>Run review: "
        f"{e(r.verdict)}</title><style>{CSS}</style></head><body>",
        f"<h1>Run review: <span class='{v}' id='verdict'>{e(r.verdict)}</span></h1>",
        f"<p><code>{e(r.target)}</code> · {e(r.generated)}</p><h2>Verdict</h2>",
    ]
    for reason in r.reasons:
        hint = f" — <code>{e(reason.hint)}</code>" if reason.hint else ""
        parts.append(
            f"<div class='reason {reason.severity}'>{reason.severity.icon} "
            f"<b>{reason.severity}</b> {e(reason.text)}{hint}</div>"
        )
    if not r.reasons:
        parts.append("<div class='reason'>nothing stands in the way</div>")
    parts.append("<details open><summary>Target</summary><table>")
    parts += [f"<tr><th>{e(k)}</th><td>{e(str(v))}</td></tr>" for k, v in _facts_rows(r)]
    parts.append("</table></details>")
    if r.step:
        parts.append(
            f"<details open><summary>Step</summary><pre>{e(_step_text(r.step))}</pre></details>"
        )
    parts.append("<details open><summary>Patch series</summary>")
    for d in r.patches:
        parts.append(f"<h3>{e(d.dist)} {e(d.installed or '')}</h3>")
        if d.note:
            parts.append(f"<p>{e(d.note)}</p>")
        if d.patches:
            parts.append("<table><tr><th>patch</th><th>state</th><th>why</th></tr>")
            parts += [
                f"<tr><td><code>{e(p.id)}</code></td><td class='state-"
                f"{e(p.state.value.split()[0])}'>{e(p.state.value)}</td><td>{e(p.why)}</td></tr>"
                for p in d.patches
            ]
            parts.append("</table>")
        for c in d.changes:
            parts.append(
                f"<details open><summary>{e(c.path)} (diff against the live file)"
                f"</summary>{_diff_html(c.diff)}</details>"
            )
        if d.hand_edited:
            parts.append(f"<p>Edited by hand since install: {e(', '.join(d.hand_edited))}</p>")
    parts.append("</details>")
    for title, check in (
        ("Check (live environment)", r.check),
        ("Check (after the patches)", r.check_with_patches),
        ("Check (vllm serve arguments)", r.serve),
    ):
        if check is None:
            continue
        fs = _findings(check)
        parts.append(f"<details open><summary>{e(title)}: {len(fs)} finding(s)</summary><ul>")
        parts += [
            f"<li class='{e(f.severity.value)}'><b>{e(f.severity.value)}</b> "
            f"<code>{e(f.file)}:{f.line}</code> {e(f.message)}<br>"
            f"<small>{e(f.fix)}</small></li>"
            for f in fs
        ]
        parts.append("</ul></details>")
    parts.append("</body></html>")
    return "\n".join(parts)


# -- terminal -------------------------------------------------------------------------------
def terminal_lines(r: Review, *, brief: bool = False) -> list[str]:
    """The review as markup lines (``brief``: the verdict and the first reasons)."""
    from rich.markup import escape

    color = "green" if r.ready else "red"
    out = [f"[bold]run review[/] [dim]{escape(r.target)}[/]: [bold {color}]{r.verdict}[/]"]
    for reason in r.reasons[: 8 if brief else None]:
        hint = f"  [dim]→ {escape(reason.hint)}[/]" if reason.hint else ""
        out.append(
            f"  [{reason.severity.style}]{reason.severity.icon} "
            f"{reason.severity}[/] {escape(reason.text)}{hint}"
        )
    if brief and len(r.reasons) > 8:
        out.append(f"  … {len(r.reasons) - 8} more: harness report")
    if brief:
        return out
    for k, v in _facts_rows(r):
        out.append(f"  [dim]{k:18}[/] {escape(str(v))}")
    if r.step:  # the step that would run, as md/html/json show it
        out.append("  [bold]step[/]")
        out += [f"    {escape(line)}" for line in _step_text(r.step).splitlines()]
    for d in r.patches:
        for p in d.patches or ():
            out.append(f"  [dim]patch[/] {escape(p.id)}: {escape(p.state.value)}")
    return out
