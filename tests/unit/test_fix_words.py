"""The pure helpers of ``check --fix``: names, shapes, line maps, the patch's words."""

from __future__ import annotations

import pytest

from harness.analysis.findings import ERROR, Finding
from harness.fixing.describe import details, gates, minor_range, why_line
from harness.fixing.lines import line_map
from harness.fixing.model import Fix, ImportEdit, KeywordEdit, Manual
from harness.fixing.shapes import flipped, incompatibility, related, words
from harness.models import Symbol


@pytest.mark.parametrize(
    ("name", "expect"),
    [
        ("load_config", {"load", "config"}),
        ("HTTPSession", {"http", "session"}),
        ("AutoModelForVision2Seq", {"auto", "model", "for", "vision", "2", "seq"}),
        ("sparse_output", {"sparse", "output"}),
    ],
)
def test_words(name: str, expect: set[str]) -> None:
    assert words(name) == expect


@pytest.mark.parametrize(
    ("old", "new", "expect"),
    [
        ("Session", "ClientSession", True),
        ("sparse", "sparse_output", True),
        ("DepthWiseSeperableConv1d", "DepthWiseSeparableConv1d", True),  # a typo fixed
        ("exif_tranpose", "exif_transpose", True),
        ("get_model_path", "try_get_dense_modules", False),  # only a generic word shared
        ("compute_probs", "apply_sampling_constraints", False),
        ("Session", "Connection", False),
    ],
)
def test_related_names(old: str, new: str, expect: bool) -> None:
    assert related(old, new) is expect


@pytest.mark.parametrize(
    ("old", "new", "expect"),
    [
        ("disable_log_requests", "enable_log_requests", True),
        ("skip_checks", "checks", True),
        ("timeout", "timeout_s", False),
        ("sparse", "sparse_output", False),
    ],
)
def test_flipped_polarity(old: str, new: str, expect: bool) -> None:
    assert flipped(old, new) is expect


def _fn(
    params: list[tuple[str, str | None]], kind: str = "function", is_async: bool = False
) -> Symbol:
    return Symbol.from_dict(
        {
            "qualname": "f",
            "kind": kind,
            "file": "x.py",
            "line": 1,
            "is_async": is_async,
            "parameters": [
                {"name": n, "kind": "positional-or-keyword", "default": d} for n, d in params
            ],
        }
    )


@pytest.mark.parametrize(
    ("new", "expect"),
    [
        (_fn([("a", None), ("b", "1")]), None),
        (_fn([("a", None)]), None),  # a removed parameter: its calls are judged on their own
        (_fn([("a", None), ("b", "1"), ("c", "2")]), None),
        (_fn([("a", None), ("b", "1"), ("c", None)]), "new required parameter 'c'"),
        (_fn([("a", None), ("b", None)]), "parameter 'b' lost its default"),
        (_fn([("a", None), ("b", "1")], kind="class"), "it is a class now (was a function)"),
        (_fn([("a", None), ("b", "1")], is_async=True), "async changed"),
    ],
)
def test_incompatibility(new: Symbol, expect: str | None) -> None:
    got = incompatibility(_fn([("a", None), ("b", "1")]), new)
    assert got == expect if expect is None else expect in (got or "")


@pytest.mark.parametrize(
    ("before", "after", "lines"),
    [
        ("a\nb\nc\n", "a\nb\nc\n", [1, 2, 3]),
        ("a\nb\nc\nd\n", "a\nB\nB2\nc\nd\n", [1, 2, 4, 5]),  # a line became two
        ("a\nb\nc\nd\n", "a\nc\nd\n", [1, 2, 2, 3]),  # a line dropped
        ("x\ny\n", "new\nx\ny\n", [2, 3]),  # a line inserted above
    ],
)
def test_line_map(before: str, after: str, lines: list[int]) -> None:
    where = line_map(before, after)
    assert [where(i) for i in range(1, len(lines) + 1)] == lines


@pytest.mark.parametrize(
    ("version", "expect"),
    [("0.33.0", ">=0.33,<0.34"), ("1.5.2", ">=1.5,<1.6"), ("2", ">=2.0,<2.1"), ("x.y", None)],
)
def test_minor_range(version: str, expect: str | None) -> None:
    assert minor_range(version) == expect


def _finding(file: str, line: int, symbol: str, category: str = "import-missing") -> Finding:
    return Finding(ERROR, category, file, line, "", symbol, "m", "")


def test_the_why_names_each_fixed_finding_and_groups_one_statements_moves() -> None:
    g = "speculators/data_generation/gen.py"
    fixes = [
        Fix(
            _finding(g, 15, "v.a:x"),
            "moved-import",
            ImportEdit(15, "v.a", "x", "v.b", "x"),
            "",
            "vllm",
            "0.33.0",
        ),
        Fix(
            _finding(g, 15, "v.a:y"),
            "moved-import",
            ImportEdit(15, "v.a", "y", "v.b", "y"),
            "",
            "vllm",
            "0.33.0",
        ),
        Fix(
            _finding(g, 20, "v.a:Old"),
            "renamed-symbol",
            ImportEdit(20, "v.a", "Old", "v.a", "New"),
            "",
            "vllm",
            "0.33.0",
        ),
        Fix(
            _finding(g, 40, "v.c:Req", "unexpected-kwarg"),
            "renamed-keyword",
            KeywordEdit(40, "a", "b"),
            "",
            "vllm",
            "0.33.0",
        ),
        Fix(
            _finding(g, 41, "v.c:Req", "unexpected-kwarg"),
            "dropped-keyword",
            KeywordEdit(41, "z", None),
            "",
            "vllm",
            "0.33.0",
        ),
    ]
    assert why_line(fixes, "vllm 0.11.0", "vllm 0.33.0") == (
        "check --fix, vllm 0.11.0 -> vllm 0.33.0: gen.py:15 import x, y from v.b; "
        "gen.py:20 Old renamed New (v.a); gen.py:40 Req(a= -> b=); gen.py:41 Req() without z"
    )
    assert gates(fixes, {}) == {"vllm": ">=0.33,<0.34"}
    assert gates(fixes, {"vllm": ">=0.33,<0.35"}) == {"vllm": ">=0.33,<0.35"}
    text = details(fixes[:1], [Manual(_finding(g, 99, "v.c:S", "missing-required-arg"), "r")])
    assert text.endswith("\n\n")  # a blank line before the next part of the header
    assert text.splitlines()[:3] == [
        f"* {g}:15 moved-import: ",
        "Left to a person (see `harness check --with-patches`):",
        f"* {g}:99 missing-required-arg v.c:S",
    ]
