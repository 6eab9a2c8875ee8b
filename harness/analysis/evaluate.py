"""Decide a callee's conditions for one call: which return paths can this call take? (pure)

The callsites probe rewrites each return path's conditions in terms of the callee's
parameters; a call's literal arguments (and the defaults it leaves alone) decide them. Anything
not literal is unknown, and an unknown condition never excludes a path: we only narrow what
the source proves.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping
from typing import Any

from harness.models import (
    KEYWORD_ONLY,
    POSITIONAL_ONLY,
    POSITIONAL_OR_KEYWORD,
    Parameter,
)


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()

_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_TYPES: dict[str, type] = {
    t.__name__: t for t in (str, int, float, bool, tuple, list, dict, set, bytes)
}


def literal(text: str | None) -> Any:
    """The value of a literal's source text; UNKNOWN for anything else (names, calls)."""
    if text is None:
        return UNKNOWN
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return UNKNOWN


def call_values(
    params: tuple[Parameter, ...],
    args: list[str | None],
    kwargs: Mapping[str, str | None],
    spread: bool,
) -> dict[str, Any]:
    """Parameter name -> the value this call gives it (its default when omitted).

    ``spread`` (``*a``/``**k`` in the call): omitted parameters may be given after all, so
    they are unknown rather than defaulted.
    """
    out: dict[str, Any] = {}
    positional = [p for p in params if p.kind in (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD)]
    for p, text in zip(positional, args, strict=False):
        out[p.name] = literal(text)
    for name, text in kwargs.items():
        out[name] = literal(text)
    for p in params:
        if p.name in out or p.kind not in (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD, KEYWORD_ONLY):
            continue
        out[p.name] = UNKNOWN if spread else literal(p.default)
    return out


def evaluate(cond: str, values: Mapping[str, Any]) -> bool | None:
    """True/False when the values decide ``cond``; None when they do not."""
    try:
        node = ast.parse(cond, mode="eval").body
    except SyntaxError:
        return None
    got = _eval(node, values)
    return None if got is UNKNOWN else bool(got)


def _eval(n: ast.AST, v: Mapping[str, Any]) -> Any:
    if isinstance(n, ast.Constant):
        return n.value
    if isinstance(n, ast.Name):
        return v.get(n.id, UNKNOWN)
    if isinstance(n, (ast.Tuple, ast.List)):
        items = [_eval(e, v) for e in n.elts]
        return UNKNOWN if any(x is UNKNOWN for x in items) else tuple(items)
    if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not):
        x = _eval(n.operand, v)
        return UNKNOWN if x is UNKNOWN else not x
    if isinstance(n, ast.BoolOp):
        vals = [_eval(e, v) for e in n.values]
        if isinstance(n.op, ast.And):
            if any(x is not UNKNOWN and not x for x in vals):
                return False
            return UNKNOWN if any(x is UNKNOWN for x in vals) else True
        if any(x is not UNKNOWN and x for x in vals):
            return True
        return UNKNOWN if any(x is UNKNOWN for x in vals) else False
    if isinstance(n, ast.Compare) and len(n.ops) == 1:
        a, b = _eval(n.left, v), _eval(n.comparators[0], v)
        op = _COMPARE.get(type(n.ops[0]))
        if a is UNKNOWN or b is UNKNOWN or op is None:
            return UNKNOWN
        try:
            return op(a, b)
        except TypeError:
            return UNKNOWN
    if (
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Name)
        and n.func.id == "isinstance"
        and len(n.args) == 2
    ):
        x = _eval(n.args[0], v)
        kinds = n.args[1].elts if isinstance(n.args[1], ast.Tuple) else [n.args[1]]
        types = [_TYPES.get(k.id) if isinstance(k, ast.Name) else None for k in kinds]
        if x is UNKNOWN:
            return UNKNOWN
        if isinstance(x, tuple(t for t in types if t is not None)):
            return True
        return UNKNOWN if None in types else False
    return UNKNOWN
