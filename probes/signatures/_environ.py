"""Environment variables: the values a caller sets, and the values a callee refuses.

A caller sets ``os.environ["NAME"] = "v"`` (or ``setdefault``, ``update``, ``putenv``); a callee
refuses a value where a ``raise`` sits under a test of that variable: ``os.environ.get("NAME")``,
``os.getenv("NAME")``, ``os.environ["NAME"]``, ``envs.NAME`` compared with literals, or a loop
``for key, value in os.environ.items()`` testing ``key == "NAME"`` and then ``value``. Only the
callee files that spell a name the caller sets are parsed. Stdlib only.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable
from typing import Any

_FLIP = {"==": "!=", "!=": "==", "in": "not in", "not in": "in"}
_OPS = {ast.Eq: "==", ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in"}


def _is_environ(node: ast.AST) -> bool:
    """``os.environ`` or a bare ``environ``."""
    if isinstance(node, ast.Attribute):
        return node.attr == "environ" and isinstance(node.value, ast.Name)
    return isinstance(node, ast.Name) and node.id == "environ"


def _text(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int)):
        return str(node.value)
    return None


def _may_set(lines: list[str]) -> bool:
    """Whether the text spells ``environ`` or ``putenv`` (every form :func:`caller_sets`
    reads names one), also once identifiers are NFKC-normalised as the parser does: most
    files spell neither, and walking each caller tree was ~10% of a check's scan."""
    for ln in lines:
        if "environ" in ln or "putenv" in ln:
            return True
        if not ln.isascii():
            import unicodedata

            norm = unicodedata.normalize("NFKC", ln)
            if "environ" in norm or "putenv" in norm:
                return True
    return False


def caller_sets(tree: ast.AST, rel: str, lines: list[str]) -> list[dict[str, Any]]:
    """``[{"name", "value", "file", "line", "source"}]``: each literal value ``tree`` sets."""
    if not _may_set(lines):
        return []
    out = []
    for node in ast.walk(tree):
        pairs: list[tuple[str | None, str | None]] = []
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Subscript) and _is_environ(t.value):
                    pairs.append((_text(t.slice), _text(node.value)))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            f = node.func
            two = len(node.args) == 2
            if two and (
                (f.attr == "setdefault" and _is_environ(f.value))
                or (f.attr == "putenv" and isinstance(f.value, ast.Name))
            ):
                pairs.append((_text(node.args[0]), _text(node.args[1])))
            elif f.attr == "update" and _is_environ(f.value):
                pairs += [(k.arg, _text(k.value)) for k in node.keywords if k.arg]
                for a in node.args:
                    if isinstance(a, ast.Dict):
                        pairs += [
                            (_text(k), _text(v)) for k, v in zip(a.keys, a.values, strict=True)
                        ]
        for name, value in pairs:
            if name and value is not None:
                line = getattr(node, "lineno", 0)
                src = lines[line - 1].strip() if 0 < line <= len(lines) else ""
                out.append({"name": name, "value": value, "file": rel, "line": line,
                            "source": src})  # fmt: skip
    return out


