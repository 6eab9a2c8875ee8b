"""A ``__getattr__`` that serves an old name by cutting a suffix off it, read from its source.

transformers 5.17.0 keeps ``XImageProcessorFast`` importable from the ``..._fast`` alias
modules its ``__init__`` makes (``__init__.py:853-871``): their ``__getattr__`` is::

    def _getattr(name):
        if name.endswith("Fast"):
            new_name = name.removesuffix("Fast")
            logger.warning_once(...)
            return getattr(importlib.import_module(target, __name__), new_name)
        ...

Read here as a rule: a name ending with ``"Fast"`` is served as the name without its last 4
characters, with a warning on that line (deprecated). Pure: a function's AST in, rules out.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass(frozen=True)
class SuffixRule:
    """``name.endswith(suffix)`` -> ``name[:-strip]``; ``warns``: the warning's line, or 0."""

    suffix: str
    strip: int
    warns: int

    @property
    def how(self) -> str:
        """The kind of hop through this ``__getattr__``: ``deprecated`` when it warns."""
        return "deprecated" if self.warns else "lazy"

    @property
    def line(self) -> int:
        """The hop's line: the warning's, else 1 (the file)."""
        return self.warns or 1

    def apply(self, name: str) -> str | None:
        if not name.endswith(self.suffix) or len(name) <= self.strip:
            return None
        return name[: -self.strip]


def suffix_rules(fn: ast.FunctionDef) -> list[SuffixRule]:
    """The suffix fallbacks of a ``__getattr__``-like function (its last positional parameter
    is the name asked for): each ``if name.endswith(S)`` whose body binds ``name[:-k]`` or
    ``name.removesuffix(S2)``."""
    params = [a.arg for a in fn.args.args]
    if not params:
        return []
    param = params[-1]
    out: list[SuffixRule] = []
    for node in ast.walk(fn):
        if not isinstance(node, ast.If):
            continue
        suffix = _endswith(node.test, param)
        if suffix is None:
            continue
        strip = next((k for st in node.body for k in [_stripped(st, param)] if k), 0)
        if strip:
            out.append(SuffixRule(suffix, strip, _warning_line(node.body)))
    return out


def _endswith(test: ast.expr, param: str) -> str | None:
    """``param.endswith("S")`` (or the first operand of an ``and``): S."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        test = test.values[0]
    return _str_method(test, param, "endswith")


def _str_method(node: ast.expr, param: str, method: str) -> str | None:
    """``param.method("S")``: S; else None."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == method
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == param
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return node.args[0].value
    return None


def _stripped(st: ast.stmt, param: str) -> int:
    """How many characters ``X = param[:-k]`` / ``param.removesuffix("S")`` cuts; 0: none."""
    if not (isinstance(st, ast.Assign) and len(st.targets) == 1):
        return 0
    v = st.value
    if (
        isinstance(v, ast.Subscript)
        and isinstance(v.value, ast.Name)
        and v.value.id == param
        and isinstance(v.slice, ast.Slice)
        and v.slice.lower is None
        and isinstance(v.slice.upper, ast.UnaryOp)
        and isinstance(v.slice.upper.op, ast.USub)
        and isinstance(v.slice.upper.operand, ast.Constant)
        and isinstance(v.slice.upper.operand.value, int)
    ):
        return v.slice.upper.operand.value
    cut = _str_method(v, param, "removesuffix")
    return len(cut) if cut else 0


def _warning_line(body: list[ast.stmt]) -> int:
    """The line of the first ``...warn...(...)`` call in ``body`` (logger.warning_once,
    warnings.warn), 0 when none."""
    for st in body:
        for n in ast.walk(st):
            if isinstance(n, ast.Call):
                f = n.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                if name.startswith("warn"):
                    return n.lineno
    return 0
