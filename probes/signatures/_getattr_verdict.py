"""What a module's ``__getattr__`` (PEP 562) does with one concrete name, evaluated from its
source: "served" (every way through returns), "gone" (every way through raises) or "unknown".

Python asks a module's ``__getattr__`` only for a name its namespace lacks, so a name that no
source defines is missing unless the function serves it. Its body is run here for that name,
on the values :mod:`._static_values` reads from the module's top level: ``name == "x"``,
``name in TABLE`` (a literal, a comprehension over one, a dict ``.update``d at the top level),
``startswith``, ``try: v = TABLE[name] except KeyError:``, ``globals()[name]`` and
``sys.modules[module].__dict__`` (the module's own names), early ``return`` / ``raise``; a
test we cannot decide runs both ways. The function may be made by a call
(``__getattr__ = getattr_migration(__name__)``, pydantic): the factory is followed, in its own
module, with its parameters bound to the call's arguments, and its closure kept. Anything else
(a loop, a call whose exception a ``try`` may catch, a name we cannot read) is "unknown",
never "gone": only "gone" turns an unverifiable warning into an error.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from probes._walk import walk
from probes.signatures._module_values import module_values
from probes.signatures._static_values import (
    UNKNOWN,
    Fn,
    KeyLookupError,
    Ref,
    Scope,
    bind,
    bind_import,
    evaluate,
    truth,
)
from probes.signatures._syntax import dotted

SERVED, GONE, UNSURE = "served", "gone", "unknown"
_MAX_PATHS = 64
_NAMED = "\0named"  # a path's mark: a test chose it for the name asked
#: builtin exceptions a handler names, with the builtin classes above each (``except X``)
_ABOVE = {
    "KeyError": {"LookupError"},
    "IndexError": {"LookupError"},
    "AttributeError": set(),
    "ImportError": set(),
    "ModuleNotFoundError": {"ImportError"},
    "NameError": set(),
    "RuntimeError": set(),
    "TypeError": set(),
    "ValueError": set(),
    "LookupError": set(),
}


@dataclass(frozen=True)
class Verdict:
    word: str  # SERVED | GONE | UNSURE
    line: int = 0  # gone: the first ``raise`` that ends it
    file: str = ""  # where the function is (its module's file)
    #: gone on a branch a test chose for this very name (``if name in __former_attrs__:
    #: raise``): its authors say the namespace lacks it, whatever star imports may copy
    named: bool = False


def getattr_verdict(index: Any, mod: Any, name: str) -> Verdict:
    """What ``mod``'s ``__getattr__`` does with ``name`` (memoised on the summary)."""
    memo = mod.__dict__.setdefault("_getattr_verdicts", {})
    if name not in memo:
        memo[name] = _verdict(index, mod, name)
    return memo[name]


def _verdict(index: Any, mod: Any, name: str) -> Verdict:
    if mod.runtime_class or _replaces_module(mod.tree):
        return Verdict(UNSURE)  # the module object in sys.modules is another one
    fn = values(index, mod).get("__getattr__")
    home = index.module(fn.home) if isinstance(fn, Fn) else None
    args = fn.node.args if isinstance(fn, Fn) else None
    if home is None or args is None or len(args.posonlyargs + args.args) != 1:
        return Verdict(UNSURE)
    param = (args.posonlyargs + args.args)[0].arg
    run = _Run(index, home, fn)
    try:
        results = run.block(fn.node.body, {param: name})
    except RecursionError:
        return Verdict(UNSURE)
    words = {r[0] for r in results}
    if words == {"raise"}:
        named = all(r[3] for r in results)
        return Verdict(GONE, min(r[1] for r in results), home.loc.file, named)
    if words <= {"return", "fall"}:
        return Verdict(SERVED)
    return Verdict(UNSURE)


def values(index: Any, mod: Any) -> dict:
    """The module's top-level names bound to known values (memoised on the summary)."""
    memo = mod.__dict__.get("_static_values")
    if memo is None:
        mod.__dict__["_static_values"] = {}  # a cycle through a factory sees nothing
        try:
            memo = module_values(
                mod.tree,
                mod.name,
                mod.loc.is_package,
                getattr(index, "python", None),
                lambda c, sc: _factory(index, c, sc),
            )
        except RecursionError:
            memo = {}
        mod.__dict__["_static_values"] = memo
    return memo


def _replaces_module(tree: ast.Module) -> bool:
    """``sys.modules[...] = ...`` or ``sys.modules[__name__].__class__ = ...`` anywhere."""
    for n in walk(tree):
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                if "sys.modules" in ast.unparse(t):
                    return True
    return False


def _resolve(index: Any, v: Any) -> Any:
    """A value through the imports that name it: a ``Ref`` followed to what it binds."""
    for _ in range(8):
        if not isinstance(v, Ref) or v.attr is None:
            return v
        target = index.module(v.module)
        if target is None:
            return UNKNOWN
        v = values(index, target).get(v.attr, UNKNOWN)
    return UNKNOWN


