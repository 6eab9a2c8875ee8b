"""Positional arguments that slide into another parameter (``argument-shifted``) and their
``--fix`` (``shifted-argument``), as tables: parameters in, slides out; a finding and two
callee versions in, a decision out; source in, source out. The fixture cases with the real
probe are in ``tests/fixtures/drift`` (``test_check_drift``)."""

from __future__ import annotations

from typing import Any

import pytest

from harness.analysis.findings import ERROR, Finding
from harness.analysis.rules.shifts import Slide, slides
from harness.fixing.cst import apply_edits
from harness.fixing.model import ArgumentsEdit, Facts, Fix, Manual, Side
from harness.fixing.rules import decide
from harness.models import (
    KEYWORD_ONLY,
    POSITIONAL_ONLY,
    POSITIONAL_OR_KEYWORD,
    VAR_KEYWORD,
    VAR_POSITIONAL,
    Parameter,
    Symbol,
)


def ps(*spec: str) -> tuple[Parameter, ...]:
    """``"a"``, ``"b=1"``, ``"*args"``, ``"**kw"``, ``"k!"`` (keyword-only), ``"p/"``."""
    out = []
    for s in spec:
        name, _, default = s.partition("=")
        kind = POSITIONAL_OR_KEYWORD
        if name.startswith("**"):
            kind, name = VAR_KEYWORD, name[2:]
        elif name.startswith("*"):
            kind, name = VAR_POSITIONAL, name[1:]
        elif name.endswith("!"):
            kind, name = KEYWORD_ONLY, name[:-1]
        elif name.endswith("/"):
            kind, name = POSITIONAL_ONLY, name[:-1]
        out.append(Parameter(name, kind, default or None))
    return tuple(out)


ROPE_OLD = ps("q", "k", "cos", "sin", "position_ids=None", "unsqueeze_dim=1")
ROPE_NEW = ps("q", "k", "cos", "sin", "unsqueeze_dim=1")


@pytest.mark.parametrize(
    ("old", "new", "positional", "expect"),
    [
        # transformers 4.57 -> 5: position_ids removed, the fifth argument lands in unsqueeze_dim
        (ROPE_OLD, ROPE_NEW, 5, [Slide(4, "position_ids", "unsqueeze_dim", "is gone")]),
        (ROPE_OLD, ROPE_NEW, 4, []),  # the slots before it did not move
        # sklearn 1.1 -> 1.5 Pipeline.inverse_transform: Xt renamed X, Xt kept keyword-only
        (ps("Xt"), ps("X=None", "Xt!=None", "**params"), 1, []),
        # the old name keyword-only with another default: not an alias, the argument moved
        (ps("a"), ps("c=None", "a!=1"), 1, [Slide(0, "a", "c", "is keyword-only now")]),
        # a parameter inserted before it: scale is the third now
        (
            ps("x", "scale=1"),
            ps("x", "shift=0", "scale=1"),
            2,
            [Slide(1, "scale", "shift", "is parameter 3 now")],
        ),
        (ps("x", "size=1"), ps("x", "length=1"), 2, []),  # renamed in place: the same meaning
        (ps("x", "size=1"), ps("x", "size=1"), 2, []),
        (ps("a", "b"), ps("a"), 2, []),  # too many positionals: the calls rule's
        # now keyword-only, and what comes after it takes the slot
        (
            ps("a", "b=1", "c=2"),
            ps("a", "c=2", "b!=1"),
            2,
            [Slide(1, "b", "c", "is keyword-only now")],
        ),
        # the slot is a *args now
        (
            ps("a", "b=1"),
            ps("a", "*rest", "b!=1"),
            2,
            [Slide(1, "b", "*rest", "is keyword-only now")],
        ),
        (ps("a", "*args"), ps("a", "*args"), 4, []),  # the old *args took them: nothing known
    ],
)
def test_which_arguments_slide(
    old: tuple[Parameter, ...], new: tuple[Parameter, ...], positional: int, expect: list[Slide]
) -> None:
    assert slides(old, new, positional) == expect


def sym(params: tuple[Parameter, ...], version: str) -> Symbol:
    return Symbol.from_dict(
        {
            "qualname": "apply_rope",
            "kind": "function",
            "module": "lib.rope",
            "file": "lib/rope.py",
            "line": 10,
            "parameters": [p.to_dict() for p in params],
            "dist": "lib",
            "version": version,
        }
    )


