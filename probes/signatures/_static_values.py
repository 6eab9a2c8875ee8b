"""Values a module's top level binds to literals, read from source: what a module
``__getattr__`` compares a name with (``__former_attrs__``, ``submodules``, pydantic's
``MOVED_IN_V2``), so :mod:`._getattr_verdict` can evaluate it for one concrete name.

Only what the source pins down is known: literals, f-strings and ``+`` of known strings,
comprehensions over known collections, ``.update``/``.add``/``[k] = v`` at module level, the
branch of an ``if`` that is decided (the platform, a name bound to a constant). A name also
bound, mutated or handed to a call anywhere we do not follow (a loop, a function body, a
``global``) is unknown, and so is every value nobody can compute here (:data:`UNKNOWN`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from probes._walk import walk
from probes.signatures._syntax import dotted, resolve_relative


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()
#: methods that change a collection in place: a name they are called on is no longer a literal
MUTATORS = frozenset(
    {"update", "add", "append", "extend", "insert", "pop", "popitem", "remove", "discard"}
    | {"clear", "setdefault", "__setitem__", "__delitem__", "sort", "reverse", "difference_update"}
    | {"intersection_update", "symmetric_difference_update"}
)


@dataclass(frozen=True)
class Ref:
    """A name a module imports: ``module``'s ``attr`` (``attr`` None: the module itself)."""

    module: str
    attr: str | None


@dataclass(frozen=True)
class Fn:
    """A function, where it is defined (its globals), and the closure it was made with."""

    node: ast.FunctionDef
    home: str  # the module whose globals it reads
    closure: tuple = ()  # (name, value) pairs

    def cells(self) -> dict:
        return dict(self.closure)


@dataclass(frozen=True)
class ModuleObj:
    """``sys.modules[name]``: a module, by name."""

    name: str


@dataclass(frozen=True)
class Globals:
    """``globals()`` / ``sys.modules[name].__dict__``: a module's namespace."""

    name: str


@dataclass
class Scope:
    """Where names are looked up: locals, then the closure, then the module's top level."""

    module: str
    is_package: bool
    top: dict
    local: dict = field(default_factory=dict)
    cells: dict = field(default_factory=dict)
    risky: int = 0  # operations seen whose exception we cannot rule out
    #: ``(module, name) -> bool | None``: is the name in that module's namespace
    member: Any = None
    #: ``Ref -> value``: an imported name, followed to what its module binds it to
    resolve: Any = None

    def lookup(self, name: str) -> Any:
        for d in (self.local, self.cells, self.top):
            if name in d:
                return d[name]
        if name in ("__name__", "__package__"):
            pkg = self.module if self.is_package else self.module.rpartition(".")[0]
            return self.module if name == "__name__" else pkg
        return UNKNOWN


def known(v: Any) -> bool:
    return v is not UNKNOWN


def contains(coll: Any, item: Any, member: Any = None) -> bool | None:
    """``item in coll``; None when it cannot be said (``member``: a module's namespace test)."""
    if not known(item) or not known(coll):
        return None
    if isinstance(coll, Globals):
        return member(coll.name, item) if member is not None and isinstance(item, str) else None
    if isinstance(coll, str):
        return item in coll if isinstance(item, str) else None
    if isinstance(coll, (tuple, frozenset, dict)):
        keys = coll.keys() if isinstance(coll, dict) else coll
        try:
            if item in keys:
                return True
        except TypeError:
            return None
        return None if any(k is UNKNOWN for k in keys) else False
    return None


