"""Which branch of a platform or version test runs *here*, the interpreter being probed.

``os.py`` binds ``path`` twice -- ``import posixpath as path`` under ``if 'posix' in _names``
and ``import ntpath as path`` under ``elif 'nt' in _names`` -- and modules pick
``typing`` or ``typing_extensions`` by ``sys.version_info``. Reading both branches made
``harness probe os:path`` answer ``ntpath`` on Linux. The probes run on the target's own
Python, so these tests can be decided exactly as that Python will decide them at import time;
anything else (``TYPE_CHECKING``, a try/except ImportError) stays undecided and both branches
are read, as before. Stdlib only; parses under Python 3.10.

A ``pypi:`` target has no interpreter of its own: its probes run on this machine's Python, and
its ``python==3.12`` pin says which Python the wheels are read for (``args["python"]``,
:func:`target_python`); version tests are then decided for that version.
"""

from __future__ import annotations

import ast
import os
import sys
from typing import Any

_UNKNOWN = object()


Version = tuple[int, int]


def target_python(args: dict[str, Any]) -> Version:
    """The Python the probe reads for: ``args["python"]`` (``"3.12"``, a ``pypi:`` target's
    pin), else the interpreter running the probe -- the target's own on every other kind."""
    given = str(args.get("python") or "")
    parts = given.split(".")
    if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
        return int(parts[0]), int(parts[1])
    return sys.version_info[0], sys.version_info[1]


def _version_info(python: Version | None) -> tuple[Any, ...]:
    if python is None or python == tuple(sys.version_info[:2]):
        return tuple(sys.version_info)
    return (*python, 0, "final", 0)


def _facts(python: Version | None = None) -> dict[str, Any]:
    return {
        "sys.platform": sys.platform,
        "os.name": os.name,
        "sys.builtin_module_names": sys.builtin_module_names,
        "sys.version_info": _version_info(python),
        "sys.implementation.name": sys.implementation.name,
    }


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def builtin_aliases(body: list[ast.stmt]) -> dict[str, str]:
    """Module-level ``_names = sys.builtin_module_names`` style aliases -> what they stand for."""
    out: dict[str, str] = {}
    facts = _facts()
    for st in body:
        if isinstance(st, ast.Assign) and len(st.targets) == 1:
            target, src = st.targets[0], _dotted(st.value)
            if isinstance(target, ast.Name) and src in facts:
                out[target.id] = src
    return out


class Decider:
    """Decides platform/version tests as this interpreter would; ``None``: cannot say."""

    def __init__(
        self, aliases: dict[str, str] | None = None, python: Version | None = None
    ) -> None:
        self.facts = _facts(python)
        self.aliases = aliases or {}

    def truth(self, test: ast.expr) -> bool | None:
        value = self._value(test)
        return None if value is _UNKNOWN else bool(value)

    def _value(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Tuple):
            items = [self._value(e) for e in node.elts]
            return _UNKNOWN if any(i is _UNKNOWN for i in items) else tuple(items)
        name = _dotted(node)
        if name is not None:
            name = self.aliases.get(name, name)
            return self.facts.get(name, _UNKNOWN)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            v = self._value(node.operand)
            return _UNKNOWN if v is _UNKNOWN else not v
        if isinstance(node, ast.BoolOp):
            return self._boolop(node)
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            return self._compare(
                node.ops[0], self._value(node.left), self._value(node.comparators[0])
            )
        if isinstance(node, ast.Subscript):
            return self._subscript(node)
        if isinstance(node, ast.Call):
            return self._startswith(node)
        return _UNKNOWN

    def _boolop(self, node: ast.BoolOp) -> Any:
        values = [self._value(v) for v in node.values]
        if isinstance(node.op, ast.And):
            if any(v is not _UNKNOWN and not v for v in values):
                return False
        elif any(v is not _UNKNOWN and v for v in values):
            return True
        return _UNKNOWN if any(v is _UNKNOWN for v in values) else isinstance(node.op, ast.And)

    @staticmethod
    def _compare(op: ast.cmpop, left: Any, right: Any) -> Any:
        if left is _UNKNOWN or right is _UNKNOWN:
            return _UNKNOWN
        try:
            if isinstance(op, ast.Eq):
                return left == right
            if isinstance(op, ast.NotEq):
                return left != right
            if isinstance(op, ast.In):
                return left in right
            if isinstance(op, ast.NotIn):
                return left not in right
            if isinstance(op, ast.Lt):
                return left < right
            if isinstance(op, ast.LtE):
                return left <= right
            if isinstance(op, ast.Gt):
                return left > right
            if isinstance(op, ast.GtE):
                return left >= right
        except TypeError:
            return _UNKNOWN
        return _UNKNOWN

    def _subscript(self, node: ast.Subscript) -> Any:
        base = self._value(node.value)
        if base is _UNKNOWN or not isinstance(base, tuple):
            return _UNKNOWN
        sl = node.slice
        if isinstance(sl, ast.Slice):
            parts = [None if p is None else self._value(p) for p in (sl.lower, sl.upper, sl.step)]
            if any(p is _UNKNOWN or not (p is None or isinstance(p, int)) for p in parts):
                return _UNKNOWN
            return tuple(base[slice(*parts)])
        index = self._value(sl)
        if not isinstance(index, int) or isinstance(index, bool):
            return _UNKNOWN
        try:
            return base[index]
        except IndexError:
            return _UNKNOWN

    def _startswith(self, node: ast.Call) -> Any:
        func = node.func
        if not (
            isinstance(func, ast.Attribute)
            and func.attr in ("startswith", "endswith")
            and len(node.args) == 1
            and not node.keywords
        ):
            return _UNKNOWN
        base, arg = self._value(func.value), self._value(node.args[0])
        if not isinstance(base, str) or not isinstance(arg, (str, tuple)):
            return _UNKNOWN
        return base.startswith(arg) if func.attr == "startswith" else base.endswith(arg)
