"""What a class's run-time attribute machinery can make, where its own source says: the names a
``setattr(self, self.m(...), v)`` makes when ``m`` is annotated ``-> Literal["a", "b"]``, and a
``__getattr__`` that serves only the object's items (``return self[name]``).

pandas' ``NDFrame`` has both: ``_set_axis_nocheck`` sets ``self._get_axis_name(axis)``, which
returns ``Literal["index", "columns"]`` (members already), and ``__getattr__`` returns
``self[name]`` (a column, a label's value) or falls back to ``object.__getattribute__``. Such a
class is not open to any name: a name it lacks is one of its items at best -- data, not API.
"""

from __future__ import annotations

import ast

from probes._walk import walk
from probes.signatures._syntax import dotted


def literal_names(name: ast.expr, cls: ast.ClassDef | None) -> list[str] | None:
    """``self.m(...)`` / ``cls.m(...)`` where the class's own ``m`` is annotated to return
    ``Literal[...]`` of strings: those strings; None when the source does not say."""
    if cls is None or not isinstance(name, ast.Call):
        return None
    func = name.func
    if not (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id in ("self", "cls")
    ):
        return None
    defs = [
        st
        for st in cls.body
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) and st.name == func.attr
    ]
    if len(defs) != 1:
        return None
    return literal_strings(defs[0].returns)


def literal_strings(ann: ast.expr | None) -> list[str] | None:
    """``Literal["a", "b"]`` (also written as a string): ``["a", "b"]``."""
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            ann = ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            return None
    if not (isinstance(ann, ast.Subscript) and dotted(ann.value).split(".")[-1] == "Literal"):
        return None
    items = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
    out = [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]
    return out if len(out) == len(items) else None


def serves_items(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A ``__getattr__(self, name)`` whose every ``return`` is ``self[name]`` or the ordinary
    lookup (``object.__getattribute__(self, name)``, ``super().__getattribute__(name)``),
    with nothing defined inside it: the names it serves are the object's items."""
    args = fn.args.posonlyargs + fn.args.args
    if isinstance(fn, ast.AsyncFunctionDef) or len(args) != 2:
        return False
    me, name = args[0].arg, args[1].arg
    returns = 0
    for n in walk(fn):
        if n is not fn and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return False
        if isinstance(n, (ast.Yield, ast.YieldFrom)):
            return False
        if not isinstance(n, ast.Return):
            continue
        returns += 1
        if not (_item_of(n.value, me, name) or _ordinary(n.value, me, name)):
            return False
    return returns > 0


def _is(node: ast.expr | None, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _item_of(value: ast.expr | None, me: str, name: str) -> bool:
    """``self[name]``."""
    return isinstance(value, ast.Subscript) and _is(value.value, me) and _is(value.slice, name)


def _ordinary(value: ast.expr | None, me: str, name: str) -> bool:
    """``object.__getattribute__(self, name)`` or ``super().__getattribute__(name)``."""
    if not (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "__getattribute__"
        and not value.keywords
    ):
        return False
    owner = value.func.value
    if _is(owner, "object"):
        return len(value.args) == 2 and _is(value.args[0], me) and _is(value.args[1], name)
    return (
        isinstance(owner, ast.Call)
        and _is(owner.func, "super")
        and len(value.args) == 1
        and _is(value.args[0], name)
    )
