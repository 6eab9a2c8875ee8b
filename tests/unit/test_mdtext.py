"""Text embedded in Markdown stays text: checked with a real CommonMark parser (markdown-it)."""

from __future__ import annotations

import html
import re

import pytest
from markdown_it import MarkdownIt

from harness import mdtext

MD = MarkdownIt("commonmark").enable("table")
HOSTILE = [
    "plain words",
    "a | b | c",
    "*not emphasis* and _not either_ and **bold**",
    "`code` and ``more``",
    "<script>alert(1)</script> &lt; &amp;",
    "[a link](http://x) ![img](y)",
    "~~strike~~ back\\slash",
    "two\nlines\n# not a heading",
]


def _plain(rendered: str) -> str:
    """What a reader sees: tags stripped, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", rendered)).strip()


@pytest.mark.parametrize("value", HOSTILE)
def test_text_reads_back_as_typed(value: str) -> None:
    rendered = MD.render("- **blocker** " + mdtext.text(value))
    assert _plain(rendered) == "blocker " + " ".join(value.splitlines())
    assert "<script>" not in rendered and "<em>" not in rendered and "<a " not in rendered


@pytest.mark.parametrize("value", HOSTILE)
def test_a_cell_stays_one_cell(value: str) -> None:
    rendered = MD.render(f"| id | why |\n|---|---|\n| x | {mdtext.cell(value)} |\n")
    cells = re.findall(r"<td>(.*?)</td>", rendered, re.S)
    assert len(cells) == 2, rendered
    assert _plain(cells[1]) == " ".join(value.splitlines())


@pytest.mark.parametrize("value", ["`", "a`b", "``x``", "`lead", "trail`", "0001-fix"])
def test_code_span_holds_backticks(value: str) -> None:
    rendered = MD.render("see " + mdtext.code(value))
    (inner,) = re.findall(r"<code>(.*?)</code>", rendered, re.S)
    assert html.unescape(inner) == value


def test_fenced_block_holds_a_fence() -> None:
    body = "--- a/x.md\n+++ b/x.md\n@@ -1,3 +1,3 @@\n ```python\n-old\n+new\n```\n"
    rendered = MD.render("\n".join(mdtext.fenced(body, "diff")) + "\n\nafter\n")
    (inner,) = re.findall(r"<code[^>]*>(.*?)</code>", rendered, re.S)
    assert html.unescape(inner) == body
    assert "<p>after</p>" in rendered


def test_patch_report_markdown_escapes_the_series_text() -> None:
    """``apply-patches --report``: a why with ``|`` and backticks stays in its cell."""
    from pathlib import Path

    from harness.patching.diffs import parse, unified
    from harness.patching.manifest import NONE
    from harness.patching.ops import DistReport
    from harness.patching.plan import LiveFile, plan_apply, sha
    from harness.patching.series import PatchSpec, Series
    from harness.views.patches import markdown

    before, after = "a\nb\n", "a\nB\n"
    diff = unified("pkg/a.py", before, after)
    why = "fix | the `b` *now*"
    spec = PatchSpec("0001-x", Path("0001-x.patch"), why, (), diff, tuple(parse(diff, "x")))
    series = Series("pkg", "1.0", Path("."), (spec,))
    live = {"pkg/a.py": LiveFile("pkg/a.py", before, sha(before), 0o644, sha(before))}
    plan = plan_apply(series, live, {"pkg": "1.0"}, NONE)
    md = markdown([DistReport("pkg", "1.0", ["1.0"], plan, [])], "gpu (root@h:22)")
    rendered = MD.render(md)
    (row,) = [r for r in re.findall(r"<tr>(.*?)</tr>", rendered, re.S) if "0001-x" in r]
    cells = re.findall(r"<td>(.*?)</td>", row, re.S)
    assert len(cells) == 3 and _plain(cells[2]) == why
