"""A module's top level run for the values it binds (:mod:`._static_values`), as the module
ends: assignments in order, the branch of a decided ``if``, both branches of an undecided one
joined, a ``try``'s body and handlers joined, top-level ``.update``/``.add``/``[k] = v``
applied. A name a loop, a function body (``global``, ``x[k] = v``, ``x.update``), or a call it
is handed to may change is unknown.
"""

from __future__ import annotations

import ast
from typing import Any

from probes._walk import walk
from probes.signatures._platform import Decider, builtin_aliases
from probes.signatures._static_values import (
    MUTATORS,
    UNKNOWN,
    Fn,
    KeyLookupError,
    Scope,
    bind,
    bind_import,
    evaluate,
    frozen,
    known,
    truth,
)


def module_values(tree: ast.Module, module: str, is_package: bool, python: Any, call: Any) -> dict:
    """Every top-level name of a module bound to a value we can compute, as the module ends
    (``call(fn_value, ast.Call, Scope)``: what a call at the top level returns, or UNKNOWN)."""
    sc = Scope(module, is_package, {})
    _run_top(tree.body, sc, Decider(builtin_aliases(tree.body), python), call)
    for n in walk(tree):  # what a function or a class body may change
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            for name in _touched(n, inner=True):
                sc.top[name] = UNKNOWN
    return sc.top


def _run_top(body: list[ast.stmt], sc: Scope, decider: Decider, call: Any) -> None:
    for st in body:
        try:
            _top_statement(st, sc, decider, call)
        except KeyLookupError:
            for name in _touched(st):
                sc.top[name] = UNKNOWN


def _top_statement(st: ast.stmt, sc: Scope, decider: Decider, call: Any) -> None:
    top = sc.top
    if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
        top[st.name] = Fn(st, sc.module) if isinstance(st, ast.FunctionDef) else UNKNOWN
    elif isinstance(st, (ast.Import, ast.ImportFrom)):
        bind_import(st, sc.module, sc.is_package, top)
    elif isinstance(st, (ast.Assign, ast.AnnAssign)) and st.value is not None:
        value = call(st.value, sc) if isinstance(st.value, ast.Call) else evaluate(st.value, sc)
        for name in _touched(st.value):  # handed to a call: it may change them
            sc.top[name] = UNKNOWN
        for t in st.targets if isinstance(st, ast.Assign) else [st.target]:
            if not bind(t, value, top):
                _store(t, value, sc)
    elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
        _mutation(st.value, sc)
    elif isinstance(st, ast.Delete):
        for t in st.targets:
            if isinstance(t, ast.Name):
                top.pop(t.id, None)
            else:
                _store(t, None, sc, delete=True)
    elif isinstance(st, ast.If):
        taken = decider.truth(st.test)
        taken = truth(st.test, sc) if taken is None else taken
        if taken is not None:
            _run_top(st.body if taken else st.orelse, sc, decider, call)
        else:
            _fork(sc, [st.body, st.orelse], decider, call)
    elif isinstance(st, ast.Try):
        before = dict(top)
        _run_top([*st.body, *st.orelse], sc, decider, call)
        after = dict(top)
        outs = [after]
        for h in st.handlers:
            top.clear()
            top.update(before)
            for name in _touched(st):  # how far the body got: unknown
                top[name] = UNKNOWN if name in after or name in before else top.get(name)
            if h.name:
                top[h.name] = UNKNOWN
            _run_top(h.body, sc, decider, call)
            outs.append(dict(top))
        _merge(top, outs)
        _run_top(st.finalbody, sc, decider, call)
    elif not isinstance(st, (ast.Pass, ast.Expr, ast.Assert, ast.Global, ast.Nonlocal)):
        for name in _touched(st):  # a loop, a with, a class: what it binds or changes
            top[name] = UNKNOWN


def _fork(sc: Scope, bodies: list[list[ast.stmt]], decider: Decider, call: Any) -> None:
    start, outs = dict(sc.top), []
    for body in bodies:
        sc.top.clear()
        sc.top.update(start)
        _run_top(body, sc, decider, call)
        outs.append(dict(sc.top))
    _merge(sc.top, outs)


def _merge(into: dict, outs: list[dict]) -> None:
    """Branches joined: a name bound alike (or in one branch alone: in the other it is
    unbound, and reading it raises NameError) keeps its value; else it is unknown."""
    into.clear()
    for name in {k for o in outs for k in o}:
        vals = [o[name] for o in outs if name in o]
        first = vals[0]
        try:
            same = all(v is first or (known(v) and known(first) and v == first) for v in vals)
        except Exception:
            same = False
        into[name] = first if same else UNKNOWN


def _store(t: ast.expr, value: Any, sc: Scope, delete: bool = False) -> None:
    """``NAME[key] = value`` / ``del NAME[key]`` on a known dict; anything else: unknown."""
    if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
        base, key = sc.top.get(t.value.id, UNKNOWN), evaluate(t.slice, sc)
        if isinstance(base, dict) and known(key):
            new = dict(base)
            if delete:
                new.pop(key, None)
            else:
                new[key] = value
            sc.top[t.value.id] = new
            return
    for name in _touched(t, stored=True):
        sc.top[name] = UNKNOWN


def _mutation(c: ast.Call, sc: Scope) -> None:
    """``NAME.update({...})`` / ``.add(x)`` / ``.extend([...])`` at the top level, applied
    when known; every other call: the names it is handed or called on may change."""
    f = c.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and not c.keywords:
        name, base = f.value.id, sc.top.get(f.value.id, UNKNOWN)
        args = [evaluate(a, sc) for a in c.args]
        new: Any = UNKNOWN
        if (
            f.attr == "update"
            and isinstance(base, dict)
            and len(args) == 1
            and isinstance(args[0], dict)
        ):
            new = {**base, **args[0]}
        elif f.attr == "add" and isinstance(base, frozenset) and len(args) == 1:
            new = frozen((*base, args[0]))
        elif f.attr in ("append", "extend") and isinstance(base, tuple) and len(args) == 1:
            more = args[0] if f.attr == "extend" else (args[0],)
            new = base + more if isinstance(more, tuple) else UNKNOWN
        elif f.attr not in MUTATORS:
            new = base
        touched = _touched(c) - ({name} if known(new) else set())
        if name in sc.top:
            sc.top[name] = new
    else:
        touched = _touched(c)
    for n in touched:
        sc.top[n] = UNKNOWN


def _touched(node: ast.AST, inner: bool = False, stored: bool = False) -> set[str]:
    """Names ``node`` binds, declares global, mutates (``x[k] = ``, ``x.update(...)``) or
    hands to a call. ``inner``: in a function body, only what reaches the module's names."""
    out: set[str] = set()
    for n in walk(node):
        if isinstance(n, ast.Global):
            out.update(n.names)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)) and not inner:
            out.add(n.id)
        elif isinstance(n, (ast.Subscript, ast.Attribute)) and isinstance(
            n.ctx, (ast.Store, ast.Del)
        ):
            head = n.value
            while isinstance(head, (ast.Subscript, ast.Attribute)):
                head = head.value
            if isinstance(head, ast.Name):
                out.add(head.id)
        elif isinstance(n, ast.Call) and not stored:
            f = n.func
            if (
                isinstance(f, ast.Attribute)
                and isinstance(f.value, ast.Name)
                and f.attr in MUTATORS
            ):
                out.add(f.value.id)
            handed = [*n.args, *(k.value for k in n.keywords)]
            out.update(a.id for a in handed if isinstance(a, ast.Name) and not _dunder(a.id))
    return out


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__") and name != "__all__"
