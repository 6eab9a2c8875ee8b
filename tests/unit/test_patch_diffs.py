"""Unified diffs: parsing with file:line errors, zero-fuzz application, round trips. Pure."""

from __future__ import annotations

import pytest

from harness.errors import PatchError
from harness.patching.diffs import (
    apply,
    is_applied,
    lines_of,
    parse,
    patch_text,
    reverse,
    unified,
)

BASE = "".join(f"line {i}\n" for i in range(1, 21))


def edit(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


def test_round_trip_unified_then_apply() -> None:
    after = edit(edit(BASE, "line 3\n", "line three\n"), "line 17\n", "line 17\nadded\n")
    (fp,) = parse(unified("pkg/m.py", BASE, after), "p.patch")
    assert fp.path == "pkg/m.py" and len(fp.hunks) == 2
    got = apply(fp, BASE)
    assert got.new_text == after and not got.conflicts
    assert is_applied(fp, after) and not is_applied(fp, BASE)
    assert apply(reverse(fp), after).new_text == BASE


def test_bounded_offset_is_applied_and_reported() -> None:
    after = edit(BASE, "line 10\n", "line ten\n")
    (fp,) = parse(unified("m.py", BASE, after), "p.patch")
    shifted = "header\n" * 5 + BASE
    got = apply(fp, shifted)
    assert got.new_text == "header\n" * 5 + after
    assert got.hunks[0].offset == 5


def test_context_mismatch_is_a_conflict_with_expected_and_found() -> None:
    after = edit(BASE, "line 10\n", "line ten\n")
    (fp,) = parse(unified("m.py", BASE, after), "p.patch")
    drifted = edit(BASE, "line 9\n", "line nine (edited)\n")
    got = apply(fp, drifted)
    assert got.new_text is None
    (c,) = got.conflicts
    assert "line 9\n" in c.expected and "line nine (edited)\n" in c.found


def test_no_newline_at_end_of_file() -> None:
    before, after = "a\nb", "a\nc"
    (fp,) = parse(unified("m.py", before, after), "p.patch")
    assert apply(fp, before).new_text == after


def test_new_file() -> None:
    text = "--- /dev/null\n+++ b/pkg/new.py\n@@ -0,0 +1,2 @@\n+x = 1\n+y = 2\n"
    (fp,) = parse(text, "p.patch")
    assert fp.new_file and apply(fp, None).new_text == "x = 1\ny = 2\n"


@pytest.mark.parametrize(
    ("text", "where", "words"),
    [
        (
            "--- a/../etc/passwd\n+++ b/../etc/passwd\n@@ -1 +1 @@\n-a\n+b\n",
            "p.patch:1",
            "leaves site-packages",
        ),
        ("--- a//etc/x\n+++ /etc/x\n@@ -1 +1 @@\n-a\n+b\n", "p.patch:1", "leaves site-packages"),
        ("2c2\n< a\n---\n> b\n", "p.patch:1", "ed-style"),
        ("Binary files a/x and b/x differ\n", "p.patch:1", "binary"),
        ("--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n", "p.patch:3", "found -2 +2"),
        ("--- a/m.py\n+++ b/m.py\n@@ garbage @@\n", "p.patch:3", "malformed hunk header"),
        ("just prose\n", "p.patch:1", "no unified-diff"),
        ("--- a/m.py\n@@ -1 +1 @@\n", "p.patch:1", "without a '+++'"),
    ],
)
def test_malformed_patches_name_file_and_line(text: str, where: str, words: str) -> None:
    with pytest.raises(PatchError) as info:
        parse(text, "p.patch")
    assert info.value.message.startswith(where)
    assert words in info.value.message


def test_commentary_before_the_diff_is_allowed() -> None:
    text = "Why: vLLM 0.16 moved it.\n\ndiff --git a/m.py b/m.py\n" + unified("m.py", "a\n", "b\n")
    assert parse(text, "p.patch")[0].path == "m.py"


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("", []),
        ("a", ["a"]),
        ("a\n", ["a\n"]),
        ("a\r\nb", ["a\r\n", "b"]),
        ("a\rb\n", ["a\rb\n"]),  # a lone CR is inside its line
        ("a\x0cb\n\x0c\n", ["a\x0cb\n", "\x0c\n"]),
        ("a\u2028b\n", ["a\u2028b\n"]),
    ],
)
def test_lines_end_at_newlines_only(text: str, lines: list[str]) -> None:
    assert lines_of(text) == lines
    assert "".join(lines_of(text)) == text


@pytest.mark.parametrize(
    ("data", "text"),
    [
        (b"--- a/x\n+\r\n", "--- a/x\n+\r\n"),  # one CR is the change: kept
        (b"--- a/x\r\n+y\r\n", "--- a/x\n+y\n"),  # every line CRLF: a converted file
        (b"", ""),
    ],
)
def test_a_patch_file_is_read_byte_for_byte(data: bytes, text: str) -> None:
    assert patch_text(data) == text
