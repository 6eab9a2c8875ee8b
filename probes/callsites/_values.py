"""What a callee's named value is, when the caller reaches through it: ``pkg.logger.info``.

A name a callee binds with ``logger = Logger(...)`` (or ``logger: Logger``) is an instance of
that class: its attributes are the class's, checked like any other known instance -- not
"``pkg:logger`` is not a class, so it has no ``info``". A value whose type the source does not
say (a dict, a function's result, a function a decorator wrapped) has attributes we cannot
know: nothing is checked through it. Classes, plain functions, modules and missing names are
left to the caller's usual path, so a name that is not there is still reported.
"""

from __future__ import annotations

import ast
from typing import Any

from probes._finder import ProbeFailure
from probes.callsites._uses import annotation_union
from probes.signatures._syntax import dotted

#: Metaclasses whose ``__call__`` makes an instance of the class (``type``'s).
PLAIN_METAS = {"type", "builtins.type", "abc.ABCMeta", "enum.EnumMeta", "enum.EnumType"}
#: The value's type is not known: attribute uses through it are not recorded.
UNTYPED = ("untyped",)


class Values:
    """Per-scan cache of :func:`value_of` (one resolve per distinct name)."""

    def __init__(self, callees: Any) -> None:
        self.callees = callees  # a probes.callsites._callees.Callees (which holds this cache)
        self._memo: dict[tuple[str, str], tuple[str, ...] | None] = {}

    def of(self, ref: tuple[str, ...] | None) -> tuple[str, ...] | None:
        """``("instance", module, Class)`` / :data:`UNTYPED` for a callee ``("symbol", m, q)``
        naming a value; None when it names anything else (the ref stays as it is)."""
        if not ref or ref[0] != "symbol" or not self.callees.is_callee(ref[1]):
            return None
        key = (ref[1], ref[2])
        if key not in self._memo:
            self._memo[key] = value_of(self.callees.lookup, ref[1], ref[2])
        return self._memo[key]

    def attr(self, base: tuple[str, ...], attr: str) -> tuple[str, ...] | None:
        """What ``base.attr`` refers to, ``base`` a module or a symbol: a submodule, a
        member (an instance when it names one), or None through a value of unknown type."""
        if base[0] == "module":
            sub = f"{base[1]}.{attr}"
            return (
                ("module", self.callees.module_of(sub))
                if self.callees.is_module(sub)
                else self.typed(("symbol", base[1], attr))
            )
        if self.of(base) == UNTYPED:
            return None
        return self.typed(("symbol", base[1], f"{base[2]}.{attr}"))

    def typed(self, ref: tuple[str, ...] | None) -> tuple[str, ...] | None:
        """``ref`` as an instance when it names one, else unchanged."""
        got = self.of(ref)
        return got if got is not None and got[0] == "instance" else ref


def value_of(lookup: Any, module: str, qualname: str) -> tuple[str, ...] | None:
    """``("instance", module, Class)``, :data:`UNTYPED`, or None (not a value: a class, a
    plain function, a module, or a name that does not resolve)."""
    mod = lookup.index.module(module)
    if mod is None:
        return None
    try:
        node, owner, _ = lookup._resolve_qualname(mod, qualname)
    except ProbeFailure:
        return None
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return UNTYPED if node.decorator_list else None  # ``@lru_cache``: any attributes
    if not isinstance(node, (ast.Assign, ast.AnnAssign)):
        return None
    cls = None
    if isinstance(node, ast.AnnAssign):
        names = [
            n
            for n in annotation_union(node.annotation)
            if not (isinstance(n, ast.Constant) and n.value is None)
        ]
        if len(names) == 1:
            cls = lookup.classes._resolve_class(owner.name, dotted(names[0]))
    if cls is None and isinstance(node.value, ast.Call):
        cls = lookup.classes._resolve_class(owner.name, dotted(node.value.func))
        if cls is not None and not _makes_itself(lookup, *cls):
            cls = None
    if cls is None:
        return UNTYPED
    return ("instance", cls[0].name, cls[1].name)


def _makes_itself(lookup: Any, mod: Any, cls: ast.ClassDef) -> bool:
    """``Cls(...)`` is a ``Cls``: no metaclass ``__call__`` nor ``__new__`` annotated to
    return something else decides what the call makes."""
    for k in cls.keywords:
        if k.arg == "metaclass":
            if lookup.index.resolve_dotted(mod.name, dotted(k.value)) in PLAIN_METAS:
                continue
            meta = lookup.classes._resolve_class(mod.name, dotted(k.value))
            if meta is None or any(
                isinstance(st, ast.FunctionDef) and st.name == "__call__" for st in meta[1].body
            ):
                return False
    for st in cls.body:
        if isinstance(st, ast.FunctionDef) and st.name == "__new__" and st.returns is not None:
            returned = dotted(st.returns).split(".")[-1]
            if returned not in (cls.name, "Self", ""):
                return False
    return True
