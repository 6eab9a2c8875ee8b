"""transformers' lazy packages, read from their ``__init__``: what they serve at run time.

A model package's ``__init__`` lists some modules under ``if TYPE_CHECKING`` and, at run time,
puts ``_LazyModule(__name__, _file, define_import_structure(_file), ...)`` into
``sys.modules[__name__]``: it serves what every module beside it exports, and its class's
``__getattr__`` serves old names (``XImageProcessorFast``) by suffix rules
(:mod:`._suffix_fallback`). :mod:`._astindex` asks these when it summarises and resolves.
"""

from __future__ import annotations

import ast
import os
from typing import Any, Protocol

from probes.signatures._suffix_fallback import SuffixRule, suffix_rules
from probes.signatures._syntax import dotted


class Resolver(Protocol):
    """What :func:`getattr_rules` asks of ``_astindex.Index`` (not imported: a cycle)."""

    def resolve(self, module: str, name: str) -> Any: ...

    def rel(self, path: str) -> str: ...


def import_structure_modules(tree: ast.Module, init_file: str) -> list[str]:
    """transformers' lazy packages: ``sys.modules[__name__] = _LazyModule(__name__, _file,
    define_import_structure(_file), ...)`` serves at run time what every module beside the
    ``__init__`` exports (its ``__all__``; files named ``convert_*``/``modular_*`` left out:
    ``create_import_structure_from_path``, ``utils/import_utils.py:3047-3060`` in 5.17.0),
    whatever its ``if TYPE_CHECKING`` block lists. Those modules, when such a call runs at
    module level; else none."""
    called = any(
        isinstance(n, ast.Call) and dotted(n.func).split(".")[-1] == "define_import_structure"
        for st in tree.body
        if not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        for n in ast.walk(st)
    )
    folder = os.path.dirname(init_file)
    if not called or not os.path.isdir(folder):
        return []
    return sorted(
        f[:-3]
        for f in os.listdir(folder)
        if f.endswith(".py")
        and f != "__init__.py"
        and not f.startswith(("convert_", "modular_"))
        and f[:-3].isidentifier()
    )


def sys_modules_class(tree: ast.Module) -> str | None:
    """``sys.modules[__name__] = C(...)`` at module level: ``C`` as written."""
    for st in tree.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for n in ast.walk(st):
            if (
                isinstance(n, ast.Assign)
                and len(n.targets) == 1
                and isinstance(n.targets[0], ast.Subscript)
                and dotted(n.targets[0].value) == "sys.modules"
                and isinstance(n.targets[0].slice, ast.Name)
                and n.targets[0].slice.id == "__name__"
                and isinstance(n.value, ast.Call)
            ):
                return dotted(n.value.func) or None
    return None


def getattr_rules(index: Resolver, module: str, cls: str) -> tuple[list[SuffixRule], str]:
    """The suffix rules of class ``cls``'s ``__getattr__`` (as ``module`` names it), and
    the file it is in; none when it does not resolve to a class there."""
    head, _, rest = cls.partition(".")
    got = index.resolve(module, head)
    if got is None or rest or not isinstance(got.node, ast.ClassDef):
        return [], ""
    for st in got.node.body:
        if isinstance(st, ast.FunctionDef) and st.name == "__getattr__":
            return suffix_rules(st), index.rel(got.module.loc.file)
    return [], ""


def structure_exports(
    tree: ast.Module, package: str
) -> tuple[dict[str, tuple[str, str, int]], bool]:
    """transformers 4's lazy packages: ``_import_structure = {"models.bert": ["BertModel"]}``
    handed to the class put in ``sys.modules[__name__]``, which serves each listed name from its
    module. ``({name: (module, name, line)}, unsure)``: the names the literal parts list
    (the dict, ``[k].extend([...])``, ``[k].append("...")``, ``[k] = [...]``), and whether
    anything else adds to it (``[k] = [n for n in dir(m)]``): then any name may be served."""
    call = None
    for st in tree.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for n in ast.walk(st):
            if (
                isinstance(n, ast.Assign)
                and isinstance(n.targets[0], ast.Subscript)
                and dotted(n.targets[0].value) == "sys.modules"
                and isinstance(n.value, ast.Call)
            ):
                call = n.value
    if call is None:
        return {}, False
    given = [*call.args, *(k.value for k in call.keywords)]
    dicts = {
        t.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Dict)
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    table = next((a.id for a in given if isinstance(a, ast.Name) and a.id in dicts), None)
    out: dict[str, tuple[str, str, int]] = {}
    unsure = False

    def add(key: ast.expr | None, names: ast.expr, line: int) -> None:
        nonlocal unsure
        sub = key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None
        items = names.elts if isinstance(names, (ast.List, ast.Tuple)) else [names]
        texts = [e.value for e in items if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        if sub is None or len(texts) != len(items):
            unsure = True
            return
        for t in texts:
            out.setdefault(t, (f"{package}.{sub}", t, line))

    for a in given:
        if isinstance(a, ast.Dict):
            for k, v in zip(a.keys, a.values, strict=True):
                add(k, v, a.lineno)
    if table is None:
        return out, unsure
    for n in ast.walk(tree):  # one walk: the statements that write the table
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Name) and t.id == table:
                    pairs = (
                        zip(n.value.keys, n.value.values, strict=True)
                        if isinstance(n.value, ast.Dict)
                        else [(None, n.value)]
                    )
                    for k, v in pairs:
                        add(k, v, n.lineno)
                elif isinstance(t, ast.Subscript) and dotted(t.value) == table:
                    add(t.slice, n.value, n.lineno)
        elif isinstance(n, ast.AugAssign) and table in dotted(getattr(n.target, "value", n.target)):
            unsure = True
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            owner = n.func.value
            if isinstance(owner, ast.Subscript) and dotted(owner.value) == table:
                if n.func.attr in ("extend", "append") and len(n.args) == 1:
                    add(owner.slice, n.args[0], n.lineno)
                else:
                    unsure = True
            elif dotted(owner) == table and n.func.attr in ("update", "setdefault", "__setitem__"):
                unsure = True
    return out, unsure
