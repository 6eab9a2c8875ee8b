"""The keys of a class's dict views, read from its source: what ``asdict(obj)``,
``obj.to_dict()``, ``vars(obj)`` / ``obj.__dict__`` hold.

A dataclass's ``asdict`` holds its fields (through its dataclass bases); an instance's
``__dict__`` the attributes its methods set on ``self`` (and a dataclass's fields); a
``to_dict`` holds what its return builds from one of those -- ``asdict(self)``,
``copy.deepcopy(self.__dict__)``, ``{f.name: ... for f in fields(self)}`` -- plus the literal
keys it sets and less those it pops. Each view says whether its keys are all there is
(``closed``): a base we cannot read, ``setattr(self, name, ...)`` with a computed name, or a
``to_dict`` that builds its dict otherwise leaves it open, and an open view proves no key gone.
"""

from __future__ import annotations

import ast
from typing import Any

from probes._walk import walk
from probes.signatures._syntax import ModuleSummary, dotted

#: the views a caller can read a key from, by the name the caller's code uses
VIEWS = ("asdict", "to_dict", "model_dump", "dict", "__dict__", "vars")


def class_views(lookup: Any, mod: ModuleSummary, cls: ast.ClassDef) -> dict[str, Any]:
    """``{view: {"keys": {key: "file:line"}, "closed": bool, "how": str}}`` for the views the
    class has (a dataclass: ``asdict``; every class: ``__dict__``; a ``to_dict`` we can read)."""
    chain = _mro(lookup, mod, cls)
    readable = all(c is not None for c in chain)
    classes = [c for c in chain if c is not None]
    fields: dict[str, str] = {}
    dataclass = lookup.classes.flavour(mod, cls) is not None
    for m, c in reversed(classes):
        if lookup.classes.flavour(m, c) is not None:
            for st in c.body:
                if (
                    isinstance(st, ast.AnnAssign)
                    and isinstance(st.target, ast.Name)
                    and "ClassVar" not in dotted(_head(st.annotation))
                    and "InitVar" not in dotted(_head(st.annotation))
                ):
                    fields.setdefault(st.target.id, f"{lookup.index.rel(m.loc.file)}:{st.lineno}")
    attrs, open_ = dict(fields), not readable
    for m, c in classes:
        for fn in c.body:
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for n in walk(fn):
                got = _self_store(n)
                if got is None:
                    continue
                if got == "":
                    open_ = True
                else:
                    attrs.setdefault(got, f"{lookup.index.rel(m.loc.file)}:{n.lineno}")
    out: dict[str, Any] = {
        "__dict__": {"keys": attrs, "closed": not open_, "how": "the attributes set on self"}
    }
    out["vars"] = out["__dict__"]
    if dataclass:
        out["asdict"] = {"keys": fields, "closed": readable, "how": "the dataclass's fields"}
    for name in ("to_dict", "model_dump", "dict"):
        for m, c in classes:
            fn = next(
                (s for s in c.body if isinstance(s, ast.FunctionDef) and s.name == name), None
            )
            if fn is not None:
                got = _built(fn, out, f"{lookup.index.rel(m.loc.file)}:{fn.lineno}")
                if got is not None:
                    out[name] = got
                break
    return out


def _head(ann: ast.expr) -> ast.expr:
    return ann.value if isinstance(ann, ast.Subscript) else ann


def _mro(lookup: Any, mod: ModuleSummary, cls: ast.ClassDef, depth: int = 0) -> list[Any]:
    """The class and its bases, depth first; None where a base cannot be read."""
    from probes.signatures._class_flavour import IGNORED_BASES

    out: list[Any] = [(mod, cls)]
    if depth > 12:
        return [*out, None]
    for b in cls.bases:
        full = lookup.index.resolve_dotted(mod.name, dotted(b))
        if full in IGNORED_BASES or full.startswith(("typing.", "abc.")):
            continue
        base = lookup.classes.base_class(mod, b)
        out += [None] if base is None else _mro(lookup, base[0], base[1], depth + 1)
    return out


