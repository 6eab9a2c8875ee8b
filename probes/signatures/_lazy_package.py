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
) -> tuple[dict[str, tuple[str, str, int]], bool, list[str]]:
    """transformers 4's lazy packages: ``_import_structure = {"models.bert": ["BertModel"]}``
    handed to the class put in ``sys.modules[__name__]``, which serves each listed name from its
    module. ``({name: (module, name, line)}, unsure)``: the names the literal parts list
    (the dict, ``[k].extend([...])``, ``[k].append("...")``, ``[k] = [...]``), and whether
    anything else adds to it: then any name may be served; and the modules whose every public
    name it lists (``[k] = [n for n in dir(m) if ...]``, ``m`` a module imported here: what a
    star import of ``m`` binds). A table that only flows into the one handed over
    (``structure[k].update(_import_structure)``) or is rebuilt with its keys kept
    (``T = {k: set(v) for k, v in T.items()}``) is read all the same; a dict of objects handed
    over beside it (``extra_objects={"__version__": __version__}``) serves its keys."""
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
        return {}, False, []
    given = [*call.args, *(k.value for k in call.keywords)]
    dicts = {
        t.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Dict)
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    table = next((a.id for a in given if isinstance(a, ast.Name) and a.id in dicts), None)
    handed = {a.id for a in given if isinstance(a, ast.Name)}
    if table is None:  # ``handed[k].update(T)``: the literal table flows into the one handed
        table = next((m for m in _merged_into(tree, handed) if m in dicts), None)
    out: dict[str, tuple[str, str, int]] = {}
    unsure = False
    stars: list[str] = []
    modules = _imported_modules(tree, package)

    def add(key: ast.expr | None, names: ast.expr, line: int) -> None:
        nonlocal unsure
        sub = key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None
        listed = _dir_of(names)
        if listed is not None and listed in modules:
            stars.append(modules[listed])
            return
        items = names.elts if isinstance(names, (ast.List, ast.Tuple)) else [names]
        texts = [e.value for e in items if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        if sub is None or len(texts) != len(items):
            unsure = True
            return
        for t in texts:
            out.setdefault(t, (f"{package}.{sub}", t, line))

    for a in given:
        if isinstance(a, ast.Dict) and all(
            isinstance(v, (ast.List, ast.Tuple, ast.Set)) for v in a.values
        ):
            for k, v in zip(a.keys, a.values, strict=True):
                add(k, v, a.lineno)
        elif isinstance(a, ast.Dict):  # objects handed over by name: each key is served
            for k in a.keys:
                if isinstance(k, ast.Constant) and isinstance(k.value, str):
                    out.setdefault(k.value, (package, k.value, a.lineno))
                else:
                    unsure = True
    if table is None:
        return out, unsure, stars
    for n in ast.walk(tree):  # one walk: the statements that write the table
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Name) and t.id == table and _keeps_keys(n.value, table):
                    continue
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
        elif (
            isinstance(n, ast.Call)
            and dotted(n.func) == "setattr"
            and n.args
            and isinstance(n.args[0], ast.Subscript)
            and dotted(n.args[0].value) == "sys.modules"
        ):  # ``setattr(sys.modules[__name__], name, value)``: names put on it
            got = _set_by_calls(tree, n, package)
            if got is None:
                unsure = True
            for name in got or ():  # module "": put there at run time, value unknown
                out.setdefault(name, ("", name, n.lineno))
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            owner = n.func.value
            if isinstance(owner, ast.Subscript) and dotted(owner.value) == table:
                if n.func.attr in ("extend", "append") and len(n.args) == 1:
                    add(owner.slice, n.args[0], n.lineno)
                else:
                    unsure = True
            elif dotted(owner) == table and n.func.attr in ("update", "setdefault", "__setitem__"):
                unsure = True
    return out, unsure, stars


def _set_by_calls(tree: ast.Module, call: ast.Call, package: str) -> set[str] | None:
    """The names a ``setattr(sys.modules[__name__], ...)`` inside ``def f(...)`` may put on
    the module, when every call of ``f`` passes only strings (``f(f"{__name__}.x", ".y")``):
    each dotted part of them, a superset (transformers 5's ``_create_tokenization_alias``);
    none when ``f`` is never called; None (unsure) for a setattr anywhere else."""
    fn = next(
        (
            d
            for d in ast.walk(tree)
            if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))
            and any(c is call for c in ast.walk(d))
        ),
        None,
    )
    if fn is None:
        return None
    names: set[str] = set()
    for c in ast.walk(tree):
        if not (isinstance(c, ast.Call) and dotted(c.func) == fn.name):
            continue
        for a in [*c.args, *(k.value for k in c.keywords)]:
            parts = a.values if isinstance(a, ast.JoinedStr) else [a]
            for p in parts:
                if isinstance(p, ast.FormattedValue) and dotted(p.value) == "__name__":
                    continue
                if not (isinstance(p, ast.Constant) and isinstance(p.value, str)):
                    return None
                names.update(x for x in p.value.split(".") if x.isidentifier())
    return names - {package}


def _merged_into(tree: ast.Module, handed: set[str]) -> list[str]:
    """``H[k].update(T)`` / ``H.update(T)`` with ``H`` a name handed over: each ``T``."""
    out = []
    for n in ast.walk(tree):
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr == "update"
            and len(n.args) == 1
            and isinstance(n.args[0], ast.Name)
        ):
            owner = n.func.value
            base = owner.value if isinstance(owner, ast.Subscript) else owner
            if isinstance(base, ast.Name) and base.id in handed:
                out.append(n.args[0].id)
    return out


def _keeps_keys(value: ast.expr | None, table: str) -> bool:
    """``T = {k: set(v) for k, v in T.items()}``: the same names, another container."""
    if not (isinstance(value, ast.DictComp) and len(value.generators) == 1):
        return False
    g = value.generators[0]
    it = g.iter
    return (
        not g.ifs
        and isinstance(it, ast.Call)
        and dotted(it.func) == f"{table}.items"
        and isinstance(g.target, ast.Tuple)
        and len(g.target.elts) == 2
        and isinstance(value.key, ast.Name)
        and dotted(g.target.elts[0]) == value.key.id
    )


def _dir_of(names: ast.expr) -> str | None:
    """``[n for n in dir(m) ...]``: ``m``'s name."""
    if not (isinstance(names, ast.ListComp) and len(names.generators) == 1):
        return None
    it = names.generators[0].iter
    if isinstance(it, ast.Call) and dotted(it.func) == "dir" and len(it.args) == 1:
        return dotted(it.args[0]) or None
    return None


def _imported_modules(tree: ast.Module, package: str) -> dict[str, str]:
    """The local names of modules this package imports (``from .utils import dummy_objects``,
    ``import a.b as m``), to the modules they are: a guess for ``from x import y`` (``y`` may
    be a name, not a module; then no star of it is read)."""
    out: dict[str, str] = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom):
            base = package.split(".")
            base = base[: len(base) - (n.level - 1)] if n.level > 1 else base
            mod = ".".join([*base, *([n.module] if n.module else [])]) if n.level else n.module
            for a in n.names:
                out[a.asname or a.name] = f"{mod}.{a.name}"
        elif isinstance(n, ast.Import):
            for a in n.names:
                if a.asname:
                    out[a.asname] = a.name
    return out