def evaluate(e: ast.expr | None, sc: Scope) -> Any:
    """The value of ``e`` in ``sc``, or :data:`UNKNOWN`; counts in ``sc.risky`` what may raise."""
    if e is None:
        return None
    if isinstance(e, ast.Constant):
        return e.value
    if isinstance(e, ast.Name):
        if e.id == "__builtins__":
            return UNKNOWN
        got = sc.lookup(e.id)
        if isinstance(got, Ref) and got.attr is not None and sc.resolve is not None:
            return sc.resolve(got)
        return got
    if isinstance(e, (ast.Tuple, ast.List)):
        if any(isinstance(x, ast.Starred) for x in e.elts):
            return UNKNOWN
        return tuple(evaluate(x, sc) for x in e.elts)
    if isinstance(e, ast.Set):
        return frozen(tuple(evaluate(x, sc) for x in e.elts))
    if isinstance(e, ast.Dict):
        if any(k is None for k in e.keys):
            return UNKNOWN  # {**other}
        return _dict(
            [(evaluate(k, sc), evaluate(v, sc)) for k, v in zip(e.keys, e.values, strict=True)]
        )
    if isinstance(e, ast.JoinedStr):
        parts = [
            evaluate(v.value if isinstance(v, ast.FormattedValue) else v, sc) for v in e.values
        ]
        fmt = [v for v in e.values if isinstance(v, ast.FormattedValue)]
        if any(f.conversion not in (-1, None) or f.format_spec for f in fmt):
            return UNKNOWN
        return "".join(parts) if all(isinstance(p, str) for p in parts) else UNKNOWN
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add):
        a, b = evaluate(e.left, sc), evaluate(e.right, sc)
        if (isinstance(a, str) and isinstance(b, str)) or (
            isinstance(a, tuple) and isinstance(b, tuple)
        ):
            return a + b
        return UNKNOWN
    if isinstance(e, ast.BoolOp):
        vals = [truth(v, sc) for v in e.values]
        if isinstance(e.op, ast.And):
            return False if False in vals else (True if None not in vals else UNKNOWN)
        return True if True in vals else (False if None not in vals else UNKNOWN)
    if isinstance(e, (ast.Compare, ast.UnaryOp)):
        got = truth(e, sc)
        return UNKNOWN if got is None else got
    if isinstance(e, ast.Subscript):
        return _subscript(e, sc)
    if isinstance(e, ast.Attribute):
        base = evaluate(e.value, sc)
        if isinstance(base, ModuleObj) and e.attr == "__dict__":
            return Globals(base.name)
        if isinstance(base, Ref):
            return Ref(f"{base.module}.{base.attr}" if base.attr else base.module, e.attr)
        sc.risky += 1
        return UNKNOWN
    if isinstance(e, ast.Call):
        return _call(e, sc)
    if isinstance(e, (ast.DictComp, ast.SetComp, ast.ListComp)):
        return _comprehension(e, sc)
    sc.risky += 1
    return UNKNOWN


def truth(e: ast.expr, sc: Scope, member: Any = None) -> bool | None:
    """Whether test ``e`` holds; None when it cannot be said."""
    member = member or sc.member
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
        got = truth(e.operand, sc, member)
        return None if got is None else not got
    if isinstance(e, ast.BoolOp):
        vals = [truth(v, sc, member) for v in e.values]
        if isinstance(e.op, ast.And):
            return False if False in vals else (True if None not in vals else None)
        return True if True in vals else (False if None not in vals else None)
    if isinstance(e, ast.Compare) and len(e.ops) == 1:
        op, a, b = e.ops[0], evaluate(e.left, sc), evaluate(e.comparators[0], sc)
        if isinstance(op, (ast.In, ast.NotIn)):
            got = contains(b, a, member)
            return None if got is None else got == isinstance(op, ast.In)
        if not (known(a) and known(b)) or not all(_plain(v) for v in (a, b)):
            return None
        if isinstance(op, (ast.Eq, ast.NotEq)):
            return (a == b) == isinstance(op, ast.Eq)
        if isinstance(op, (ast.Is, ast.IsNot)) and (a is None or b is None):
            return (a is b) == isinstance(op, ast.Is)
        return None
    v = evaluate(e, sc)
    if not known(v) or not _plain(v):
        return None
    return bool(v)


def _plain(v: Any) -> bool:
    return v is None or isinstance(v, (str, int, float, bytes, tuple, frozenset, dict))


def frozen(items: tuple) -> Any:
    try:
        return frozenset(items)
    except TypeError:
        return UNKNOWN


def _dict(pairs: list) -> Any:
    out: dict = {}
    for k, v in pairs:
        try:
            out[k] = v
        except TypeError:
            return UNKNOWN
    return out


def _subscript(e: ast.Subscript, sc: Scope) -> Any:
    base, key = evaluate(e.value, sc), evaluate(e.slice, sc)
    if dotted(e.value) == "sys.modules" and isinstance(key, str):
        return ModuleObj(key)
    if isinstance(base, (dict, Globals)) and known(key):
        got = contains(base, key, sc.member)
        if got:
            return base[key] if isinstance(base, dict) else UNKNOWN
        if got is False:
            raise KeyLookupError(e.lineno)
    sc.risky += 1
    return UNKNOWN


