"""No module imports another module's private name: what a module shares it names in public.

Read with ``ast`` as in :mod:`tests.unit.test_structure` (lazy imports count; nothing is
imported). A private name (``_dists``) is free to change with its module; a caller that
imports it ties the two together behind that promise.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "harness"


def _private_imports(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("harness"):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    out.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {alias.name}")
    return out


def test_no_private_name_is_imported_across_modules() -> None:
    found = [hit for path in sorted(PACKAGE.rglob("*.py")) for hit in _private_imports(path)]
    assert found == []
