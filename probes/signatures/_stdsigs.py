"""Constructors the stdlib gives a class, as the Python running the probe reports them.

The probe runs on the target's own interpreter, so asking its ``inspect`` about its own stdlib
*is* reading the target: an enum class's call signature changed in Python 3.12 (``EnumType``
grew a ``__signature__``: ``Color(*values)`` for an enum with members, the functional API
``Enum(new_class_name, /, names, ...)`` for one without; 3.11 and older report the metaclass's
``__call__``, ``(value, names=None, *, module=None, ...)``), and a stdlib base such as
``collections.UserDict`` signs as this Python's version of it does.
"""

from __future__ import annotations

import ast

ENUMS = {"enum.Enum", "enum.IntEnum", "enum.StrEnum", "enum.Flag", "enum.IntFlag", "enum.ReprEnum"}
_KINDS = (
    "positional-only",
    "positional-or-keyword",
    "var-positional",
    "keyword-only",
    "var-keyword",
)


def stdlib_ctor(via: str, full: str, params: list[dict] | None) -> dict:
    return {"via": via, "from": full, "parameters": params, "overloads": [], "extra": "forbid"}


def has_members(cls: ast.ClassDef) -> bool:
    """Whether an enum class body defines members: a plain name (not ``_sunder_``, not
    ``__dunder__``/``__private``) bound to a value that is not a function. A class made by
    ``Enum("E", names)`` says so itself (``made_members``)."""
    made = getattr(cls, "made_members", None)
    if made is not None:
        return bool(made)
    for st in cls.body:
        if isinstance(st, ast.Assign):
            names = [t.id for t in st.targets if isinstance(t, ast.Name)]
            value: ast.AST | None = st.value
        elif isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
            names, value = [st.target.id], st.value
        else:
            continue
        if value is None or isinstance(value, ast.Lambda):
            continue
        for n in names:
            if not n.startswith("__") and not (n.startswith("_") and n.endswith("_")):
                return True
    return False


def enum_ctor(full: str, cls: ast.ClassDef) -> dict:
    """``Color(...)``: what ``inspect.signature`` says on this Python for an enum of the same
    kind (``full``: its stdlib base) with members or without, like ``cls``."""
    import enum

    base = getattr(enum, full.rpartition(".")[2], enum.Enum)
    try:
        made = base("_HarnessProbe", ["a"] if has_members(cls) else [])
    except (TypeError, ValueError):  # an odd mixin: the metaclass's __call__, as before 3.12
        meta = getattr(enum, "EnumType", None) or enum.EnumMeta
        return stdlib_ctor("enum", full, signature_params(meta.__call__, drop=1))
    return stdlib_ctor("enum", full, signature_params(made, drop=0))


def stdlib_class(full: str) -> type | None:
    """A stdlib class by its dotted name (``enum.Enum``), from the Python running the probe:
    the target's own, so its version's API (never a third-party module: that is never run)."""
    import sys

    module, _, name = full.rpartition(".")
    if not module or module.split(".")[0] not in getattr(sys, "stdlib_module_names", ()):
        return None
    try:
        import importlib

        obj = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None
    return obj if isinstance(obj, type) else None


def stdlib_class_params(full: str) -> list[dict] | None:
    """A stdlib base's constructor (``collections.UserDict``), read from this Python."""
    obj = stdlib_class(full)
    return None if obj is None else signature_params(obj, drop=0)


def signature_params(obj: object, drop: int) -> list[dict] | None:
    import inspect

    try:
        sig = inspect.signature(obj)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    out = []
    for p in list(sig.parameters.values())[drop:]:
        default = None if p.default is inspect.Parameter.empty else repr(p.default)
        out.append(
            {"name": p.name, "kind": _KINDS[int(p.kind)], "default": default, "annotation": None}
        )
    return out
