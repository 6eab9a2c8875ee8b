"""The review as a reader sees it (issue 10): terminal step section, HTML diff spacing in a real
browser, Markdown that embeds hostile text through a real CommonMark parser."""

from __future__ import annotations

import html
import io
import json
import re
from pathlib import Path

from markdown_it import MarkdownIt
from rich.console import Console

from harness.cli.common import emit
from harness.report.model import BLOCKER, Reason, Review
from harness.views import review as render
from tests.support.browser import dump_dom

DIFF = (
    "--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -1,4 +1,4 @@\n context one\n-old line\n"
    "+new line\n context two\n"
)
STEP = {
    "name": "extract",
    "command": ["/venv/bin/python", "-m", "speculators.data", "--tp", "2"],
    "cwd": "/root/eagle3",
    "env": {"HF_HOME": "/data/hf"},
}


def review(why: str = "a limit of 10 is too low", diff: str = DIFF) -> Review:
    reason = Reason(BLOCKER, "1 patch(es) are not applied: *0001* | `x`", "harness apply")
    return Review.from_dict(
        {
            "target": "gpu (root@10.0.0.5:22)",
            "generated": "2026-01-01 00:00",
            "facts": {"python": {"executable": "/venv/bin/python", "version": "3.12"}, "dists": {}},
            "stale_gpu_holders": [],
            "patches": [
                {
                    "dist": "speculators",
                    "installed": "0.3.0",
                    "note": None,
                    "hand_edited": [],
                    "plan": {
                        "patches": [{"id": "0001-limit", "state": "applies cleanly", "why": why}],
                        "changes": [{"path": "pkg/mod.py", "diff": diff}],
                    },
                }
            ],
            "check": None,
            "check_with_patches": None,
            "step": STEP,
            "reasons": [reason.to_dict()],
        }
    )


def test_terminal_shows_the_step_section_like_the_other_formats() -> None:
    out = io.StringIO()
    emit(Console(file=out, width=100, no_color=True), render.terminal_lines(review()))
    text = out.getvalue()
    step_lines = [
        "step: extract",
        "command: /venv/bin/python -m speculators.data --tp 2",
        "cwd: /root/eagle3",
        "env HF_HOME=/data/hf",
    ]
    for line in step_lines:
        assert line in text, text
        assert line in render.markdown(review())
        assert html.escape(line) in render.html_page(review())
    assert json.loads(json.dumps(review().to_dict()))["step"]["name"] == "extract"


def test_html_diff_lines_are_single_spaced_in_a_browser(tmp_path: Path) -> None:
    page = tmp_path / "review.html"
    measure = (
        "<script>const pre = document.querySelector('pre.diff') || "
        "document.querySelectorAll('pre')[1];"
        "const cs = getComputedStyle(pre);"
        "const inner = pre.clientHeight - parseFloat(cs.paddingTop) - parseFloat(cs.paddingBottom);"
        "document.body.insertAdjacentHTML('beforeend', '<p id=lines>' + "
        "Math.round(inner / parseFloat(cs.lineHeight)) + '</p>');</script>"
    )
    page.write_text(render.html_page(review()).replace("</body>", measure + "</body>"))
    dom = dump_dom(page)
    (lines,) = re.findall(r'<p id="lines">(\d+)</p>', dom)
    assert int(lines) == len(DIFF.splitlines())  # 7 lines shown as 7, not 13


def test_markdown_keeps_embedded_text_as_text() -> None:
    hostile_why = "raise | the `limit` to *100* <b>now</b>"
    fence_diff = DIFF.replace(" context two\n", " ```python\n+```\n")
    md = render.markdown(review(why=hostile_why, diff=fence_diff))
    rendered = MarkdownIt("commonmark").enable("table").render(md)
    rows = re.findall(r"<tr>(.*?)</tr>", rendered, re.S)
    patch_row = next(r for r in rows if "0001-limit" in r)
    cells = re.findall(r"<td>(.*?)</td>", patch_row, re.S)
    assert len(cells) == 3, patch_row
    assert html.unescape(re.sub(r"<[^>]+>", "", cells[2])) == hostile_why
    assert "<b>now</b>" not in rendered and "<em>100</em>" not in rendered
    blocks = re.findall(r'<code class="language-diff">(.*?)</code>', rendered, re.S)
    assert [html.unescape(b) for b in blocks] == [fence_diff]
    reason = next(li for li in re.findall(r"<li>(.*?)</li>", rendered, re.S) if "blocker" in li)
    assert "*0001* | `x`" in html.unescape(re.sub(r"<(?!/?strong)[^>]+>", "", reason))