def _factory(index: Any, c: ast.Call, sc: Scope) -> Any:
    """What a module-level call of a function this code defines returns, when it returns
    inner functions (their closures kept); UNKNOWN for any other call."""
    fn = _resolve(index, evaluate(c.func, sc))
    home = index.module(fn.home) if isinstance(fn, Fn) else None
    if home is None or any(isinstance(a, ast.Starred) for a in c.args):
        return UNKNOWN
    a = fn.node.args
    params = [p.arg for p in a.posonlyargs + a.args]
    if len(c.args) > len(params) or a.vararg or a.kwonlyargs:
        return UNKNOWN
    local: dict = {}
    for p, d in zip(params[len(params) - len(a.defaults) :], a.defaults, strict=True):
        local[p] = evaluate(d, Scope(home.name, home.loc.is_package, values(index, home)))
    local.update({p: evaluate(x, sc) for p, x in zip(params, c.args, strict=False)})
    for k in c.keywords:
        if k.arg not in params:
            return UNKNOWN
        local[k.arg] = evaluate(k.value, sc)
    if set(local) != set(params):
        return UNKNOWN
    inner = Scope(home.name, home.loc.is_package, values(index, home), local)
    try:
        for st in fn.node.body:
            if isinstance(st, (ast.Import, ast.ImportFrom)):
                bind_import(st, home.name, home.loc.is_package, local)
            elif isinstance(st, ast.FunctionDef):
                local[st.name] = Fn(st, home.name)
            elif isinstance(st, (ast.Assign, ast.AnnAssign)) and st.value is not None:
                got = evaluate(st.value, inner)
                for t in st.targets if isinstance(st, ast.Assign) else [st.target]:
                    if not bind(t, got, local):
                        return UNKNOWN
            elif isinstance(st, ast.Return):
                return _closed(evaluate(st.value, inner), tuple(local.items()))
            elif not (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant)):
                return UNKNOWN  # a branch, a loop, a call for its effect: not followed
    except KeyLookupError:
        return UNKNOWN
    return UNKNOWN


def _closed(v: Any, cells: tuple) -> Any:
    """Inner functions a factory returns, with the factory's names as their closure."""
    if isinstance(v, Fn) and not v.closure:
        return Fn(v.node, v.home, cells)
    if isinstance(v, tuple):
        return tuple(_closed(x, cells) for x in v)
    return v


