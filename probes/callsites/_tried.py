"""The binding an import inside ``try:`` makes when it succeeds on the release installed.

imbalanced-learn's ``base.py`` runs ``try: from sklearn.base import OneToOneFeatureMixin`` /
``except ImportError: from sklearn.base import _OneToOneFeatureMixin as OneToOneFeatureMixin``.
The module summary keeps the last binding of a name (the handler's); but where the ``try``'s
import resolves on the import path, the handler never runs, and the name is what the ``try``
imported. The receiver inference reads a caller class's bases through this, so a callee base
imported that way is known as the callee's class and not taken for an unreadable one.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from probes.signatures._syntax import resolve_relative

if TYPE_CHECKING:
    from probes.signatures._astindex import Index

_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception"})


def tried_binding(index: Index, module: str, name: str) -> str:
    """``pkg.mod.Name`` a top-level ``try:`` of ``module`` binds ``name`` to by a
    ``from X import Y`` that resolves here (its handlers catching ImportError); "" if none."""
    mod = index.module(module)
    if mod is None or not any(name in ln for ln in mod.lines if "import" in ln):
        return ""
    for st in mod.tree.body:
        if not isinstance(st, ast.Try) or not any(_catches(h) for h in st.handlers):
            continue
        for imp in st.body:
            if not isinstance(imp, ast.ImportFrom):
                continue
            src = resolve_relative(module, mod.loc.is_package, imp.level, imp.module)
            for a in imp.names:
                if (a.asname or a.name) != name:
                    continue
                got = index.resolve(src, a.name)
                if got is not None and got.node is not None:
                    return f"{got.module.name}.{got.name}"
    return ""


def _catches(h: ast.ExceptHandler) -> bool:
    if h.type is None:
        return True
    kinds = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
    return any(isinstance(k, ast.Name) and k.id in _IMPORT_ERRORS for k in kinds)
