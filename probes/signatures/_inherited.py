"""The methods a class offers through its MRO, each with where it is defined and the first line
of its body: what a caller's subclass inherits, and what it runs when it does not override.

``harness check`` compares the names with the baseline's (a method the base gained, one an
override no longer replaces) and shows the installed default's first line. Stdlib only.
"""

from __future__ import annotations

import ast
from typing import Any


def first_line(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> str:
    """The body's first statement after the docstring, as written (its first line)."""
    body = list(node.body)
    doc = body[0].value if body and isinstance(body[0], ast.Expr) else None
    if isinstance(doc, ast.Constant) and isinstance(doc.value, str) and len(body) > 1:
        body = body[1:]
    first = body[0]
    text = lines[first.lineno - 1].strip() if 0 < first.lineno <= len(lines) else ""
    return text[:120]


def method_heads(lookup: Any, mod: Any, cls: ast.ClassDef, depth: int = 0) -> dict[str, Any]:
    """``{name: {"owner", "at", "head"}}`` of every method on ``cls`` and its readable bases,
    the first definition along the MRO (depth-first, left to right) winning."""
    from probes.signatures._syntax import dotted

    out: dict[str, Any] = {}
    rel = lookup.index.rel(mod.loc.file)
    for st in cls.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) and st.name not in out:
            out[st.name] = {
                "owner": f"{mod.name}.{cls.name}",
                "at": f"{rel}:{st.lineno}",
                "head": first_line(st, mod.lines),
            }
    if depth > 12:
        return out
    for b in cls.bases:
        try:
            base = lookup.classes.base_class(mod, b)
        except Exception:  # an unreadable base: its methods are not listed
            base = None
        if base is None or dotted(b) in ("object", "Generic"):
            continue
        for name, got in method_heads(lookup, base[0], base[1], depth + 1).items():
            out.setdefault(name, got)
    return out
