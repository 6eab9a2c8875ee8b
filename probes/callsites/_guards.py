"""What a ``try: from lib import f / except ImportError:`` leaves behind when the import fails.

If no handler binds ``f`` (``pass``, a log line) and none re-raises, ``f`` is unbound and any
use not itself guarded raises ``NameError`` -- an error, not the info a guarded import is. A
handler that binds it (``f = None``, another import, a ``def``) keeps it bound: the fallback's
shape is returned so calls can be bound to it.
"""

from __future__ import annotations

import ast

from probes._walk import children, walk
from probes.callsites._calls_imports import caught
from probes.signatures._describe import parameters


def _binds(body: list[ast.stmt], name: str) -> ast.stmt | None:
    """The statement in ``body`` (top level of the block) that binds ``name``, if any."""
    for st in body:
        if (
            isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and st.name == name
        ):
            return st
        if isinstance(st, (ast.Import, ast.ImportFrom)):
            for a in st.names:
                if (a.asname or a.name.split(".")[0]) == name:
                    return st
        targets = st.targets if isinstance(st, ast.Assign) else [getattr(st, "target", None)]
        if isinstance(st, (ast.Assign, ast.AnnAssign)):
            for t in targets:
                if any(isinstance(n, ast.Name) and n.id == name for n in walk(t)):  # type: ignore[arg-type]
                    return st
        if isinstance(st, (ast.If, ast.Try)):
            inner = [*getattr(st, "body", []), *getattr(st, "orelse", [])]
            got = _binds(inner, name)
            if got is not None:
                return got
    return None


def _fallback_shape(st: ast.stmt) -> dict:
    if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return {"kind": "def", "line": st.lineno, "parameters": parameters(st.args)}
    if isinstance(st, ast.Assign) and isinstance(st.value, ast.Constant) and st.value.value is None:
        return {"kind": "none", "line": st.lineno}
    if isinstance(st, (ast.Import, ast.ImportFrom)):
        return {"kind": "import", "line": st.lineno}
    return {"kind": "other", "line": st.lineno}


def fallback(tree: ast.Module, guard: ast.Try, name: str) -> dict:
    """``{"bound", "shape": {...} | None, "flags": [names set in the try/handlers],
    "reraises"}``: every handler re-raising makes the import as unguarded as none."""
    handlers = [h for h in guard.handlers]
    before = [st for st in tree.body if getattr(st, "lineno", 0) < guard.lineno]
    earlier = _binds(before, name)
    bound = earlier is not None
    shape = _fallback_shape(earlier) if earlier is not None else None
    raises = all(h.body and isinstance(h.body[-1], ast.Raise) for h in handlers)
    for h in handlers:
        got = _binds(h.body, name)
        if got is not None:
            bound, shape = True, _fallback_shape(got)
        elif not (h.body and isinstance(h.body[-1], ast.Raise)) and earlier is None:
            bound = False  # this handler lets the module go on without the name
            break
    flags = set()
    for block in [guard.body, *(h.body for h in handlers)]:
        for st in block:
            if isinstance(st, ast.Assign):
                flags |= {t.id for t in st.targets if isinstance(t, ast.Name) and t.id != name}
    return {"bound": bound, "shape": shape, "flags": sorted(flags), "reraises": raises}


def unguarded_uses(tree: ast.Module, guard: ast.Try, name: str, flags: list[str]) -> list[ast.Name]:
    """Loads of ``name`` outside the try, not under a test that mentions it or a flag set
    beside it (``if HAS_F:``, ``if f is not None:``), nor inside a ``try`` catching errors."""
    watch = {name, *flags}
    out: list[ast.Name] = []

    def visit(node: ast.AST, safe: bool) -> None:
        if node is guard:
            return
        if isinstance(node, (ast.If, ast.While, ast.IfExp)):
            test_safe = safe or bool(_mentions(node.test, watch))
            visit(node.test, safe)
            for c in [*_as_list(node.body), *_as_list(node.orelse)]:
                visit(c, test_safe)
            return
        if isinstance(node, ast.BoolOp):
            first, *rest = node.values
            visit(first, safe)
            guarded = safe or bool(_mentions(first, watch))
            for c in rest:
                visit(c, guarded)
            return
        if isinstance(node, ast.Try):
            catches = any(_catches_name_error(h) for h in node.handlers)
            for c in node.body:
                visit(c, safe or catches)
            for c in [*node.handlers, *node.orelse, *node.finalbody]:
                visit(c, safe)
            return
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            if not safe:
                out.append(node)
            return
        for c in children(node):
            visit(c, safe)

    visit(tree, False)
    return out


