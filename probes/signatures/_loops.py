"""The names a ``setattr(self, name, ...)`` loop makes when it loops over literal strings.

transformers 5's ``TrainingArguments.__post_init__`` runs ``for f in self._VALID_DICT_FIELDS:
setattr(self, f, ...)``: the instance gains no name beyond that list, so the class stays closed
(its members all seen) rather than open to any name.
"""

from __future__ import annotations

import ast

from probes._walk import walk


def looped_literals(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, cls: ast.ClassDef | None
) -> dict[str, list[str]]:
    """Loop variables bound only by ``for x in <strings>``: a literal list/tuple/set of
    strings, or the class body's own (``self.NAMES`` / ``cls.NAMES``) -> those strings."""
    consts: dict[str, list[str]] = {}
    for st in cls.body if cls is not None else ():
        target = st.targets[0] if isinstance(st, ast.Assign) and len(st.targets) == 1 else None
        target = st.target if isinstance(st, ast.AnnAssign) else target
        got = _strings(getattr(st, "value", None))
        if isinstance(target, ast.Name) and got is not None:
            consts[target.id] = got
    stores: dict[str, int] = {}
    for n in walk(fn):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            stores[n.id] = stores.get(n.id, 0) + 1
    out: dict[str, list[str]] = {}
    for n in walk(fn):
        if not (isinstance(n, (ast.For, ast.AsyncFor)) and isinstance(n.target, ast.Name)):
            continue
        it = n.iter
        got = _strings(it)
        if (
            got is None
            and isinstance(it, ast.Attribute)
            and isinstance(it.value, ast.Name)
            and (it.value.id in ("self", "cls") or (cls is not None and it.value.id == cls.name))
        ):
            got = consts.get(it.attr)
        if got is not None and stores.get(n.target.id) == 1:
            out[n.target.id] = got
    return out


def _strings(node: ast.AST | None) -> list[str] | None:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts
    ):
        return [e.value for e in node.elts]  # type: ignore[attr-defined]
    return None