class _Run:
    """One ``__getattr__`` body run for one name, every undecided way at once. A result is
    ``("return", line)``, ``("raise", line, exception)``, ``("fall", locals)`` or
    ``("unknown",)``."""

    def __init__(self, index: Any, home: Any, fn: Fn) -> None:
        self.index, self.home, self.cells = index, home, fn.cells()
        self.top = values(index, home)
        self.risky = 0

    def scope(self, local: dict) -> Scope:
        sc = Scope(self.home.name, self.home.loc.is_package, self.top, local, self.cells)
        sc.member = self.member
        sc.resolve = lambda ref: _resolve(self.index, ref)
        return sc

    def member(self, module: str, name: str) -> bool | None:
        """Is ``name`` in module ``module``'s namespace? None when it may be put there."""
        m = self.index.module(module)
        if m is None:
            return None
        if name in m.defs or name in m.imports or name in m.lazy:
            return True
        if m.star_imports or _dynamic_namespace(m.tree):
            return None
        if m.loc.is_package and name in self.index.finder.submodules(m.loc):
            return None  # imported once, a submodule is an attribute of its package
        return False

    def block(self, stmts: list[ast.stmt], local: dict) -> list[tuple]:
        states, done = [local], []
        for st in stmts:
            nxt = []
            for loc in states:
                for r in self.stmt(st, loc):
                    (nxt.append(r[1]) if r[0] == "fall" else done.append(r))
            states = nxt
            if len(states) + len(done) > _MAX_PATHS:
                return [("unknown",)]
            if not states:
                break
        return done + [("fall", loc) for loc in states]

    def _eval(self, e: ast.expr, local: dict) -> Any:
        sc = self.scope(local)
        try:
            return evaluate(e, sc)
        finally:
            self.risky += sc.risky

    def stmt(self, st: ast.stmt, local: dict) -> list[tuple]:
        local = dict(local)
        try:
            return self._stmt(st, local)
        except KeyLookupError as e:
            return [("raise", e.line, "KeyError", bool(local.get(_NAMED)))]

    def _stmt(self, st: ast.stmt, local: dict) -> list[tuple]:
        if isinstance(st, (ast.Pass, ast.Global, ast.Nonlocal)):
            return [("fall", local)]
        if isinstance(st, ast.Expr):
            self._eval(st.value, local)
            return [("fall", local)]
        if isinstance(st, (ast.Import, ast.ImportFrom)):
            self.risky += 1
            bind_import(st, self.home.name, self.home.loc.is_package, local)
            return [("fall", local)]
        if isinstance(st, (ast.Assign, ast.AnnAssign)) and st.value is not None:
            got = self._eval(st.value, local)
            for t in st.targets if isinstance(st, ast.Assign) else [st.target]:
                if not bind(t, got, local):
                    self.risky += 1
            return [("fall", local)]
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.AugAssign)):
            name = st.target if isinstance(st, ast.AugAssign) else st
            local[getattr(name, "id", getattr(name, "name", ""))] = UNKNOWN
            return [("fall", local)]
        if isinstance(st, ast.If):
            sc = self.scope(local)
            taken = truth(st.test, sc, self.member)
            self.risky += sc.risky
            if taken is None:
                return self.block(st.body, local) + self.block(st.orelse, local)
            if not (taken and isinstance(st.test, ast.Compare)):
                return self.block(st.body if taken else st.orelse, local)
            was = local.get(_NAMED, False)  # marked inside the branch chosen for the name
            got = self.block(st.body, {**local, _NAMED: True})
            return [("fall", {**r[1], _NAMED: was}) if r[0] == "fall" else r for r in got]
        if isinstance(st, ast.Return):
            if st.value is not None:
                self._eval(st.value, local)
            return [("return", st.lineno)]
        if isinstance(st, ast.Raise):
            exc = st.exc.func if isinstance(st.exc, ast.Call) else st.exc
            kind = dotted(exc).rpartition(".")[2] if exc else ""
            return [("raise", st.lineno, kind, bool(local.get(_NAMED)))]
        if isinstance(st, ast.Try):
            return self._try(st, local)
        return [("unknown",)]

    def _try(self, st: ast.Try, local: dict) -> list[tuple]:
        if any(isinstance(n, (ast.Return, ast.Raise)) for s in st.finalbody for n in walk(s)):
            return [("unknown",)]
        before = self.risky
        body = self.block(st.body, local)
        risky = self.risky > before  # the body may raise what a handler catches
        out: list[tuple] = []
        for r in body:
            if r[0] == "fall":
                out += self.block(st.orelse, r[1])
            elif r[0] == "raise":
                out += self._handle(st, r, local)
            else:
                out.append(r)
        if risky:
            for h in st.handlers:
                out += self.block(h.body, self._after_some(st, local, h))
        if st.finalbody:
            out = [
                r for x in out for r in (self.block(st.finalbody, x[1]) if x[0] == "fall" else [x])
            ]
        return out

    def _handle(self, st: ast.Try, r: tuple, local: dict) -> list[tuple]:
        for h in st.handlers:
            caught = _catches(h, r[2])
            if caught is None:
                return [("unknown",)]
            if caught:
                return self.block(h.body, self._after_some(st, local, h))
        return [r]

    @staticmethod
    def _after_some(st: ast.Try, local: dict, h: ast.ExceptHandler) -> dict:
        """The locals a handler starts with: what the body may have bound, unknown."""
        out = dict(local)
        for s in st.body:
            for n in walk(s):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    out[n.id] = UNKNOWN
        if h.name:
            out[h.name] = UNKNOWN
        return out


def _catches(h: ast.ExceptHandler, exc: str) -> bool | None:
    """Does handler ``h`` catch exception class ``exc`` (by name)? None when we cannot say."""
    if h.type is None:
        return True
    elts = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
    names = {dotted(e).rpartition(".")[2] for e in elts}
    if names & {"Exception", "BaseException", exc}:
        return True
    if exc in _ABOVE and names <= set(_ABOVE):
        return bool(names & _ABOVE[exc])
    return None


def _dynamic_namespace(tree: ast.Module) -> bool:
    """Names put into the module some way we do not read: ``globals()[k] = v``,
    ``globals().update``, ``vars()``, ``setattr`` on a module, ``exec``."""
    for n in walk(tree):
        if isinstance(n, ast.Call):
            f = dotted(n.func)
            first = ast.unparse(n.args[0]) if n.args else ""
            if (f == "vars" and not n.args) or (f == "exec" and len(n.args) < 2):
                return True
            if f == "setattr" and "sys.modules" in first:
                return True
            if f.endswith("__dict__.update") and "sys.modules" in ast.unparse(n.func):
                return True
            if (
                isinstance(n.func, ast.Attribute)
                and dotted(n.func.value) == "globals"
                and n.func.attr in ("update", "setdefault", "__setitem__")
            ):
                return True
        elif (
            isinstance(n, ast.Subscript)
            and isinstance(n.ctx, ast.Store)
            and (dotted(n.value) in ("globals", "vars") or "sys.modules" in ast.unparse(n.value))
        ):
            return True
    return False