def shifted(keywords: tuple[str, ...], argument: int = 4) -> Finding:
    return Finding(
        ERROR,
        "argument-shifted",
        "app/uses.py",
        7,
        "apply_rope(q, k, cos, sin, pos)",
        "lib.rope:apply_rope",
        "apply_rope() binds its positional arguments differently now",
        "",
        keywords=keywords,
        argument=argument,
    )


def facts(old: tuple[Parameter, ...], new: tuple[Parameter, ...], reads: Any = None) -> Facts:
    key = "lib.rope:apply_rope"
    return Facts(
        Side("lib 1.0", symbols={key: sym(old, "1.0")}, reads={key: reads}),
        Side("lib 2.0", symbols={key: sym(new, "2.0")}),
    )


@pytest.mark.parametrize(
    ("finding", "old", "new", "reads", "expect"),
    [
        # gone, and the old version never read it: dropped
        (
            shifted(("position_ids",)),
            ROPE_OLD,
            ROPE_NEW,
            frozenset({"q", "k", "cos", "sin", "unsqueeze_dim"}),
            ArgumentsEdit(7, "apply_rope", 4, (None,), (None,)),
        ),
        # gone, read, with a default: dropped only where the call passes that default
        (
            shifted(("position_ids",)),
            ROPE_OLD,
            ROPE_NEW,
            None,
            ArgumentsEdit(7, "apply_rope", 4, (None,), ("None",)),
        ),
        # moved: passed by name, and what follows it too
        (
            shifted(("scale", "bias"), 1),
            ps("x", "scale=1", "bias=0"),
            ps("x", "shift=0", "scale=1", "bias=0"),
            None,
            ArgumentsEdit(7, "apply_rope", 1, ("scale", "bias"), (None, None)),
        ),
        # gone and required in the old version, read there: a person decides
        (
            shifted(("pos",)),
            ps("q", "k", "cos", "sin", "pos"),
            ROPE_NEW,
            None,
            "where its value goes",
        ),
        # a **kwargs would take the name silently: a person decides
        (shifted(("position_ids",)), ROPE_OLD, (*ROPE_NEW, *ps("**kw")), None, "**kwargs"),
        # positional-only now: it cannot be named
        (shifted(("b",), 1), ps("a", "b=1", "c=2"), ps("a", "c=2/", "b/"), None, "positional-only"),
    ],
)
def test_the_fix_names_or_drops_from_the_first_slid_argument_on(
    finding: Finding,
    old: tuple[Parameter, ...],
    new: tuple[Parameter, ...],
    reads: Any,
    expect: ArgumentsEdit | str,
) -> None:
    got = decide(finding, facts(old, new, reads))
    if isinstance(expect, str):
        assert isinstance(got, Manual) and expect in got.reason, got
    else:
        assert isinstance(got, Fix) and got.kind == "shifted-argument" and got.edit == expect


@pytest.mark.parametrize(
    ("before", "edit", "after"),
    [
        (
            "q, k = apply_rope(\n    q, k, cos, sin, position_ids\n)\n",
            ArgumentsEdit(1, "apply_rope", 4, (None,), (None,)),
            "q, k = apply_rope(\n    q, k, cos, sin\n)\n",
        ),
        (
            "y = m.scaled(x, 2.0, 0)  # note\n",
            ArgumentsEdit(1, "scaled", 1, ("scale", "bias"), (None, None)),
            "y = m.scaled(x, scale=2.0, bias=0)  # note\n",
        ),
        (
            "f(\n    a,\n    None,\n    c,\n)\n",
            ArgumentsEdit(1, "f", 1, (None, "c"), ("None", None)),
            "f(\n    a,\n    c=c,\n)\n",
        ),
    ],
)
def test_the_edit_changes_only_those_arguments(
    before: str, edit: ArgumentsEdit, after: str
) -> None:
    got = apply_edits(before, [edit])
    assert (got.text, got.refused) == (after, ())


@pytest.mark.parametrize(
    ("before", "edit", "reason"),
    [
        ("f(a, b)\n", ArgumentsEdit(1, "f", 1, (None, None), (None, None)), "no call of f"),
        ("f(a, *b)\n", ArgumentsEdit(1, "f", 1, (None,), (None,)), "no call of f"),
        ("f(a, x)\n", ArgumentsEdit(1, "f", 1, (None,), ("None",)), "not the old default None"),
        ("f(a, x, b=1)\n", ArgumentsEdit(1, "f", 1, ("b",), (None,)), "passes 'b' already"),
    ],
)
def test_an_argument_edit_not_exactly_there_is_refused(
    before: str, edit: ArgumentsEdit, reason: str
) -> None:
    got = apply_edits(before, [edit])
    assert got.text == before and reason in got.refused[0].reason
