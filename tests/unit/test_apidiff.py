"""API diff rules on small symbol tables (pure)."""

from __future__ import annotations

from typing import Any

import pytest

from harness.analysis.apidiff import compare_symbols, diff_apis, normalize_annotation
from harness.models import Symbol


def fn(*params: str, returns: str | None = None, file: str = "m.py") -> dict[str, Any]:
    out = []
    for p in params:
        kind = "positional-or-keyword"
        if p.startswith("**"):
            kind, p = "var-keyword", p[2:]
        elif p.startswith("*"):
            kind, p = "keyword-only", p[1:]
        name, _, default = p.partition("=")
        out.append({"name": name, "kind": kind, "default": default or None, "annotation": None})
    return {
        "qualname": "f",
        "kind": "function",
        "file": file,
        "line": 1,
        "parameters": out,
        "returns": returns,
    }


def _sym(d: dict[str, Any]) -> Symbol:
    return Symbol.from_dict(d)


def _syms(table: dict[str, dict[str, Any]]) -> dict[str, Symbol]:
    return {k: Symbol.from_dict(v) for k, v in table.items()}


@pytest.mark.parametrize(
    ("old", "new", "kinds"),
    [
        (fn("a", "b"), fn("a", "b"), []),
        (fn("a", "b"), fn("a"), ["parameter-removed"]),
        (fn("a"), fn("a", "b=1"), ["parameter-added"]),
        (fn("a"), fn("a", "b"), ["parameter-added-required"]),
        (fn("a", "b=1"), fn("a", "b"), ["parameter-made-required"]),
        (fn("a", "b"), fn("a", "*b"), ["parameter-kind-changed"]),
        (fn("a", "b"), fn("a", "c"), ["parameter-renamed"]),
        (fn("a", "b", "c"), fn("a", "c", "b"), ["parameter-moved", "parameter-moved"]),
        (fn("a", returns="int"), fn("a", returns="str"), ["returns-changed"]),
        (fn("a", returns="Optional[int]"), fn("a", returns="int | None"), []),
    ],
)
def test_compare_symbols(old: dict[str, Any], new: dict[str, Any], kinds: list[str]) -> None:
    old, new = _sym(old), _sym(new)  # type: ignore[assignment]
    assert [c.kind for c in compare_symbols(old, new)] == kinds


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Optional[int]", "int | None"),
        ("Union[A, B]", "B | A"),
        ("List[int]", "list[int]"),
        ("typing.Dict[str, int]", "dict[str, int]"),
        ("'Foo'", "Foo"),
    ],
)
def test_annotation_spellings_agree(a: str, b: str) -> None:
    assert normalize_annotation(a) == normalize_annotation(b)


def test_diff_apis_moved_removed_added_changed() -> None:
    old = {"p.a:f": fn("x"), "p.a:g": fn("x"), "p.a:h": fn("x")}
    new = {"p.b:f": fn("x"), "p.a:h": fn("x", "y"), "p.a:k": fn()}
    got = {(e.status, e.symbol, e.moved_to) for e in diff_apis(_syms(old), _syms(new))}
    assert got == {
        ("moved", "p.a:f", "p.b:f"),
        ("removed", "p.a:g", None),
        ("changed", "p.a:h", None),
        ("added", "p.a:k", None),
    }
    breaking = {e.symbol: e.breaking for e in diff_apis(_syms(old), _syms(new))}
    assert breaking == {"p.a:f": True, "p.a:g": True, "p.a:h": True, "p.a:k": False}


def test_class_methods_added_and_removed() -> None:
    def cls(*methods: str) -> dict[str, Any]:
        return {
            "qualname": "C",
            "kind": "class",
            "file": "m.py",
            "line": 1,
            "parameters": [],
            "members": [{"qualname": f"C.{m}", "kind": "method"} for m in methods],
        }

    kinds = [
        (c.kind, c.name) for c in compare_symbols(_sym(cls("run", "old")), _sym(cls("run", "new")))
    ]
    assert kinds == [("method-removed", "old"), ("method-added", "new")]