def _self_store(n: ast.AST) -> str | None:
    """The attribute a node sets on ``self`` ("" when it sets ones we cannot name)."""
    if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = n.targets if isinstance(n, ast.Assign) else [n.target]
        for t in targets:
            for e in t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]:
                if isinstance(e, ast.Attribute) and dotted(e.value) == "self":
                    return "" if e.attr == "__dict__" else e.attr
                if isinstance(e, ast.Subscript) and dotted(e.value) == "self.__dict__":
                    key = e.slice
                    ok = isinstance(key, ast.Constant) and isinstance(key.value, str)
                    return key.value if ok else ""  # type: ignore[union-attr]
        return None
    if isinstance(n, ast.Call):
        f = dotted(n.func)
        if f in ("setattr", "object.__setattr__") and n.args and dotted(n.args[0]) == "self":
            key = n.args[1] if len(n.args) > 1 else None
            ok = isinstance(key, ast.Constant) and isinstance(key.value, str)
            return key.value if ok else ""  # type: ignore[union-attr]
        if f == "self.__dict__.update":
            return ""
    return None


def _source(node: ast.expr, views: dict[str, Any]) -> dict[str, Any] | None:
    """The view an expression copies from ``self`` (``asdict(self)``, ``self.__dict__``...)."""
    while isinstance(node, ast.Call) and dotted(node.func).split(".")[-1] in (
        "deepcopy",
        "copy",
        "dict",
    ):
        if len(node.args) == 1 and not node.keywords:
            node = node.args[0]
        elif not node.args and isinstance(node.func, ast.Attribute):  # self.__dict__.copy()
            node = node.func.value
        else:
            return None
    if isinstance(node, ast.Dict) and node.keys == [None]:  # {**self.__dict__}
        return _source(node.values[0], views)
    text = dotted(node) if isinstance(node, ast.Attribute) else ""
    if text == "self.__dict__":
        return views["__dict__"]
    if isinstance(node, ast.Call) and len(node.args) == 1 and dotted(node.args[0]) == "self":
        name = dotted(node.func).split(".")[-1]
        if name == "asdict":
            return views.get("asdict")
        if name == "vars":
            return views["__dict__"]
    if isinstance(node, ast.DictComp) and len(node.generators) == 1:
        gen = node.generators[0]
        it = gen.iter
        if (
            isinstance(it, ast.Call)
            and dotted(it.func).split(".")[-1] == "fields"
            and [dotted(a) for a in it.args] == ["self"]
            and dotted(node.key) == f"{dotted(gen.target)}.name"
            and not gen.ifs
        ):
            return views.get("asdict")
    return None


def _built(fn: ast.FunctionDef, views: dict[str, Any], where: str) -> dict[str, Any] | None:
    """The keys a ``to_dict`` returns: one view of self, plus literal keys set, less popped."""
    rets = [n for n in walk(fn) if isinstance(n, ast.Return)]
    if len(rets) != 1 or rets[0].value is None:
        return None
    value = rets[0].value
    got = _source(value, views)
    if got is not None:
        return {**got, "how": f"{got['how']}, as {fn.name}() at {where} returns them"}
    if not isinstance(value, ast.Name):
        return None
    name = value.id
    keys: dict[str, str] | None = None
    closed, how = True, ""
    for st in fn.body:
        if isinstance(st, ast.Assign) and [getattr(t, "id", "") for t in st.targets] == [name]:
            base = _source(st.value, views)
            if base is None or keys is not None:
                return None
            keys, closed, how = dict(base["keys"]), base["closed"], base["how"]
            continue
        if keys is None:
            continue
        for n in walk(st):
            if isinstance(n, ast.Name) and n.id == name and n is not value:
                closed = closed and _literal_write(st, name, keys, where)
                break
    if keys is None:
        return None
    return {"keys": keys, "closed": closed, "how": f"{how}, as {fn.name}() at {where} builds them"}


def _literal_write(st: ast.stmt, name: str, keys: dict[str, str], where: str) -> bool:
    """Apply ``d["k"] = v`` / ``del d["k"]`` / ``d.pop("k"...)`` to ``keys``; False when the
    statement touches the dict otherwise (the view is open then)."""
    if isinstance(st, (ast.Assign, ast.Delete)):
        targets = st.targets
        if len(targets) != 1 or not isinstance(targets[0], ast.Subscript):
            return isinstance(st, ast.Assign) and name not in {
                getattr(t, "id", "") for t in targets
            }
        t = targets[0]
        key = t.slice
        if dotted(t.value) != name or not (
            isinstance(key, ast.Constant) and isinstance(key.value, str)
        ):
            return False
        if isinstance(st, ast.Delete):
            keys.pop(key.value, None)
        else:
            keys.setdefault(key.value, where)
        return True
    if (
        isinstance(st, ast.Expr)
        and isinstance(st.value, ast.Call)
        and dotted(st.value.func) == f"{name}.pop"
        and st.value.args
        and isinstance(st.value.args[0], ast.Constant)
    ):
        keys.pop(str(st.value.args[0].value), None)
        return True
    return False