def _names_read(node: ast.AST, loops: dict[str, tuple[str, str]]) -> str | None:
    """The variable whose value ``node`` reads, or None; ``loops``: value var -> (key var,
    the name the key was tested equal to)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
        f = node.func
        if (f.attr == "get" and _is_environ(f.value)) or (
            f.attr == "getenv" and isinstance(f.value, ast.Name)
        ):
            return _text(node.args[0])
    if isinstance(node, ast.Subscript) and _is_environ(node.value):
        return _text(node.slice)
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "envs"
        and node.attr.isupper()
    ):
        return node.attr
    if isinstance(node, ast.Name) and node.id in loops:
        return loops[node.id][1] or None
    return None


def _values(node: ast.AST) -> list[str] | None:
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        got = [_text(e) for e in node.elts]
        return None if any(g is None for g in got) else [g for g in got if g is not None]
    one = _text(node)
    return None if one is None else [one]


class _Refusals(ast.NodeVisitor):
    def __init__(self, names: set[str], rel: str, lines: list[str]) -> None:
        self.names, self.rel, self.lines = names, rel, lines
        self.guards: list[tuple[ast.expr, bool]] = []
        self.loops: dict[str, tuple[str, str]] = {}  # value var -> (key var, tested name)
        self.keys: dict[str, str] = {}  # key var -> value var
        self.out: list[dict[str, Any]] = []

    def visit_For(self, node: ast.For) -> None:
        it = node.iter
        if (
            isinstance(it, ast.Call)
            and isinstance(it.func, ast.Attribute)
            and it.func.attr == "items"
            and _is_environ(it.func.value)
            and isinstance(node.target, ast.Tuple)
            and len(node.target.elts) == 2
            and all(isinstance(e, ast.Name) for e in node.target.elts)
        ):
            k, v = (e.id for e in node.target.elts if isinstance(e, ast.Name))
            self.keys[k] = v
            self.generic_visit(node)
            del self.keys[k]
            return
        self.generic_visit(node)

    def visit_If(self, node: ast.If) -> None:
        bound = self._key_test(node.test)
        if bound:
            self.loops[bound[0]] = bound[1]
        self.guards.append((node.test, True))
        for st in node.body:
            self.visit(st)
        self.guards[-1] = (node.test, False)
        if bound:
            del self.loops[bound[0]]
        for st in node.orelse:
            self.visit(st)
        self.guards.pop()

    def _key_test(self, test: ast.expr) -> tuple[str, tuple[str, str]] | None:
        """``key == "NAME"`` over a loop's key: (its value var, (key var, NAME))."""
        if (
            isinstance(test, ast.Compare)
            and isinstance(test.left, ast.Name)
            and test.left.id in self.keys
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq)
        ):
            name = _text(test.comparators[0])
            if name in self.names:
                return self.keys[test.left.id], (test.left.id, name)
        return None

    def visit_Raise(self, node: ast.Raise) -> None:
        found: list[tuple[str, str, list[str]]] = []
        other = False  # a guard that tests something else: the raise is conditional
        for test, positive in self.guards:
            for part in test.values if isinstance(test, ast.BoolOp) and positive else [test]:
                got = self._value_test(part, positive)
                if got is not None and got[0] in self.names:
                    found.append(got)
                elif got is None and self._key_test(part) is None:
                    other = True
        for got in found:
            self.out.append({**self._refusal(node, *got), "conditional": other})

    def _value_test(self, test: ast.expr, positive: bool) -> tuple[str, str, list[str]] | None:
        if not isinstance(test, ast.Compare) or len(test.ops) != 1:
            return None
        op = _OPS.get(type(test.ops[0]))
        name = _names_read(test.left, self.loops)
        values = _values(test.comparators[0])
        if op is None or name is None or values is None:
            return None
        return name, op if positive else _FLIP[op], values

    def _refusal(self, node: ast.Raise, name: str, op: str, values: list[str]) -> dict[str, Any]:
        line = node.lineno
        text = " ".join(ln.strip() for ln in self.lines[line - 1 : (node.end_lineno or line)])
        return {"name": name, "op": op, "values": values, "file": self.rel, "line": line,
                "source": text[:240]}  # fmt: skip


def refusals(
    folders: list[str], names: set[str], rel: Callable[[str], str]
) -> list[dict[str, Any]]:
    """``[{"name", "op", "values", "file", "line", "source"}]`` in the package ``folders``:
    each raise guarded by a test of a variable in ``names`` (``rel``: a path as shown)."""
    if not names:
        return []
    out: list[dict[str, Any]] = []
    for folder in folders:
        for dirpath, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for fn in sorted(files):
                if not fn.endswith(".py"):
                    continue
                path = os.path.join(dirpath, fn)
                try:
                    with open(path, encoding="utf-8") as f:
                        src = f.read()
                except (OSError, UnicodeDecodeError):
                    continue
                if "raise" not in src or not any(n in src for n in names):
                    continue
                try:
                    tree = ast.parse(src, filename=path)
                except SyntaxError:
                    continue
                v = _Refusals(names, rel(path), src.splitlines())
                v.visit(tree)
                out += v.out
    return out
