"""Attribute reads the caller guards itself: a missing name there raises nothing.

``if hasattr(x, "a"): x.a`` (and ``hasattr(x, "a") and x.a``, ``x.a if hasattr(x, "a") else
d``, ``if not hasattr(x, "a"): return`` then ``x.a``), and any read inside ``try:`` whose
handlers catch ``AttributeError`` by name (and calls inside ``try:`` whose handlers catch
``TypeError`` by name: :data:`CALLS`). A guard is a set of
``(object text, attribute)`` pairs, or :data:`ANY` for a ``try``; the use recorder
(:class:`probes.callsites._calls_record.FileVisitor`) keeps a stack of them and records no
attribute use a guard covers.
"""

from __future__ import annotations

import ast

from probes._walk import walk
from probes.signatures._syntax import dotted

ANY = ("*", "*")
#: What a handler must name to guard reads: a broad ``except Exception`` is error handling,
#: not a test for the name (a removed API there still silently stops working)
_CATCHES = {"AttributeError"}
Guard = frozenset[tuple[str, str]]
#: a ``try`` whose handlers catch ``TypeError`` by name: a call's binding error is handled
CALLS = ("*", "TypeError")
_BINDS = frozenset({"TypeError"})


def pairs(test: ast.expr | None, positive: bool = True) -> Guard:
    """What holds where ``test`` is true (``positive``) or false: the ``hasattr`` pairs."""
    if test is None:
        return frozenset()
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return pairs(test.operand, not positive)
    if isinstance(test, ast.BoolOp):
        joins = isinstance(test.op, ast.And) == positive  # a and b true / a or b false: both
        if joins:
            return frozenset().union(*(pairs(v, positive) for v in test.values))
        return frozenset()
    if (
        positive
        and isinstance(test, ast.Call)
        and dotted(test.func) == "hasattr"
        and len(test.args) == 2
        and isinstance(test.args[1], ast.Constant)
        and isinstance(test.args[1].value, str)
    ):
        return frozenset({(ast.unparse(test.args[0]), test.args[1].value)})
    return frozenset()


def body_guard(st: ast.stmt, body: list[ast.stmt]) -> Guard:
    """What guards ``body``, one of ``st``'s blocks."""
    if isinstance(st, (ast.If, ast.While)):
        return pairs(st.test, body is st.body)
    if isinstance(st, ast.Try) and body is st.body:
        got = {ANY} if any(_catches(h) for h in st.handlers) else set()
        if any(_catches(h, _BINDS) for h in st.handlers):
            got.add(CALLS)
        return frozenset(got)
    return frozenset()


def after_guard(st: ast.stmt) -> Guard:
    """``if not hasattr(x, "a"): return``: what holds for the rest of the block."""
    if (
        isinstance(st, ast.If)
        and not st.orelse
        and st.body
        and isinstance(st.body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))
    ):
        return pairs(st.test, False)
    return frozenset()


def expr_guarded(nodes: list[ast.AST]) -> dict[int, Guard]:
    """id(node) -> guard, for the nodes (a statement's own expressions') that a ``hasattr``
    before them in an ``and`` chain, or in a conditional expression's test, guards."""
    out: dict[int, Guard] = {}
    if not any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "hasattr"
        for n in nodes
    ):
        return out
    for n in nodes:
        if isinstance(n, ast.BoolOp) and isinstance(n.op, ast.And):
            held: Guard = frozenset()
            for v in n.values:
                if held:
                    for m in walk(v):
                        out[id(m)] = out.get(id(m), frozenset()) | held
                held = held | pairs(v)
        elif isinstance(n, ast.IfExp):
            for branch, guard in ((n.body, pairs(n.test)), (n.orelse, pairs(n.test, False))):
                if guard:
                    for m in walk(branch):
                        out[id(m)] = out.get(id(m), frozenset()) | guard
    return out


def covered(stack: list[Guard], held: dict[int, Guard], node: ast.AST) -> bool:
    """Is ``node`` a read the caller guards: by a block's guard on ``stack``, or by what its
    own statement's ``held`` says of it?"""
    if not isinstance(node, ast.Attribute) or not (stack or held):
        return False
    own = held.get(id(node))
    return covers([*stack, *([own] if own else [])], node)


def covers(guards: list[Guard], node: ast.Attribute) -> bool:
    """Is the read ``node`` guarded by any guard on the stack?"""
    if any(ANY in g for g in guards):
        return True
    text = ast.unparse(node.value)
    return any((text, node.attr) in g for g in guards)


def calls_caught(stack: list[Guard]) -> bool:
    """Is a call here inside ``try:`` whose handlers catch ``TypeError`` by name? A call that
    no longer binds raises TypeError there, which the caller handles (an older signature's
    fallback, a logged skip): no break surfaces."""
    return any(CALLS in g for g in stack)


def _catches(handler: ast.ExceptHandler, names: frozenset[str] = frozenset(_CATCHES)) -> bool:
    if handler.type is None:
        return False
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(dotted(k).split(".")[-1] in names for k in kinds)
