"""Where a callee function sends its ``**kwargs``: the calls that finally bind the caller's keys.

``LLM(model, swap_space=4)`` binds to ``LLM.__init__(self, model, ..., **kwargs)`` -- any key
is fine there -- but ``__init__`` does ``EngineArgs(model=model, ..., **kwargs)``, and that is
where an unknown key raises. We follow each ``**kwargs`` on (``f(**kwargs)``,
``self.x = Cls(**kwargs)``, ``super().__init__(**kwargs)``, ``return g(**kwargs)``) up to a few
hops, with the keys the function pops first. Edits that only add or read keys keep the chain
(``kwargs["x"] = ...``, ``kwargs.update(...)``, ``if "y" in kwargs``); a use of the dict we
cannot account for (handing ``kwargs`` itself to a call, ``kwargs.pop(k)``, rebinding it)
stops it.
"""

from __future__ import annotations

import ast
from typing import Any

from probes._walk import children, walk
from probes.signatures._describe import after_self, parameters
from probes.signatures._syntax import ModuleSummary, dotted

MAX_HOPS = 3


def _kwarg_uses(fn: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> tuple[list, set] | None:
    """(forwarding calls, keys the caller's value does not reach them with) -- None when the
    dict is used in a way we cannot follow.

    Edits keep every key the caller passed (``kwargs["x"] = convert(kwargs["x"])`` still hands
    an ``x`` on): assignments, ``update``, ``setdefault``, ``|=``, and reads (``"y" in
    kwargs``, ``kwargs["y"]``, ``for k in kwargs``). ``pop("k")`` / ``del kwargs["k"]`` take
    that key away only.
    """
    parent: dict[int, ast.AST] = {}
    for n in walk(fn):
        for c in children(n):
            parent[id(c)] = n
    calls: list[ast.Call] = []
    removed: set[str] = set()
    for n in walk(fn):
        if not (isinstance(n, ast.Name) and n.id == name):
            continue
        up = parent.get(id(n))
        if isinstance(up, ast.AugAssign) and isinstance(up.op, ast.BitOr) and up.target is n:
            continue  # kwargs |= {...}: adds keys, takes none away
        if not isinstance(n.ctx, ast.Load):
            return None  # rebound
        if isinstance(up, ast.keyword) and up.arg is None:
            call = parent.get(id(up))
            if isinstance(call, ast.Call):
                calls.append(call)
                continue
        if isinstance(up, ast.Attribute):
            call = parent.get(id(up))
            if not (isinstance(call, ast.Call) and call.func is up):
                return None
            if up.attr in ("get", "keys", "items", "values", "copy", "setdefault", "update"):
                continue
            key = call.args[0] if call.args else None
            if up.attr == "pop" and isinstance(key, ast.Constant) and isinstance(key.value, str):
                removed.add(key.value)
                continue
            return None
        if isinstance(up, ast.Subscript) and up.value is n:
            key = up.slice
            literal = isinstance(key, ast.Constant) and isinstance(key.value, str)
            if isinstance(up.ctx, (ast.Load, ast.Store)):  # kwargs["x"] = v: the key stays
                continue
            if literal:  # del kwargs["x"]
                removed.add(key.value)
                continue
            return None
        if isinstance(up, (ast.Compare, ast.Delete, ast.UnaryOp)):
            continue  # "k" in kwargs, not kwargs
        if isinstance(up, (ast.If, ast.IfExp, ast.While)) and up.test is n:
            continue  # if kwargs: ...
        if isinstance(up, (ast.For, ast.comprehension)) and up.iter is n:
            continue
        return None
    return calls, removed


class Forwards:
    """Resolve forwarding targets with the probe's Lookup (which knows classes and members)."""

    def __init__(self, lookup: Any) -> None:
        self.lookup = lookup
        self.index = lookup.index

    def of_function(
        self,
        mod: ModuleSummary,
        fn: ast.FunctionDef | ast.AsyncFunctionDef,
        owner: ast.ClassDef | None,
        depth: int = 0,
    ) -> dict[str, Any] | None:
        if fn.args.kwarg is None or depth >= MAX_HOPS:
            return None
        got = _kwarg_uses(fn, fn.args.kwarg.arg)
        if got is None or not got[0]:
            return None
        calls, removed = got
        sites = []
        for call in calls:
            target = self._target(mod, call.func, owner)
            if target is None:
                return None  # a forward we cannot read: say nothing rather than guess
            tmod, tnode, tqual, tcls = target
            params, extra, inner = self._signature(tmod, tnode, tcls, depth)
            if params is None:
                return None
            sites.append(
                {
                    "target": f"{tmod.name}:{tqual}",
                    "line": call.lineno,
                    "file": self.index.rel(mod.loc.file),
                    "text": ast.unparse(call)[:120],
                    "positional": sum(1 for a in call.args if not isinstance(a, ast.Starred)),
                    "star": any(isinstance(a, ast.Starred) for a in call.args),
                    "keywords": [k.arg for k in call.keywords if k.arg],
                    "parameters": params,
                    "extra": extra,
                    "forwards": inner,
                }
            )
        return {"removed": sorted(removed), "sites": sites}

    def _signature(
        self, mod: ModuleSummary, node: ast.AST, cls: ast.ClassDef | None, depth: int
    ) -> tuple[list | None, str, dict | None]:
        """(parameters without self, how extras are treated, that target's own forwards)."""
        if isinstance(node, ast.ClassDef):
            ctor = self.lookup.classes.constructor(mod, node)
            params = ctor.get("parameters")
            inner = None
            if ctor.get("via") == "__init__":
                init = self._init_of(ctor)
                if init is not None:
                    inner = self.of_function(init[0], init[1], init[2], depth + 1)
            return params, ctor.get("extra") or "forbid", inner
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            params = parameters(node.args)
            if cls is not None and params and not _is_static(node):
                params = after_self(params)
            return params, "forbid", self.of_function(mod, node, cls, depth + 1)
        return None, "forbid", None

    def _init_of(self, ctor: dict) -> tuple[ModuleSummary, ast.FunctionDef, ast.ClassDef] | None:
        module, _, name = (ctor.get("from") or "").rpartition(".")
        got = self.index.resolve(module, name) if module else None
        if got is None or not isinstance(got.node, ast.ClassDef):
            return None
        for st in got.node.body:
            if isinstance(st, ast.FunctionDef) and st.name == "__init__":
                return got.module, st, got.node
        return None

    def _target(
        self, mod: ModuleSummary, func: ast.expr, owner: ast.ClassDef | None
    ) -> tuple[ModuleSummary, ast.AST, str, ast.ClassDef | None] | None:
        # super().__init__(**kwargs) / super().method(**kwargs): the first readable base's
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Call)
            and dotted(func.value.func) == "super"
            and owner is not None
        ):
            for b in owner.bases:
                base = self.lookup.classes.base_class(mod, b)
                if base is None:
                    return None
                if func.attr == "__init__":
                    return base[0], base[1], base[1].name, None
                found = self.lookup._member(base[0], base[1], func.attr)
                if found is not None:
                    return found[0], found[2], f"{found[1].name}.{func.attr}", found[1]
            return None
        # self.method(**kwargs)
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in ("self", "cls")
            and owner is not None
        ):
            found = self.lookup._member(mod, owner, func.attr)
            if found is None:
                return None
            return found[0], found[2], f"{found[1].name}.{func.attr}", found[1]
        full = self.index.resolve_dotted(mod.name, dotted(func))
        where, _, leaf = full.rpartition(".")
        if not where or self.index.finder.find(where.split(".")[0]) is None:
            return None
        got = self.index.resolve(where, leaf)
        if got is None or got.node is None:
            return None
        return got.module, got.node, got.name, None


def _is_static(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(dotted(d).split(".")[-1] == "staticmethod" for d in fn.decorator_list)
