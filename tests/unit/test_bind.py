"""The binder against CPython itself: every case is also bound by the real interpreter."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from harness.analysis.bind import CallShape, bind, bind_any
from harness.models import Parameter

KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: "positional-only",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional-or-keyword",
    inspect.Parameter.VAR_POSITIONAL: "var-positional",
    inspect.Parameter.KEYWORD_ONLY: "keyword-only",
    inspect.Parameter.VAR_KEYWORD: "var-keyword",
}


def params_of(fn: Any) -> tuple[Parameter, ...]:
    return tuple(
        Parameter(
            p.name, KINDS[p.kind], None if p.default is inspect.Parameter.empty else repr(p.default)
        )
        for p in inspect.signature(fn).parameters.values()
    )


def f_plain(a, b=2, *, c, **rest): ...  # type: ignore[no-untyped-def]
def f_posonly(a, /, b=1): ...  # type: ignore[no-untyped-def]
def f_var(a, *args, k=1): ...  # type: ignore[no-untyped-def]
def f_none(): ...
def f_kwonly(*, x, y=0): ...  # type: ignore[no-untyped-def]


CASES = [
    (f_plain, CallShape(1, ("c",)), []),
    (f_plain, CallShape(1), ["missing-required-arg"]),
    (f_plain, CallShape(3, ("c",)), ["too-many-positional"]),
    (f_plain, CallShape(1, ("c", "zz")), []),
    (f_plain, CallShape(2, ("b", "c")), ["duplicate-argument"]),
    (f_plain, CallShape(0, ("c",), star=True), []),
    (f_plain, CallShape(0, (), star=True), ["missing-required-arg"]),
    (f_plain, CallShape(0, (), double_star=True), []),
    (f_posonly, CallShape(0, ("a",)), ["positional-only-as-keyword"]),
    (f_posonly, CallShape(1, ("b",)), []),
    (f_posonly, CallShape(3), ["too-many-positional"]),
    (f_var, CallShape(5, ("k",)), []),
    (f_var, CallShape(0, ("a", "zz")), ["unexpected-kwarg"]),
    (f_none, CallShape(1), ["too-many-positional"]),
    (f_none, CallShape(0, ("x",)), ["unexpected-kwarg"]),
    (f_kwonly, CallShape(1, ("x",)), ["too-many-positional"]),
    (f_kwonly, CallShape(0, ("y",)), ["missing-required-arg"]),
]


def _cpython_binds(fn: Any, shape: CallShape) -> bool:
    if shape.star or shape.double_star:
        return True  # not decidable from the shape; covered by the expectations
    try:
        inspect.signature(fn).bind(*range(shape.positional), **dict.fromkeys(shape.keywords))
    except TypeError:
        return False
    return True


@pytest.mark.parametrize(("fn", "shape", "expected"), CASES)
def test_bind_matches_cpython(fn: Any, shape: CallShape, expected: list[str]) -> None:
    got = [p.category for p in bind(shape, params_of(fn))]
    assert got == expected
    if not (shape.star or shape.double_star):
        assert (got == []) == _cpython_binds(fn, shape)


def test_lenient_constructor_ignores_unknown_keywords() -> None:
    params = (Parameter("x", "positional-or-keyword"),)
    assert bind(CallShape(0, ("x", "extra")), params, ignore_unknown_kwargs=True) == []
    assert [p.category for p in bind(CallShape(0, ("x", "extra")), params)] == ["unexpected-kwarg"]


def test_any_overload_binds() -> None:
    one = (Parameter("x", "positional-or-keyword"),)
    two = (Parameter("x", "positional-or-keyword"), Parameter("y", "positional-or-keyword"))
    assert bind_any(CallShape(2), [one, two]) == []
    assert [p.category for p in bind_any(CallShape(3), [one, two])] == ["too-many-positional"]


def test_messages_use_cpython_words() -> None:
    (p,) = bind(CallShape(0, ("kv_cache_specs",)), (Parameter("a", "positional-or-keyword", "1"),))
    assert p.detail == "got an unexpected keyword argument 'kv_cache_specs'"
