"""Writes of computed names on ``self`` that make no name the instance did not have.

A class that runs ``setattr(self, key, value)`` with a computed ``key``, or
``self.__dict__.update(...)``, is *open*: its instances take names from data, so a name missing
from the class proves nothing (transformers' ``PretrainedConfig(**kwargs)``). Two such writes only
re-set names the object already knows, and leave the class closed:

* ``__setstate__``'s ``self.__dict__.update(state)``: unpickling restores the ``__dict__`` that
  ``__getstate__`` saved of an instance of the same class;
* a ``setattr(self, key, ...)`` that ``if key not in known: raise`` guards earlier in its block
  (scikit-learn's ``BaseEstimator.set_params``: only names ``get_params`` lists, the constructor's
  parameters, are set -- an unknown one raises ``ValueError``).
"""

from __future__ import annotations

import ast

from probes._walk import walk

#: methods whose ``__dict__.update`` restores a saved state of the same class
RESTORERS = frozenset({"__setstate__"})


def guarded_setattrs(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[int]:
    """ids of the ``setattr(self, NAME, ...)`` calls in ``fn`` whose ``NAME`` an earlier
    ``if NAME not in X: raise`` of an enclosing block tested, not re-bound since."""
    out: set[int] = set()
    _block(fn.body, frozenset(), out)
    return out


def _block(body: list[ast.stmt], known: frozenset[str], out: set[int]) -> None:
    for st in body:
        for n in _own_nodes(st):
            if _is_setattr_self(n) and isinstance(n.args[1], ast.Name) and n.args[1].id in known:
                out.add(id(n))
        bound = _bound(st)
        for sub in _bodies(st):
            _block(sub, known - bound, out)
        known = known - bound
        tested = _refused_unless_in(st)
        if tested is not None:
            known = known | {tested}


def _refused_unless_in(st: ast.stmt) -> str | None:
    """``if NAME not in X: ... raise`` (no else): past it, NAME is one of X's."""
    if not isinstance(st, ast.If) or st.orelse or not st.body:
        return None
    t = st.test
    if (
        isinstance(t, ast.Compare)
        and len(t.ops) == 1
        and isinstance(t.ops[0], ast.NotIn)
        and isinstance(t.left, ast.Name)
        and isinstance(st.body[-1], ast.Raise)
    ):
        return t.left.id
    return None


def _is_setattr_self(n: ast.AST) -> bool:
    return (
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Name)
        and n.func.id == "setattr"
        and len(n.args) >= 2
        and isinstance(n.args[0], ast.Name)
        and n.args[0].id == "self"
    )


def _own_nodes(st: ast.stmt) -> list[ast.AST]:
    """The nodes of ``st`` outside its nested statement blocks."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = [st]
    while todo:
        n = todo.pop()
        out.append(n)
        for field, value in ast.iter_fields(n):
            if n is st and field in ("body", "orelse", "finalbody", "handlers", "cases"):
                continue
            for c in value if isinstance(value, list) else [value]:
                if isinstance(c, ast.AST) and not isinstance(c, ast.stmt):
                    todo.append(c)
    return out


def _bodies(st: ast.stmt) -> list[list[ast.stmt]]:
    got = [getattr(st, f, None) for f in ("body", "orelse", "finalbody")]
    got += [h.body for h in getattr(st, "handlers", None) or []]
    got += [c.body for c in getattr(st, "cases", None) or []]
    if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return []
    return [b for b in got if isinstance(b, list) and b and isinstance(b[0], ast.stmt)]


def _bound(st: ast.stmt) -> frozenset[str]:
    """Names ``st`` (its nested blocks included) binds."""
    return frozenset(
        n.id for n in walk(st) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
    )
