"""What ``check --fix`` reads off a finding: its category and typed subject, never its prose.
A table per reader; the message is deliberately unhelpful so a regex over it would fail."""

from __future__ import annotations

from typing import Any

import pytest

from harness.analysis.findings import Category, Finding, Severity
from harness.fixing.rules.base import imported_name, unexpected_keyword


def finding(category: Category, symbol: str = "lib.x:f", **subject: Any) -> Finding:
    return Finding(Severity.ERROR, category, "app/a.py", 3, "", symbol, "(prose)", "", **subject)


@pytest.mark.parametrize(
    ("f", "expect"),
    [
        (finding(Category.IMPORT_MISSING, "lib.x:f", imported="f"), ("lib.x", "f")),
        (finding(Category.IMPORT_MISSING, "lib.x"), None),  # ``import lib.x``: no name
        (finding(Category.IMPORT_MISSING, "lib:x.f", imported="x.f"), None),  # not one name
        (finding(Category.IMPORT_GUARDED, "lib.x:f", imported="f"), None),  # guarded: no fix
        (finding(Category.UNEXPECTED_KWARG, keywords=("f",)), None),
    ],
)
def test_imported_name(f: Finding, expect: tuple[str, str] | None) -> None:
    assert imported_name(f) == expect


@pytest.mark.parametrize(
    ("f", "expect"),
    [
        (finding(Category.UNEXPECTED_KWARG, keywords=("block",)), "block"),
        (finding(Category.UNEXPECTED_KWARG), None),  # an older report without the subject
        (finding(Category.DUPLICATE_ARGUMENT, keywords=("block",)), None),
        (finding(Category.MISSING_REQUIRED_ARG, keywords=("a", "b")), None),
    ],
)
def test_unexpected_keyword(f: Finding, expect: str | None) -> None:
    assert unexpected_keyword(f) == expect


def test_the_subject_round_trips_and_an_older_dict_reads_as_none() -> None:
    f = finding(Category.MISSING_ATTRIBUTE, keywords=("k",), imported="n", attribute="a")
    assert Finding.from_dict(f.to_dict()) == f
    old = {k: v for k, v in f.to_dict().items() if k not in ("keywords", "imported", "attribute")}
    assert Finding.from_dict(old) == finding(Category.MISSING_ATTRIBUTE)
