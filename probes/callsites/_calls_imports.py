"""The import walk of one caller module: every import with the ``try/except ImportError``
that guards it, and the top-level packages a module imports.

Part of the ``callsites`` probe (:mod:`probes.callsites.callsites`): the scan reads which packages a
caller imports before it visits a file, and the visitor records each import it finds here.
"""

from __future__ import annotations

import ast
import os

from probes.signatures._syntax import dotted, resolve_relative


def walk_imports(tree: ast.Module) -> list[tuple[ast.Import | ast.ImportFrom, ast.Try | None]]:
    """All imports with the ``try/except ImportError`` that guards each (None: unguarded)."""
    return _walk(tree)[1]


def name_guard(tree: ast.Module, node: ast.ImportFrom) -> ast.Try | None:
    """The ``try`` that catches a *name* missing from a module that exists: plain
    ``ImportError`` (or wider). ``except ModuleNotFoundError`` does not: ``from m import x``
    with ``m`` there and ``x`` gone raises ``ImportError``, which passes it by."""
    return _walk(tree)[2].get(id(node))


def _walk(
    tree: ast.Module,
) -> tuple[
    ast.Module,
    list[tuple[ast.Import | ast.ImportFrom, ast.Try | None]],
    dict[int, ast.Try | None],
]:
    """One walk of the module's statements: each import with both of its guards."""
    key = id(tree)
    if key in _IMPORTS_SEEN:
        return _IMPORTS_SEEN[key]
    out: list[tuple[ast.Import | ast.ImportFrom, ast.Try | None]] = []
    by_name: dict[int, ast.Try | None] = {}

    def visit(node: ast.AST, guarded: ast.Try | None, named: ast.Try | None) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.append((node, guarded))
            by_name[id(node)] = named
            return
        if isinstance(node, ast.Try):
            kinds = [caught(h) for h in node.handlers]
            inner = node if any(k is None or k & _IMPORT_ERRORS for k in kinds) else guarded
            inner_named = node if any(k is None or k & _NAME_ERRORS for k in kinds) else named
            for c in node.body:
                visit(c, inner, inner_named)
            for c in [*(st for h in node.handlers for st in h.body), *node.orelse, *node.finalbody]:
                visit(c, guarded, named)
            return
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for c in node.orelse:
                visit(c, guarded, named)
            return  # TYPE_CHECKING-only imports never run
        # imports are statements: walk statement blocks only, never into expressions
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            for c in getattr(node, field, None) or ():
                if isinstance(c, (ast.stmt, ast.excepthandler)) or type(c).__name__ == "match_case":
                    visit(c, guarded, named)

    visit(tree, None, None)
    _IMPORTS_SEEN[key] = (tree, out, by_name)  # the tree is kept so its id stays its own
    return _IMPORTS_SEEN[key]


_IMPORTS_SEEN: dict[int, tuple[ast.Module, list, dict]] = {}
#: what an ``except`` must name to catch a failed import / a name missing from a module
_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})
_NAME_ERRORS = frozenset({"ImportError", "Exception", "BaseException"})


def _is_type_checking(test: ast.expr) -> bool:
    return dotted(test).split(".")[-1] == "TYPE_CHECKING"


def caught(h: ast.ExceptHandler) -> frozenset[str] | None:
    """The exception classes an ``except`` names, by their last dotted part (None: a bare
    ``except:``, which catches everything)."""
    if h.type is None:
        return None
    kinds = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
    return frozenset(dotted(e).split(".")[-1] for e in kinds)


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
