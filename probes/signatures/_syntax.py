"""What every reader of a parsed module shares: the source slicer, the module summary's
shape, a dotted name of an expression, and a relative import made absolute. A leaf: it
imports no other probe module but the finder's types, so every reader may import it."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from probes._finder import ModuleLocation


class Source:
    """Source text of nodes *as written*, sliced by offsets (``ast.unparse`` is ~10x slower)."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self._encoded: dict[int, bytes] = {}

    def text(self, node: ast.AST | None) -> str | None:
        if node is None:
            return None
        first, last = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        if first is None or first != last or first > len(self.lines):
            return ast.unparse(node)
        raw = self._encoded.get(first)
        if raw is None:
            raw = self._encoded[first] = self.lines[first - 1].encode("utf-8")
        return raw[node.col_offset : node.end_col_offset].decode("utf-8", "replace")  # type: ignore[attr-defined]


@dataclass
class ModuleSummary:
    name: str
    loc: ModuleLocation
    tree: ast.Module
    lines: list[str]
    defs: dict[str, ast.AST] = field(default_factory=dict)  # def/class/assign node
    imports: dict[str, tuple[str, str | None, int]] = field(default_factory=dict)
    star_imports: list[str] = field(default_factory=list)
    lazy: dict[str, tuple[str, str, int]] = field(default_factory=dict)
    all_names: list[str] | None = None
    has_getattr: bool = False
    shims: Any = None  # what a ``def __getattr__`` serves (``_resolvable.read_getattr``)
    #: the class a lazy package puts in ``sys.modules[__name__]`` (its ``__getattr__`` serves
    #: the names the files do not: ``_LazyModule``), as the module names it
    runtime_class: str | None = None
    src: Source = field(default_factory=lambda: Source([]))


def resolve_relative(current: str, is_package: bool, level: int, target: str | None) -> str:
    """Absolute module name of ``from ...target import`` inside module ``current``."""
    if level == 0:
        return target or ""
    base = current.split(".")
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    if target:
        base = [*base, *target.split(".")]
    return ".".join(base)


def dotted(node: ast.AST) -> str:
    """``a.b.c`` for Name/Attribute chains, the callee for calls (``@dataclass(frozen=True)``)."""
    if isinstance(node, ast.Call):
        return dotted(node.func)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = dotted(node.value)
        return head + "." + node.attr if head else ""
    if isinstance(node, ast.Subscript):
        return dotted(node.value)
    return ""
