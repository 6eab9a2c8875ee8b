"""Constructors the stdlib gives a class, as the Python running the probe reports them.

The probe runs on the target's own interpreter, so asking its ``inspect`` about its own stdlib
*is* reading the target: an enum class's call signature changed in Python 3.12 (``EnumType``
grew a ``__signature__``: ``Color(*values)`` for an enum with members, the functional API
``Enum(new_class_name, /, names, ...)`` for one without; 3.11 and older report the metaclass's
``__call__``, ``(value, names=None, *, module=None, ...)``), and a stdlib base such as
``collections.UserDict`` signs as this Python's version of it does. A ``pypi:`` target read
for another Python (its ``python==`` pin) gets the enum's from :func:`enum_call_params`.
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


def enum_ctor(full: str, cls: ast.ClassDef, python: tuple[int, int] | None = None) -> dict:
    """``Color(...)``: what ``inspect.signature`` says for an enum of the same kind (``full``:
    its stdlib base) with members or without, like ``cls``, on Python ``python``: asked of
    this interpreter when it is that version (exact, whatever the version), else from
    :func:`enum_call_params` (a ``pypi:`` target read for another Python)."""
    import sys

    if python is not None and python != tuple(sys.version_info[:2]):
        return stdlib_ctor("enum", full, enum_call_params(python, has_members(cls)))
    import enum

    base = getattr(enum, full.rpartition(".")[2], enum.Enum)
    try:
        made = base("_HarnessProbe", ["a"] if has_members(cls) else [])
    except (TypeError, ValueError):  # an odd mixin: the metaclass's __call__, as before 3.12
        meta = getattr(enum, "EnumType", None) or enum.EnumMeta
        return stdlib_ctor("enum", full, signature_params(meta.__call__, drop=1))
    return stdlib_ctor("enum", full, signature_params(made, drop=0))


def enum_call_params(python: tuple[int, int], members: bool) -> list[dict]:
    """Pure: an enum class's call signature as ``inspect.signature`` gives it on ``python``
    (the same for every stdlib base: Enum, IntEnum, StrEnum, Flag, IntFlag). Up to 3.11 it is
    ``EnumMeta.__call__``'s, ``(value, names=None, *, module=None, qualname=None, type=None,
    start=1[, boundary=None])`` (``boundary`` from 3.11); from 3.12 ``EnumType`` gives a
    ``__signature__``: ``(*values)`` with members, else the functional API
    ``(new_class_name, /, names, *, module=None, ...)``."""
    tail = ["module", "qualname", "type", "start"] + (["boundary"] if python >= (3, 11) else [])
    keyword = [_param(n, "keyword-only", "1" if n == "start" else "None") for n in tail]
    if python < (3, 12):
        return [
            _param("value", "positional-or-keyword", None),
            _param("names", "positional-or-keyword", "None"),
            *keyword,
        ]
    if members:
        return [_param("values", "var-positional", None)]
    return [
        _param("new_class_name", "positional-only", None),
        _param("names", "positional-or-keyword", None),
        *keyword,
    ]


def _param(name: str, kind: str, default: str | None) -> dict:
    return {"name": name, "kind": kind, "default": default, "annotation": None}


def stdlib_class(full: str) -> type | None:
    """A stdlib class by its dotted name (``enum.Enum``), from the Python running the probe:
    the target's own, so its version's API (never a third-party module: that is never run)."""
    import sys

    module, _, name = full.rpartition(".")
    import builtins

    if not module and not name.startswith("_") and isinstance(getattr(builtins, name, None), type):
        module = "builtins"  # ``class LogitsProcessorList(list)``: a builtin's own name
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
