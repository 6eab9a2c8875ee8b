"""A parameter annotated as a union with one tuple (or list) member, narrowed to it by a type
test: ``x[i]`` is then that member's element -- the caller's own word on what it holds.

sweetviz's ``DataframeReport(source: Union[pd.DataFrame, Tuple[pd.DataFrame, str]])`` takes
``source_df = source[0]`` under ``elif type(source) == list or type(source) == tuple:``, and
reads ``source_df.iteritems()`` (gone in pandas 2). Outside such a test ``source[0]`` may be a
column of the frame: nothing is said there. A narrowed name is held as
``("seq", "", (element refs...), variadic)``, a kind no other part of the walk carries on
(its empty module is no callee's).
"""

from __future__ import annotations

import ast
from typing import Any

from probes._walk import walk
from probes.callsites._uses import annotation_union
from probes.signatures._syntax import dotted

_KINDS = {"tuple": "tuple", "Tuple": "tuple", "list": "list", "List": "list"}


def narrowed_sequence(env: Any, test: ast.expr | None, local: dict) -> dict | None:
    """``{**local, x: ("seq", ...)}`` inside ``if type(x) == tuple [or ... == list]`` /
    ``isinstance(x, (tuple, list))`` where ``x`` is the innermost function's parameter, never
    rebound, annotated as a union with exactly one member of those kinds; else None."""
    got = sequence_test(test)
    if got is None or not env.scopes:
        return None
    name, kinds = got
    fn = env.scopes[-1]
    args = fn.args
    param = next(
        (a for a in [*args.posonlyargs, *args.args, *args.kwonlyargs] if a.arg == name), None
    )
    if param is None or param.annotation is None or _rebound(fn, name):
        return None
    members = [m for m in annotation_union(param.annotation) if _kind(m) is not None]
    if len(members) != 1 or _kind(members[0]) not in kinds:
        return None
    seq = members[0]
    assert isinstance(seq, ast.Subscript)
    items = list(seq.slice.elts) if isinstance(seq.slice, ast.Tuple) else [seq.slice]
    variadic = _kind(seq) == "list" or (
        len(items) == 2 and isinstance(items[1], ast.Constant) and items[1].value is Ellipsis
    )
    if variadic:
        items = items[:1]
    refs = tuple(env.annotation_type(i) for i in items)
    return {**local, name: ("seq", "", refs, variadic)}


def item_of(seq: Any, index: ast.expr) -> Any:
    """The element ``seq[index]`` is, for a narrowed sequence and a literal int index."""
    if not (isinstance(seq, tuple) and seq and seq[0] == "seq"):
        return None
    if not (isinstance(index, ast.Constant) and type(index.value) is int):
        return None
    _, _, refs, variadic = seq
    i = 0 if variadic else index.value
    if not -len(refs) <= i < len(refs):
        return None
    got = refs[i]
    return got if got is not None and got[0] == "instance" else None


def sequence_test(test: ast.expr | None) -> tuple[str, set[str]] | None:
    """``(x, kinds)`` for a test true only when ``x`` is one of ``kinds`` (tuple / list):
    ``type(x) == tuple``, ``type(x) is list``, ``isinstance(x, tuple)`` or ``(tuple, list)``,
    ``type(x) in (tuple, list)``, and ``or`` of those on the same name."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        parts = [sequence_test(v) for v in test.values]
        names = {p[0] for p in parts if p is not None}
        if None in parts or len(names) != 1:
            return None
        return names.pop(), {k for p in parts if p is not None for k in p[1]}
    if (
        isinstance(test, ast.Call)
        and dotted(test.func) == "isinstance"
        and len(test.args) == 2
        and isinstance(test.args[0], ast.Name)
    ):
        kinds = _builtin_kinds(test.args[1])
        return None if kinds is None else (test.args[0].id, kinds)
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.left, ast.Call)
        and dotted(test.left.func) == "type"
        and len(test.left.args) == 1
        and isinstance(test.left.args[0], ast.Name)
    ):
        op, right = test.ops[0], test.comparators[0]
        if isinstance(op, (ast.Eq, ast.Is)) or (
            isinstance(op, ast.In) and isinstance(right, (ast.Tuple, ast.List, ast.Set))
        ):
            kinds = _builtin_kinds(right)
            return None if kinds is None else (test.left.args[0].id, kinds)
    return None


def _builtin_kinds(node: ast.expr) -> set[str] | None:
    elts = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
    out = {e.id for e in elts if isinstance(e, ast.Name) and e.id in ("tuple", "list")}
    return out if out and len(out) == len(elts) else None


def _kind(member: ast.expr) -> str | None:
    if not isinstance(member, ast.Subscript):
        return None
    return _KINDS.get(dotted(member.value).split(".")[-1])


def _rebound(fn: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    return any(
        isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
        for n in walk(fn)
    )
