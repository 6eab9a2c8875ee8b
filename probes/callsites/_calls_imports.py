"""The import walk of one caller module: every import with the ``try/except ImportError``
that guards it, and the top-level packages a module imports.

Part of the ``callsites`` probe (:mod:`probes.callsites.callsites`): the scan reads which packages a
caller imports before it visits a file, and the visitor records each import it finds here.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable

from probes.signatures._syntax import dotted, resolve_relative


def walk_imports(tree: ast.Module) -> list[tuple[ast.Import | ast.ImportFrom, ast.Try | None]]:
    """All imports with the ``try/except ImportError`` that guards each (None: unguarded)."""
    return _walk(tree, _catches_import_error, _IMPORTS_SEEN)


def name_guard(tree: ast.Module, node: ast.ImportFrom) -> ast.Try | None:
    """The ``try`` that catches a *name* missing from a module that exists: plain
    ``ImportError`` (or wider). ``except ModuleNotFoundError`` does not: ``from m import x``
    with ``m`` there and ``x`` gone raises ``ImportError``, which passes it by."""
    guards = _walk(tree, _catches_missing_name, _NAME_GUARDS_SEEN)
    return next((g for n, g in guards if n is node), None)


def _walk(
    tree: ast.Module,
    catching: Callable[[ast.ExceptHandler], bool],
    seen: dict[int, tuple[ast.Module, list[tuple[ast.Import | ast.ImportFrom, ast.Try | None]]]],
) -> list[tuple[ast.Import | ast.ImportFrom, ast.Try | None]]:
    out: list[tuple[ast.Import | ast.ImportFrom, ast.Try | None]] = []

    def visit(node: ast.AST, guarded: ast.Try | None) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.append((node, guarded))
            return
        if isinstance(node, ast.Try):
            catches = any(catching(h) for h in node.handlers)
            for c in node.body:
                visit(c, node if catches else guarded)
            for h in node.handlers:
                for c in h.body:
                    visit(c, guarded)
            for c in [*node.orelse, *node.finalbody]:
                visit(c, guarded)
            return
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for c in node.orelse:
                visit(c, guarded)
            return  # TYPE_CHECKING-only imports never run
        # imports are statements: walk statement blocks only, never into expressions
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            for c in getattr(node, field, None) or ():
                if isinstance(c, (ast.stmt, ast.excepthandler)) or type(c).__name__ == "match_case":
                    visit(c, guarded)

    key = id(tree)
    if key in seen:
        return seen[key][1]
    visit(tree, None)
    seen[key] = (tree, out)  # the tree is kept so its id stays its own
    return out


_IMPORTS_SEEN: dict[int, tuple[ast.Module, list]] = {}
_NAME_GUARDS_SEEN: dict[int, tuple[ast.Module, list]] = {}


def _is_type_checking(test: ast.expr) -> bool:
    return dotted(test).split(".")[-1] == "TYPE_CHECKING"


def _catches(h: ast.ExceptHandler, kinds: tuple[str, ...]) -> bool:
    if h.type is None:
        return True
    names = [dotted(e) for e in (h.type.elts if isinstance(h.type, ast.Tuple) else [h.type])]
    return any(n.split(".")[-1] in kinds for n in names)


def _catches_import_error(h: ast.ExceptHandler) -> bool:
    return _catches(h, ("ImportError", "ModuleNotFoundError", "Exception", "BaseException"))


def _catches_missing_name(h: ast.ExceptHandler) -> bool:
    return _catches(h, ("ImportError", "Exception", "BaseException"))


def imported_tops(module: str, is_pkg: bool, tree: ast.Module) -> set[str]:
    tops: set[str] = set()
    for node, _ in walk_imports(tree):
        if isinstance(node, ast.Import):
            tops |= {a.name.split(".")[0] for a in node.names}
        elif node.level == 0 and node.module:
            tops.add(node.module.split(".")[0])
        else:
            tops.add(resolve_relative(module, is_pkg, node.level, node.module).split(".")[0])
    return tops


def is_stdlib(root: str) -> bool:
    import sysconfig

    std = sysconfig.get_paths().get("stdlib", "")
    return bool(std) and os.path.abspath(root) == os.path.abspath(std)