class KeyLookupError(Exception):
    """A subscript of a known dict by a key it does not hold: ``KeyError`` at ``line``."""

    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


def _call(e: ast.Call, sc: Scope) -> Any:
    if isinstance(e.func, ast.Name) and e.func.id == "globals" and not e.args:
        return Globals(sc.module)
    if (
        isinstance(e.func, ast.Name)
        and e.func.id in ("tuple", "list", "set", "frozenset")
        and len(e.args) == 1
        and not e.keywords
    ):
        got = evaluate(e.args[0], sc)
        if isinstance(got, dict):
            got = tuple(got)
        if isinstance(got, (tuple, frozenset)):
            return frozen(tuple(got)) if e.func.id in ("set", "frozenset") else tuple(got)
    if isinstance(e.func, ast.Attribute) and not e.keywords:
        base = evaluate(e.func.value, sc)
        args = [evaluate(a, sc) for a in e.args]
        attr = e.func.attr
        if isinstance(base, dict) and not args and attr in ("keys", "values", "items"):
            return (
                tuple(base)
                if attr == "keys"
                else tuple(base.values() if attr == "values" else ((k, v) for k, v in base.items()))
            )
        if isinstance(base, str) and attr in ("startswith", "endswith") and len(args) == 1:
            arg = args[0]
            if isinstance(arg, str) or (
                isinstance(arg, tuple) and all(isinstance(a, str) for a in arg)
            ):
                return getattr(base, attr)(arg)
    sc.risky += 1
    return UNKNOWN


def _comprehension(e: ast.DictComp | ast.SetComp | ast.ListComp, sc: Scope) -> Any:
    pairs: list = []
    budget = [2000]

    def run(gens: list[ast.comprehension]) -> bool:
        if not gens:
            if isinstance(e, ast.DictComp):
                pairs.append((evaluate(e.key, sc), evaluate(e.value, sc)))
            else:
                pairs.append((evaluate(e.elt, sc), None))
            return True
        g = gens[0]
        items = evaluate(g.iter, sc)
        if isinstance(items, dict):
            items = tuple(items)
        if not isinstance(items, (tuple, frozenset)) or g.is_async:
            return False
        for item in items:
            budget[0] -= 1
            if budget[0] < 0 or not bind(g.target, item, sc.local):
                return False
            keep = [truth(c, sc) for c in g.ifs]
            if None in keep:
                return False
            if all(keep) and not run(gens[1:]):
                return False
        return True

    saved = dict(sc.local)
    try:
        ok = run(list(e.generators))
    finally:
        sc.local.clear()
        sc.local.update(saved)
    if not ok:
        return UNKNOWN
    if isinstance(e, ast.DictComp):
        return _dict(pairs)
    keys = tuple(k for k, _ in pairs)
    return frozen(keys) if isinstance(e, ast.SetComp) else keys


def bind(target: ast.expr, value: Any, into: dict) -> bool:
    """Assign ``value`` to ``target`` (a name or a tuple of names) in ``into``; False when
    the target is not a plain name pattern (its names are then unknown)."""
    if isinstance(target, ast.Name):
        into[target.id] = value
        return True
    if isinstance(target, (ast.Tuple, ast.List)):
        if isinstance(value, tuple) and len(value) == len(target.elts):
            return all(bind(t, v, into) for t, v in zip(target.elts, value, strict=True))
        for n in walk(target):
            if isinstance(n, ast.Name):
                into[n.id] = UNKNOWN
        return all(isinstance(t, (ast.Name, ast.Tuple, ast.List)) for t in target.elts)
    return False


def bind_import(st: ast.Import | ast.ImportFrom, module: str, is_package: bool, into: dict) -> None:
    if isinstance(st, ast.Import):
        for a in st.names:
            into[a.asname or a.name.split(".")[0]] = Ref(
                a.name if a.asname else a.name.split(".")[0], None
            )
        return
    mod = resolve_relative(module, is_package, st.level, st.module)
    for a in st.names:
        if a.name != "*":
            into[a.asname or a.name] = Ref(mod, a.name)
