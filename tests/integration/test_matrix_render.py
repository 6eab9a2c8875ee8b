"""``harness matrix --format html`` as a reader sees it (issue 26): rendered by headless
Chromium from a file:// URL with no network, every version a row with its errors, drift,
patch states and GPU record; hostile text stays text; the table fits a laptop's width."""

from __future__ import annotations

import html
import re
import subprocess
import tempfile
from pathlib import Path

from harness.reading.matrix import Matrix, Row
from harness.views.matrix_html import html_page
from tests.integration.test_matrix import _matrix, pair, series  # noqa: F401 (a fixture)
from tests.support.browser import FLAGS, chromium, dump_dom
from tests.support.index import Index

SERIES = [f"{n:04d}-p{n}" for n in range(1, 14)]
HEAD = ["vllm", "errors", "drift", "patches apply", "skip", "conflict", "GPU", "note"]


def _row(v: str) -> Row:
    minor = int(v.split(".")[1])
    if minor < 16:
        return Row(v, patches={"skip": SERIES})
    if minor in (17, 18):
        return Row(v, errors=1, drift=9, patches={"apply": SERIES[:10], "skip": SERIES[10:]})
    if minor == 19:
        return Row(v, drift=3, patches={"apply": SERIES[:9], "conflict": SERIES[9:10]})
    return Row(v, drift=11, patches={"apply": SERIES[:11] + SERIES[12:], "skip": SERIES[11:12]},
               gpu_verified=v == "0.20.2")  # fmt: skip


VERSIONS = ["0.11.0", "0.11.1", "0.12.0", "0.13.0", "0.14.0", "0.14.1", "0.15.0", "0.15.1",
            "0.16.0", "0.17.0", "0.17.1", "0.18.0", "0.19.0", "0.19.1", "0.20.0", "0.20.1",
            "0.20.2"]  # fmt: skip
HOSTILE = "pypi: vllm 9.9 does not exist <b>on</b> the index; nearest: 0.20.2 & <script>"
MATRIX = Matrix(
    "speculators",
    "vllm",
    (*(_row(v) for v in VERSIONS), Row("9.9", failed=HOSTILE)),
    with_patches=True,
)

#: Appended to the page: what the browser laid out, as one line the DOM dump carries.
MEASURE = (
    "<script>const t = document.getElementById('matrix');"
    "const rows = [...t.tBodies[0].rows].filter(r => r.getBoundingClientRect().height > 0);"
    "document.body.insertAdjacentHTML('beforeend', '<p id=measured>' + rows.length + ' ' + "
    "Math.ceil(t.getBoundingClientRect().right) + ' ' + window.innerWidth + ' ' + new Set("
    "rows.filter(r => r.className != 'failed').map(r => Math.round(r.offsetHeight))).size + "
    "'</p>');</script>"
)


def _rows(dom: str) -> dict[str, list[str]]:
    body = re.search(r"<tbody>(.*?)</tbody>", dom, re.S)
    assert body is not None, dom[:2000]
    out = {}
    for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", body.group(1), re.S):
        cells = [html.unescape(re.sub(r"<[^>]+>", "", c)).strip()
                 for c in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]  # fmt: skip
        out[cells[0]] = cells
    return out


def _head(dom: str) -> list[str]:
    return [html.unescape(h) for h in re.findall(r"<th>(.*?)</th>", dom)]


def test_every_version_is_a_row_with_its_columns_in_a_browser(tmp_path: Path) -> None:
    page = tmp_path / "matrix.html"
    text = html_page(MATRIX)
    assert "http" not in text and "<script" not in text  # self-contained, nothing to run
    page.write_text(text.replace("</body>", MEASURE + "</body>"))
    dom = dump_dom(page)
    assert _head(dom) == HEAD
    rows = _rows(dom)
    assert list(rows) == [*VERSIONS, "9.9"]  # every version, oldest first, none lost
    assert rows["0.11.0"] == ["0.11.0", "0", "0", "-", "0001-0013", "-", "-", ""]
    assert rows["0.17.1"][1:4] == ["1", "9", "0001-0010"]
    assert rows["0.19.0"][5] == "0010" and rows["0.19.0"][6] == "-"
    assert rows["0.20.2"] == ["0.20.2", "0", "11", "0001-0011, 0013", "0012", "-", "verified", ""]
    assert [v for v, r in rows.items() if r[6] == "verified"] == ["0.20.2"]
    assert rows["9.9"] == ["9.9", "-", "-", "-", "-", "-", "-", HOSTILE]  # text, not markup
    assert "<b>on</b>" not in dom and "errors in 3 of 18 versions; 1 could not be checked" in dom
    (measured,) = re.findall(r'<p id="measured">(\d+) (\d+) (\d+) (\d+)</p>', dom)
    shown, right, width, heights = map(int, measured)
    assert shown == len(VERSIONS) + 1 and right <= width, measured  # no row hidden, no h-scroll
    assert heights == 1, measured  # no range broken across lines ("0001-" / "0013")


def test_a_screenshot_is_drawn_without_the_network(tmp_path: Path) -> None:
    page = tmp_path / "matrix.html"
    page.write_text(html_page(MATRIX))
    shot = tmp_path / "matrix.png"
    with tempfile.TemporaryDirectory(prefix="harness-chromium-") as profile:
        cp = subprocess.run(
            [chromium(), *FLAGS, f"--user-data-dir={profile}", f"--screenshot={shot}",
             "--window-size=1280,1000", page.resolve().as_uri()],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
    assert cp.returncode == 0, cp.stderr[-2000:]
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000  # drawn, not a blank page


def test_the_cli_writes_the_page_a_browser_shows(pair: Index, tmp_path: Path) -> None:  # noqa: F811
    root = series(tmp_path / "patches")
    page = tmp_path / "out" / "matrix.html"
    args = ("--versions", "1.0..2.0", "--with-patches", "--patches", str(root),
            "--format", "html", "-o", str(page))  # fmt: skip
    code, out, err = _matrix(pair, tmp_path, *args)
    assert code == 2 and "-o" in err and not page.exists()  # its folder is missing: refused first
    page.parent.mkdir()
    code, out, err = _matrix(pair, tmp_path, *args)
    assert code == 0, err
    assert out.strip() == f"errors in 0 of 3 versions: wrote {page}"
    dom = dump_dom(page)
    assert _head(dom) == ["calleex", *HEAD[1:]]
    rows = _rows(dom)
    assert rows == {
        "1.0": ["1.0", "0", "0", "-", "0001", "-", "-", ""],
        "1.5": ["1.5", "0", "0", "-", "0001", "-", "-", ""],
        "2.0": ["2.0", "0", "0", "0001", "-", "-", "verified", ""],
    }
