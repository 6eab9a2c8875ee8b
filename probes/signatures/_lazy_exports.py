"""A module's ``__getattr__`` (PEP 562) and its lazy-export tables, read from source: which
names it serves, from where, and which it warns about as deprecated.

A moved name is often still served by a shim: ``def __getattr__(name): if name == "old":
warnings.warn(...); from new.place import old; return old``, a ``{"Name": ".mod:attr"}``
table, or ``if name in {...}: return getattr(import_module("x"), name)``. Each name a test
selects is evaluated on its own; a test, branch or fall-through we cannot follow leaves the
function unreadable, and then a name it does not serve may still exist.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Any

from probes._walk import walk
from probes.signatures._syntax import dotted, resolve_relative


def lazy_table(node: ast.expr, module: str, is_package: bool, line: int) -> dict:
    """Read a ``{"Name": ".mod:attr"}`` dict literal, the lazy-export idiom."""
    out: dict[str, tuple[str, str, int]] = {}
    if not isinstance(node, ast.Dict):
        return out
    for k, v in zip(node.keys, node.values, strict=True):
        if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
            return {}
        if not (isinstance(v, ast.Constant) and isinstance(v.value, str) and ":" in v.value):
            return {}
        mod, _, attr = v.value.partition(":")
        level = len(mod) - len(mod.lstrip("."))
        out[k.value] = (resolve_relative(module, is_package, level, mod.lstrip(".")), attr, line)
    return out


@dataclasses.dataclass
class Shims:
    served: dict  # name -> (module, attr, line): what the function returns for it
    deprecated: dict  # name -> line of the warning its branch gives
    unsure: set  # names a test selects whose value we cannot follow
    readable: bool = False  # every name not served raises AttributeError


def read_getattr(s: Any, tables: dict[str, dict]) -> Shims:
    """What a module's ``def __getattr__`` serves, from its source alone (``s``: a summary);
    also one a factory of the module makes (``__getattr__, __dir__, __all__ = attach(__name__,
    submod_attrs=TABLE)``, the lazy-loader idiom): its inner ``def __getattr__``, read with the
    factory's parameters bound to the call's arguments."""
    fn, closure = s.defs.get("__getattr__"), {}
    if not isinstance(fn, ast.FunctionDef):
        fn, closure = attached_getattr(s, tables)
    out = Shims({}, {}, set())
    args = fn.args.posonlyargs + fn.args.args if isinstance(fn, ast.FunctionDef) else []
    if not args:
        return out
    ev = _Eval(s, args[0].arg, tables, closure)
    prefix: list[ast.stmt] = []  # imports, assignments, warnings: every branch runs them
    body = list(fn.body)
    while body:
        st = body.pop(0)
        if isinstance(st, (ast.Import, ast.ImportFrom, ast.Expr, ast.Assign, ast.Pass)):
            prefix.append(st)
            continue
        if isinstance(st, ast.Raise):
            out.readable = True
            return out
        if not isinstance(st, ast.If):
            return out  # one return for every other name, a loop, a try: cannot say
        names = ev.names(st.test)
        if names is None and not _raises(st.body):
            return out
        for n in sorted((names or set()) - set(out.served) - out.unsure):
            got = ev.branch([*prefix, *st.body], n)
            if got is None:
                out.unsure.add(n)
            elif got != "raise":
                out.served[n] = (*got[0], st.lineno)
                if got[1]:
                    out.deprecated[n] = got[1]
        body = list(st.orelse) + body
    return out


def attached_getattr(s: Any, tables: dict[str, dict]) -> tuple[ast.FunctionDef | None, dict]:
    """``__getattr__[, ...] = factory(args)`` at module level, ``factory`` a function of this
    module that defines ``def __getattr__`` and returns it: that inner function, and the values
    its closure holds (the factory's parameters bound to the call's arguments, then the
    assignments that run before the ``def``); (None, {}) when any of it cannot be followed."""
    call = None
    for st in s.tree.body:
        if isinstance(st, ast.Assign) and isinstance(st.value, ast.Call):
            names = {getattr(n, "id", "") for t in st.targets for n in walk(t)}
            if "__getattr__" in names:
                call = st.value
    factory = s.defs.get(dotted(call.func)) if call is not None else None
    if call is None or not isinstance(factory, ast.FunctionDef):
        return None, {}
    ev = _Eval(s, "", tables)
    a = factory.args
    params = [p.arg for p in a.posonlyargs + a.args]
    defaults = dict(zip(params[len(params) - len(a.defaults) :], a.defaults, strict=True))
    given = dict(zip(params, call.args, strict=False))
    given.update({k.arg: k.value for k in call.keywords if k.arg})
    if len(call.args) > len(params) or not set(given) <= set(params):
        return None, {}
    env = {p: ev.value(given.get(p, defaults.get(p)), {}, "") for p in params}
    for st in factory.body:
        if isinstance(st, ast.FunctionDef) and st.name == "__getattr__":
            return st, env
        if isinstance(st, ast.Assign) and len(st.targets) == 1:
            t = st.targets[0]
            if isinstance(t, ast.Name):
                env[t.id] = ev.value(st.value, env, "")
        elif isinstance(st, ast.If):
            taken = ev.truth(st.test, env)
            for sub in [st] if taken is None else st.body if taken else st.orelse:
                if (
                    sub is not st
                    and isinstance(sub, ast.Assign)
                    and isinstance(sub.targets[0], ast.Name)
                ):
                    env[sub.targets[0].id] = ev.value(sub.value, env, "")
                    continue
                for t in walk(sub):  # what we cannot follow: its names unknown
                    if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store):
                        env[t.id] = None
    return None, {}


def _silent(st: ast.If) -> bool:
    """An ``if`` that neither returns nor raises, in any branch."""
    return not any(isinstance(n, (ast.Return, ast.Raise)) for n in walk(st))


def _raises(body: list[ast.stmt]) -> bool:
    return (
        bool(body)
        and isinstance(body[-1], ast.Raise)
        and not any(isinstance(n, ast.Return) for st in body for n in walk(st))
    )


class _Eval:
    """One ``__getattr__`` branch, evaluated for one name. Values: ``("path", "pkg.mod.x")``,
    ``("str", s)``, ``("tuple", [...])``, ``("dict", node)``; None when we cannot say."""

    def __init__(
        self, s: Any, param: str, tables: dict[str, dict], closure: dict | None = None
    ) -> None:
        self.s, self.param, self.tables = s, param, tables
        self.closure = closure or {}
        self.package = s.name if s.loc.is_package else s.name.rpartition(".")[0]

    def names(self, test: ast.expr) -> set[str] | None:
        """The names a test selects: ``name == "a"``, ``name in ("a", "b")``, ``name in
        TABLE`` (a module-level literal), joined by ``or``; None for any other test."""
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
            parts = [self.names(v) for v in test.values]
            return None if any(p is None for p in parts) else set().union(*parts)
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
            return None
        left, op, right = test.left, test.ops[0], test.comparators[0]
        if isinstance(op, ast.Eq) and isinstance(right, ast.Name) and right.id == self.param:
            left, right = right, left
        if not (isinstance(left, ast.Name) and left.id == self.param):
            return None
        got = self.value(right, {}, "")
        if isinstance(op, ast.Eq):
            return {got[1]} if got and got[0] == "str" else None
        if not isinstance(op, ast.In):
            return None
        if isinstance(right, ast.Name) and right.id in self.tables:
            return set(self.tables[right.id])
        if got and got[0] == "dict":
            got = ("tuple", [self.value(k, {}, "") if k else None for k in got[1].keys])
        if got and got[0] == "tuple" and all(e and e[0] == "str" for e in got[1]):
            return {e[1] for e in got[1]}
        return None

    def branch(self, body: list[ast.stmt], name: str) -> tuple | str | None:
        """``((module, attr), line of its warning or 0)`` that ``body`` returns for
        ``name``; "raise"; None when it cannot be followed."""
        env: dict[str, Any] = {}
        warned = 0
        todo = list(body)
        while todo:
            st = todo.pop(0)
            if isinstance(st, ast.Expr):
                if isinstance(st.value, ast.Call) and dotted(st.value.func).endswith("warn"):
                    warned = st.lineno
            elif isinstance(st, (ast.Import, ast.ImportFrom)):
                self._bind_import(st, env)
            elif isinstance(st, ast.Assign) and len(st.targets) == 1:
                got, t = self.value(st.value, env, name), st.targets[0]
                if isinstance(t, ast.Name):
                    env[t.id] = got
                elif not (isinstance(t, ast.Tuple) and got and got[0] == "tuple") or len(
                    got[1]
                ) != len(t.elts):
                    return None
                else:
                    for e, v in zip(t.elts, got[1], strict=True):
                        if isinstance(e, ast.Name):
                            env[e.id] = v
            elif isinstance(st, ast.If):
                sel = self.names(st.test)
                if sel is None and _silent(st):  # neither returns nor raises: runs past it
                    for t in walk(st):
                        if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store):
                            env[t.id] = None
                    continue
                if sel is None and not _raises(st.body):
                    return None
                todo = list(st.body if sel and name in sel else st.orelse) + todo
            elif isinstance(st, ast.Try):  # what runs when nothing fails
                todo = [*st.body, *st.orelse, *st.finalbody, *todo]
            elif isinstance(st, ast.Raise):
                return "raise"
            elif isinstance(st, ast.Return) and st.value is not None:
                got = self.value(st.value, env, name)
                if not got or got[0] != "path" or "." not in got[1]:
                    return None
                module, _, attr = got[1].rpartition(".")
                return (module, attr), warned
            elif not isinstance(st, ast.Pass):
                return None
        return None

    def _bind_import(self, st: ast.Import | ast.ImportFrom, env: dict) -> None:
        if isinstance(st, ast.Import):
            for a in st.names:
                env[a.asname or a.name.split(".")[0]] = (
                    "path",
                    a.name if a.asname else a.name.split(".")[0],
                )
            return
        mod = resolve_relative(self.s.name, self.s.loc.is_package, st.level, st.module)
        for a in st.names:
            env[a.asname or a.name] = ("path", f"{mod}.{a.name}")

    def value(self, e: ast.expr | None, env: dict, name: str) -> tuple | None:
        if isinstance(e, ast.Constant):
            return ("str", e.value) if isinstance(e.value, str) else ("const", e.value)
        if isinstance(e, ast.Name):
            return self._name(e.id, env, name)
        if isinstance(e, ast.Dict):
            return ("dict", e)
        if isinstance(e, (ast.Tuple, ast.List, ast.Set)):
            return ("tuple", [self.value(x, env, name) for x in e.elts])
        if isinstance(e, (ast.JoinedStr, ast.BinOp)):
            parts = e.values if isinstance(e, ast.JoinedStr) else [e.left, e.right]
            got = [
                self.value(v.value if isinstance(v, ast.FormattedValue) else v, env, name)
                for v in parts
            ]
            ok = isinstance(e, ast.JoinedStr) or isinstance(e.op, ast.Add)
            if ok and all(p and p[0] == "str" for p in got):
                return ("str", "".join(p[1] for p in got))
            return None
        if isinstance(e, ast.Attribute):
            base = self.value(e.value, env, name)
            return ("path", f"{base[1]}.{e.attr}") if base and base[0] == "path" else None
        if isinstance(e, ast.Subscript):
            base, key = self.value(e.value, env, name), self.value(e.slice, env, name)
            if base and key and base[0] == "dict":
                for k, v in zip(base[1].keys, base[1].values, strict=True):
                    if k is not None and self.value(k, {}, "") == key:
                        return self.value(v, env, name)
            return None
        if isinstance(e, ast.Call):
            return self._call(e, env, name)
        if isinstance(e, ast.DictComp):
            return self._dictcomp(e, env, name)
        return None

    def truth(self, test: ast.expr, env: dict) -> bool | None:
        """``x is None`` / ``x is not None`` with ``x`` known; None for any other test."""
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
            return None
        right = test.comparators[0]
        if not (isinstance(right, ast.Constant) and right.value is None):
            return None
        got = self.value(test.left, env, "")
        if got is None or not isinstance(test.ops[0], (ast.Is, ast.IsNot)):
            return None
        is_none = got == ("const", None)
        return is_none if isinstance(test.ops[0], ast.Is) else not is_none

    def _items(self, e: ast.expr, env: dict, name: str) -> list | None:
        """What a comprehension's ``for`` runs over: a tuple's elements, a dict's keys, or
        its ``.items()`` as pairs."""
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and not e.args:
            base = self.value(e.func.value, env, name)
            if e.func.attr == "items" and base and base[0] == "dict":
                node = base[1]
                return [
                    ("tuple", [self.value(k, {}, ""), self.value(v, env, name)])
                    for k, v in zip(node.keys, node.values, strict=True)
                ]
            return None
        got = self.value(e, env, name)
        if got and got[0] == "dict":
            return [self.value(k, {}, "") for k in got[1].keys]
        return list(got[1]) if got and got[0] == "tuple" else None

    def _dictcomp(self, e: ast.DictComp, env: dict, name: str) -> tuple | None:
        """``{k: v for ... in ... for ...}`` over known values, into a dict of literals."""
        keys: list[ast.expr] = []
        values: list[ast.expr] = []

        def run(gens: list[ast.comprehension], scope: dict) -> bool:
            if not gens:
                k, v = self.value(e.key, scope, name), self.value(e.value, scope, name)
                if not (k and v and k[0] == "str" and v[0] in ("str", "const")):
                    return False
                keys.append(ast.Constant(k[1]))
                values.append(ast.Constant(v[1]))
                return True
            g = gens[0]
            items = self._items(g.iter, scope, name)
            if items is None or g.ifs or g.is_async:
                return False
            for item in items:
                inner = dict(scope)
                if isinstance(g.target, ast.Name):
                    inner[g.target.id] = item
                elif isinstance(g.target, ast.Tuple) and item and item[0] == "tuple":
                    if len(item[1]) != len(g.target.elts):
                        return False
                    for t, v in zip(g.target.elts, item[1], strict=True):
                        if not isinstance(t, ast.Name):
                            return False
                        inner[t.id] = v
                else:
                    return False
                if not run(gens[1:], inner):
                    return False
            return True

        if not run(list(e.generators), dict(env)):
            return None
        return ("dict", ast.Dict(keys=keys, values=values))

    def _name(self, ident: str, env: dict, name: str) -> tuple | None:
        if ident == self.param and name:
            return ("str", name)
        if ident in env:
            return env[ident]
        if ident in self.closure:
            return self.closure[ident]
        if ident in ("__name__", "__package__"):
            return ("str", self.s.name if ident == "__name__" else self.package)
        node = self.s.defs.get(ident)
        if isinstance(node, ast.Assign) and isinstance(
            node.value, (ast.Dict, ast.Tuple, ast.List, ast.Set)
        ):
            return self.value(node.value, {}, "")
        if node is not None or ident in self.s.imports:  # the module's own name
            return ("path", f"{self.s.name}.{ident}")
        return None

    def _call(self, e: ast.Call, env: dict, name: str) -> tuple | None:
        args = [self.value(a, env, name) for a in e.args]
        func = dotted(e.func).rpartition(".")[2]
        base = self.value(e.func.value, env, name) if isinstance(e.func, ast.Attribute) else None
        if base and base[0] == "str" and func in ("partition", "rpartition", "split", "rsplit"):
            if not all(a and a[0] in ("str", "const") for a in args):
                return None
            return ("tuple", [("str", x) for x in getattr(base[1], func)(*(a[1] for a in args))])
        if func in ("set", "list", "tuple", "frozenset") and isinstance(e.func, ast.Name):
            if len(args) == 1 and args[0] and args[0][0] in ("tuple", "dict"):
                return args[0] if args[0][0] == "tuple" else self._call_keys(args[0])
            return ("tuple", []) if not e.args else None
        if not (args and all(a and a[0] in ("str", "path") for a in args)):
            return None
        if func == "import_module" and args[0][0] == "str":
            target = args[0][1]
            level = len(target) - len(target.lstrip("."))
            if level:
                pkg = args[1][1] if len(args) > 1 else self.package
                target = resolve_relative(pkg, True, level, target.lstrip(".") or None)
            return ("path", target)
        if func == "getattr" and len(args) == 2 and args[0][0] == "path" and args[1][0] == "str":
            return ("path", f"{args[0][1]}.{args[1][1]}")
        return None

    def _call_keys(self, got: tuple) -> tuple:
        return ("tuple", [self.value(k, {}, "") for k in got[1].keys])
