"""What one class body of the caller's own says about the names its instances have, read from
the body alone (no name resolution): the receiver-type inference of
:mod:`probes.callsites._receivers` asks these for every class of a caller's chain.

A name is the caller's own when the class body binds it (a def, a class, an assignment, an
annotation, ``__slots__``) or a method stores it on ``self`` (``self.x = ...``,
``setattr(self, "x", ...)``). A class whose instances may take any name -- a ``__getattr__``
that is not a plain forwarder, ``__getattribute__``, ``setattr(self, name, ...)`` with a
computed name, writes through ``self.__dict__`` or ``vars(self)`` -- is *open*: nothing read on
its ``self`` is provably missing.
"""

from __future__ import annotations

import ast

from probes._walk import walk
from probes.signatures._syntax import dotted

#: Bases that add no instance names a caller could read (``class X(Generic[T], Base)``).
TRIVIAL_BASES = frozenset(
    {
        "object",
        "builtins.object",
        "abc.ABC",
        "typing.Generic",
        "typing.Protocol",
        "typing_extensions.Generic",
        "typing_extensions.Protocol",
    }
)
#: Decorators that make a method read as an attribute (its return annotation is the value's).
ACCESSORS = frozenset({"property", "cached_property", "functools.cached_property"})
#: What :func:`forwarder` says of a class whose ``__getattr__`` serves names some other way.
OPEN = "<open>"

Method = ast.FunctionDef | ast.AsyncFunctionDef


def methods(node: ast.ClassDef) -> dict[str, Method]:
    """The class body's methods by name (the last definition wins, as in Python)."""
    return {
        st.name: st for st in node.body if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef))
    }


def self_name(fn: Method) -> str | None:
    """The name a method calls its instance (``self``); None for static and class methods."""
    kinds = {dotted(d).split(".")[-1] for d in fn.decorator_list}
    if kinds & {"staticmethod", "classmethod"}:
        return None
    args = [*fn.args.posonlyargs, *fn.args.args]
    return args[0].arg if args else None


def is_accessor(fn: Method) -> bool:
    """``@property`` / ``@cached_property`` (and ``@x.setter``): read as an attribute."""
    for d in fn.decorator_list:
        name = dotted(d)
        if name in ACCESSORS or name.split(".")[-1] in ("setter", "getter", "deleter"):
            return True
    return False


def body_names(node: ast.ClassDef) -> set[str]:
    """Names the class body binds: defs, nested classes, assignments, annotations, slots."""
    out: set[str] = set()
    for st in node.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(st.name)
        elif isinstance(st, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            for t in targets:
                for n in walk(t):
                    if isinstance(n, ast.Name):
                        out.add(n.id)
            if (
                isinstance(st, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "__slots__" for t in st.targets)
                and st.value is not None
            ):
                out |= {
                    n.value
                    for n in walk(st.value)
                    if isinstance(n, ast.Constant) and isinstance(n.value, str)
                }
    return out


def instance_names(node: ast.ClassDef) -> tuple[set[str], bool]:
    """(names the methods store on ``self``, whether a method makes names it does not spell)."""
    out: set[str] = set()
    for fn in methods(node).values():
        me = self_name(fn)
        if me is None:
            continue
        for n in walk(fn):
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == me:
                if n.attr == "__dict__":
                    return out, True
                if not isinstance(n.ctx, ast.Load):
                    out.add(n.attr)
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.args:
                first = n.args[0]
                on_me = isinstance(first, ast.Name) and first.id == me
                if n.func.id == "vars" and on_me:
                    return out, True
                if n.func.id in ("setattr", "delattr") and on_me:
                    name = n.args[1] if len(n.args) > 1 else None
                    if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
                        return out, True
                    out.add(name.value)
    return out, False


def forwarder(node: ast.ClassDef) -> str | None:
    """The attribute a ``__getattr__`` hands unknown names to (``getattr(self.model, name)``:
    ``"model"``); :data:`OPEN` when the class serves names another way; None: it does not."""
    body = methods(node)
    bound = body_names(node)
    if "__getattribute__" in bound or ("__getattr__" in bound and "__getattr__" not in body):
        return OPEN  # (``__getattr__ = some_function``: served some way we do not read)
    fn = body.get("__getattr__")
    if fn is None:
        return None
    args = [*fn.args.posonlyargs, *fn.args.args]
    if len(args) < 2:
        return OPEN
    me, name = args[0].arg, args[1].arg
    targets: set[str] = set()
    for n in walk(fn):
        if (
            isinstance(n, ast.Call)
            and dotted(n.func) == "getattr"
            and len(n.args) >= 2
            and isinstance(n.args[1], ast.Name)
            and n.args[1].id == name
        ):
            first = n.args[0]
            if len(n.args) > 2:
                return OPEN  # a default stands in for a missing name: nothing raises
            if (
                isinstance(first, ast.Attribute)
                and isinstance(first.value, ast.Name)
                and first.value.id == me
            ):
                targets.add(first.attr)
            elif not (isinstance(first, ast.Call) and dotted(first.func) == "super"):
                return OPEN  # getattr(something else, name): not one wrapped object
    return targets.pop() if len(targets) == 1 else OPEN
