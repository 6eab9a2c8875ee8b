"""``harness matrix --format html``: one self-contained page (inline CSS, no script, no
network), one table row per callee version. No logic: every number is in the Matrix already."""

from __future__ import annotations

import html

from harness.reading.matrix import Matrix, Row
from harness.views.matrix import compact_ids, gpu_cell, summary

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#1d2330}
table{border-collapse:collapse} td,th{border:1px solid #d0d7de;padding:.25em .6em;text-align:left}
th{background:#f6f8fa} td.n{text-align:right;font-variant-numeric:tabular-nums}
code{font:12px/1.4 ui-monospace,monospace} .bad{color:#c0262d;font-weight:600}
.ok{color:#0a7d32} .drift{color:#9a6700} .conflict{color:#c0262d}
tr.failed td{color:#656d76} .verified{color:#0a7d32;font-weight:600}
td{white-space:nowrap} td.note{white-space:normal} .span{white-space:nowrap}
"""

PATCH_STATES = ("apply", "skip", "conflict")


def html_page(m: Matrix) -> str:
    """The matrix as one HTML page: a title, the table, the summary line."""
    e = html.escape
    title = f"{m.caller} against {m.callee}: {len(m.rows)} versions" + (
        " (with patches)" if m.with_patches else ""
    )
    head = [m.callee, "errors", "drift"]
    head += ["patches apply", "skip", "conflict", "GPU"] if m.with_patches else []
    head += ["note"]
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>{e(title)}</title>"
        f"<style>{CSS}</style></head><body><h1>{e(title)}</h1>",
        "<table id='matrix'><thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in head),
        "</tr></thead><tbody>",
    ]
    parts += [_row(m, r) for r in m.rows]
    parts.append(f"</tbody></table><p id='summary'>{e(summary(m))}</p></body></html>\n")
    return "".join(parts)


def _row(m: Matrix, r: Row) -> str:
    e = html.escape
    cells = [f"<td><code>{e(r.version)}</code></td>"]
    if r.failed is not None:
        cells += ["<td class='n'>-</td>", "<td class='n'>-</td>"]
        cells += ["<td>-</td>"] * (4 if m.with_patches else 0)
        cells.append(f"<td class='note'>{e(r.failed)}</td>")
        return f"<tr class='failed' data-version='{e(r.version)}'>{''.join(cells)}</tr>"
    cells.append(f"<td class='n {'bad' if r.errors else 'ok'}'>{r.errors}</td>")
    cells.append(f"<td class='n{' drift' if r.drift else ''}'>{r.drift}</td>")
    if m.with_patches:
        for state in PATCH_STATES:
            ids = r.patches.get(state, [])
            cls = " class='conflict'" if state == "conflict" and ids else ""
            tip = f" title='{e(', '.join(ids))}'" if ids else ""
            spans = [f"<span class='span'>{e(s)}</span>" for s in compact_ids(ids).split(", ")]
            cells.append(f"<td{cls}{tip}>{', '.join(spans) if ids else '-'}</td>")
        gpu = gpu_cell(r)
        cells.append(f"<td{' class=verified' if r.gpu_verified else ''}>{e(gpu)}</td>")
    cells.append("<td class='note'></td>")  # the note: why a version could not be checked
    state = "errors" if r.errors else "clean"
    return f"<tr class='{state}' data-version='{e(r.version)}'>{''.join(cells)}</tr>"
