"""The literals a class's own methods (and the module functions they call) depend on, and the
module constants they read: what ``harness check`` compares with the baseline for a callee
class a caller subclasses, where no signature changed (vLLM 0.29's example connector: its
layout string "NHD" -> "LBNHC", ``kv_cache.shape[1]`` -> ``shape[2]``). Stdlib only.

Left out, as noise: docstrings, f-strings, and the arguments of logging calls and of raises.
"""

from __future__ import annotations

import ast
from typing import Any

_LOGS = frozenset({"debug", "info", "warning", "warning_once", "info_once", "error",
                   "exception", "critical", "warn"})  # fmt: skip


def _literal(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bytes))


def literals_of(fn: ast.AST) -> list[str]:
    """The function's literals in source order: each constant (but docstrings, f-string parts,
    log and raise messages), and each subscript by a constant (``kv_cache.shape[1]``)."""
    skip: set[int] = set()
    for node in ast.walk(fn):
        if isinstance(node, (ast.Raise, ast.JoinedStr)):
            skip.update(id(n) for n in ast.walk(node))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in _LOGS:
                skip.update(id(n) for n in ast.walk(node))
        elif isinstance(node, (ast.arg, ast.AnnAssign)) and node.annotation is not None:
            skip.update(id(n) for n in ast.walk(node.annotation))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            skip.update(id(n) for n in ast.walk(node.returns))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and _literal(body[0].value):
                skip.add(id(body[0].value))
    out: list[tuple[int, int, str]] = []
    for node in ast.walk(fn):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Subscript) and _literal(node.slice):
            skip.add(id(node.slice))
            out.append((node.lineno, node.col_offset, ast.unparse(node)))
        elif _literal(node) and id(node) not in skip:
            out.append((getattr(node, "lineno", 0), getattr(node, "col_offset", 0),
                        repr(node.value)))  # type: ignore[attr-defined]  # fmt: skip
    return [text for _, _, text in sorted(out)]


def _called_names(fn: ast.AST) -> set[str]:
    return {
        n.func.id for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    }


def _read_names(fn: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def class_literals(tree: ast.Module, cls: ast.ClassDef, rel: str) -> dict[str, Any]:
    """``{"functions": {qualname: {"at", "literals"}}, "constants": {NAME: {"at", "value"}}}``
    for the class's own methods, the module functions they call, and the module constants
    (``NAME = literal``) any of them read."""
    top = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    consts = {}
    for n in tree.body:
        if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None and _literal(n.value):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    consts[t.id] = {"at": f"{rel}:{n.lineno}", "value": repr(n.value.value)}  # type: ignore[attr-defined]
    funcs: dict[str, Any] = {}
    read: set[str] = set()
    todo: list[tuple[str, ast.AST]] = [
        (f"{cls.name}.{m.name}", m)
        for m in cls.body
        if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    while todo:
        qual, fn = todo.pop()
        if qual in funcs:
            continue
        funcs[qual] = {"at": f"{rel}:{getattr(fn, 'lineno', 0)}", "literals": literals_of(fn)}
        read |= _read_names(fn)
        todo += [(name, top[name]) for name in _called_names(fn) if name in top]
    return {"functions": funcs, "constants": {k: v for k, v in consts.items() if k in read}}