def _as_list(x: object) -> list[ast.AST]:
    return x if isinstance(x, list) else [x]  # type: ignore[list-item]


def _mentions(node: ast.AST, names: set[str]) -> set[str]:
    return {n.id for n in walk(node) if isinstance(n, ast.Name) and n.id in names}


def _catches_name_error(h: ast.ExceptHandler) -> bool:
    kinds = caught(h)
    return kinds is None or bool(kinds & {"NameError", "Exception", "BaseException"})


def skipped(guard: ast.Try, node: ast.ImportFrom, index: int) -> list[tuple[str, int]]:
    """``(name, line)`` for what the rest of the ``try`` body would have bound once name
    ``index`` of ``node`` fails: the import raised, so the names after it in the statement
    and every statement after it (in its block, then in each enclosing one) never run.

    ``from x import a, b`` binds ``a`` before it asks for ``b``: only the later ones are lost.
    A branch not taken (the ``else`` of the ``if`` the import is in) is no later statement.
    """
    out = [(a.asname or a.name, node.lineno) for a in node.names[index + 1 :]]
    for block in _chain(guard.body, node) or []:
        for st in block:
            out += _bound_by(st)
    return out


def _chain(block: list[ast.stmt], node: ast.stmt) -> list[list[ast.stmt]] | None:
    """The statements after ``node``: in its own block first, then in each enclosing one up
    to ``block`` (None when ``node`` is not under ``block``)."""
    for i, st in enumerate(block):
        if st is node:
            return [block[i + 1 :]]
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue  # a body that runs later, if ever: not the try's own statements
        for field in ("body", "orelse", "finalbody"):
            inner = _chain(getattr(st, field, None) or [], node)
            if inner is not None:
                return [*inner, block[i + 1 :]]
        for h in getattr(st, "handlers", None) or []:
            inner = _chain(h.body, node)
            if inner is not None:
                return [*inner, block[i + 1 :]]
    return None


def _bound_by(st: ast.stmt) -> list[tuple[str, int]]:
    """``(name, line)`` for what a statement binds when it runs (a ``def``'s name, not its
    body's), each with the line of the statement that binds it."""
    if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [(st.name, st.lineno)]
    if isinstance(st, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name.split(".")[0], st.lineno) for a in st.names if a.name != "*"]
    if isinstance(st, (ast.Assign, ast.AnnAssign)) and getattr(st, "value", None) is not None:
        targets = st.targets if isinstance(st, ast.Assign) else [st.target]
        return [
            (n.id, st.lineno)
            for t in targets
            for n in ast.walk(t)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        ]
    blocks = [getattr(st, f, None) or [] for f in ("body", "orelse", "finalbody")]
    blocks += [h.body for h in getattr(st, "handlers", None) or []]
    return [b for block in blocks for c in block for b in _bound_by(c)]


def fallback_try(tree: ast.Module, node: ast.stmt) -> ast.Try | None:
    """The ``try`` whose handler holds ``node`` at its top level, when that handler catches
    only ``ImportError``/``ModuleNotFoundError``: ``node`` runs only if the body raised one."""
    for t in ast.walk(tree):
        if not isinstance(t, ast.Try):
            continue
        for h in t.handlers:
            kinds = caught(h)
            only_import = kinds is not None and kinds <= {"ImportError", "ModuleNotFoundError"}
            if only_import and any(st is node for st in h.body):
                return t
    return None
