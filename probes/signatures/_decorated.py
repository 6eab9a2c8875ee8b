"""Class decorators that write into the class they decorate, followed statically.

vLLM's ``@support_torch_compile`` replaces ``__init__`` and adds ``__call__`` and
``save_aot_compiled_function``; huggingface_hub's ``@strict`` adds ``validate`` and wraps
``__init__``. The decorator's code is read -- and each function it hands the class to, or
returns to be applied to it (``wrap(cls) if cls is not None else wrap``), a few levels deep --
for ``cls.NAME = fn`` and ``setattr(cls, "NAME", fn)`` where ``fn`` is a def made there. That
``fn`` is the member the class gets, unless it is made with ``@functools.wraps(original)``:
``inspect`` follows ``__wrapped__``, so the signature stays the original's. Conditions are not
evaluated (``if accept_kwargs:``): what a branch may set counts. Each effect names the
decorator, so a member or constructor changed this way says which one changed it. A metaclass
whose own ``__call__`` names its parameters takes ``Cls(...)`` the same way (``metaclass_ctor``).
"""

from __future__ import annotations

import ast
from typing import Any

from probes._walk import walk

FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def decorator_effects(
    describer: Any, mod: Any, cls: ast.ClassDef
) -> list[tuple[str, Any, Any, bool, str, Any]]:
    """``(name, module, def, wraps, decorator, value)`` for each member a decorator of ``cls``
    sets -- or a function the module hands the class to and binds it again, ``X = f(X, ...)``
    (transformers' ``auto_class_update``). ``def`` is None when the value set is no def made
    there (``classmethod(copy_func(Base.from_config))``): ``value`` is then the expression,
    its local names written out, for the caller to follow (``_bound``)."""
    from probes.signatures._syntax import dotted

    out = []
    memo = describer.__dict__.setdefault("_effects", {})
    appliers = [dotted(d) for d in cls.decorator_list] + rebinders(mod, cls)
    for expr in appliers:
        full = describer.index.resolve_dotted(mod.name, expr)
        if full not in memo:
            memo[full] = []
            owner, _, leaf = full.rpartition(".")
            top = owner.split(".")[0]
            got = (
                describer.index.resolve(owner, leaf)
                if top and describer.index.finder.find(top)
                else None
            )
            if got is not None and isinstance(got.node, FUNCS):
                memo[full] = _follow(describer.index, got.module, got.node)
        out += [(*e[:4], full, e[4]) for e in memo[full]]
    return out


def rebinders(mod: Any, cls: ast.ClassDef) -> list[str]:
    """The callees of module-level ``X = f(X, ...)`` for the class ``X`` (cached per module)."""
    from probes.signatures._syntax import dotted

    table = mod.__dict__.get("_rebound")
    if table is None:
        table = {}
        for st in mod.tree.body:
            if not (isinstance(st, ast.Assign) and len(st.targets) == 1):
                continue
            t, v = st.targets[0], st.value
            if (
                isinstance(t, ast.Name)
                and isinstance(v, ast.Call)
                and v.args
                and _is_name(v.args[0], t.id)
                and dotted(v.func)
            ):
                table.setdefault(t.id, []).append(dotted(v.func))
        mod.__dict__["_rebound"] = table
    return table.get(cls.name, []) if mod.defs.get(cls.name) is cls else []


def _follow(index: Any, mod: Any, fn: Any) -> list[tuple[str, Any, Any, bool, Any]]:
    """What a decorator (and each function it hands the class to) sets on its first argument:
    ``(name, module, def or None, wraps, value)``."""
    effects: dict[str, tuple[str, Any, Any, bool, Any]] = {}
    work = [(mod, fn, {})]
    seen: set[int] = set()
    while work and len(seen) < 12:
        m, f, scope = work.pop()
        if id(f) in seen or not (f.args.posonlyargs or f.args.args):
            continue
        seen.add(id(f))
        p = (f.args.posonlyargs or f.args.args)[0].arg
        stmts = list(own_statements(f.body))
        scope = {**scope, **{s.name: s for s in stmts if isinstance(s, FUNCS)}}
        local = _first_assignments(stmts)
        for s in stmts:
            for n in own_nodes(s):
                target = _set_on(n, p)
                if target is not None:
                    name, value = target
                    fdef = scope.get(value.id) if isinstance(value, ast.Name) else None
                    if fdef is not None:
                        effects[name] = (name, m, fdef, _wraps(fdef), value)
                    elif isinstance(value, (ast.Call, ast.Name, ast.Attribute)):
                        effects[name] = (name, m, None, False, _inline(value, local, scope))
                if isinstance(n, ast.Return) and n.value is not None:
                    for r in walk(n.value):
                        if isinstance(r, ast.Name) and r.id in scope:
                            work.append((m, scope[r.id], scope))
                if isinstance(n, ast.Call) and n.args and _is_name(n.args[0], p):
                    callee = n.func.id if isinstance(n.func, ast.Name) else None
                    if callee in scope:
                        work.append((m, scope[callee], scope))
                    elif callee:
                        got = index.resolve(m.name, callee)
                        if got is not None and isinstance(got.node, FUNCS):
                            work.append((got.module, got.node, {}))
    return list(effects.values())


def _first_assignments(stmts: list[ast.stmt]) -> dict[str, ast.expr]:
    """A function's local ``name = value`` bindings, the first of each name (a later
    ``name = decorate(...)(name)`` hands the same function on)."""
    out: dict[str, ast.expr] = {}
    for s in stmts:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            out.setdefault(s.targets[0].id, s.value)
    return out


def _inline(value: ast.expr, local: dict[str, ast.expr], scope: dict, depth: int = 0) -> ast.expr:
    """``value`` with local names replaced by what they were first bound to: ``classmethod(
    from_config)`` -> ``classmethod(copy_func(Base.from_config))``."""
    if depth > 4:
        return value
    if isinstance(value, ast.Name) and value.id in local and value.id not in scope:
        return _inline(local[value.id], local, scope, depth + 1)
    if isinstance(value, ast.Call):
        args = [_inline(a, local, scope, depth + 1) for a in value.args]
        return ast.copy_location(ast.Call(value.func, args, value.keywords), value)
    return value


def own_statements(body: list[ast.stmt]) -> Any:
    """Statements of a function body, into if/for/with/try blocks, not into nested defs."""
    for st in body:
        yield st
        if isinstance(st, (*FUNCS, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            yield from own_statements(getattr(st, field, []) or [])
        for h in getattr(st, "handlers", []) or []:
            yield from own_statements(h.body)


def own_nodes(st: ast.stmt) -> Any:
    """Expressions of one statement (its nested blocks are statements of their own)."""
    if isinstance(st, (*FUNCS, ast.ClassDef)):
        return
    stack: list[ast.AST] = [st]
    while stack:
        n = stack.pop()
        yield n
        for field, value in ast.iter_fields(n):
            if field in ("body", "orelse", "finalbody", "handlers") and isinstance(n, ast.stmt):
                continue
            if isinstance(value, ast.AST) and not isinstance(value, ast.Lambda):
                stack.append(value)
            elif isinstance(value, list):
                stack.extend(v for v in value if isinstance(v, ast.AST))


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _set_on(n: ast.AST, p: str) -> tuple[str, ast.expr] | None:
    """``p.NAME = value`` or ``setattr(p, "NAME", value)``: (NAME, value)."""
    if isinstance(n, ast.Assign) and len(n.targets) == 1:
        t = n.targets[0]
        if isinstance(t, ast.Attribute) and _is_name(t.value, p):
            return t.attr, n.value
    if (
        isinstance(n, ast.Call)
        and _is_name(n.func, "setattr")
        and len(n.args) == 3
        and _is_name(n.args[0], p)
        and isinstance(n.args[1], ast.Constant)
        and isinstance(n.args[1].value, str)
    ):
        return n.args[1].value, n.args[2]
    return None


def _wraps(fdef: Any) -> bool:
    from probes.signatures._syntax import dotted

    return any(dotted(d).rpartition(".")[2] == "wraps" for d in fdef.decorator_list)


def decorated_ctor(describer: Any, mod: Any, cls: ast.ClassDef) -> dict | None:
    """The constructor when a class decorator replaced ``__init__`` (without ``wraps``), or
    a metaclass's own ``__call__`` takes the call (:func:`metaclass_ctor`)."""
    meta = metaclass_ctor(describer, mod, cls)
    if meta is not None:
        return meta
    for name, m, fdef, wraps, full, _ in decorator_effects(describer, mod, cls):
        if name == "__init__" and fdef is not None and not wraps:
            from probes.signatures._describe import after_self, parameters

            return {
                "via": f"decorator:{full}",
                "from": f"{m.name}.{fdef.name}",
                "line": fdef.lineno,
                "parameters": after_self(parameters(fdef.args, m.src)),
                "overloads": [],
                "extra": "forbid",
                "changed_by": full,
            }
    return None


def metaclass_ctor(describer: Any, mod: Any, cls: ast.ClassDef, depth: int = 0) -> dict | None:
    """``Cls(...)`` binds to the metaclass's ``__call__`` (here or a base's metaclass) when it
    names its parameters; one taking ``*args, **kwargs`` hands them on to ``__init__``, which
    then decides. Stdlib metaclasses (``EnumType``, ``ABCMeta``) are the describer's."""
    import sys

    from probes.signatures._describe import VAR_KW, VAR_POS, after_self, parameters
    from probes.signatures._syntax import dotted

    for k in cls.keywords:
        if k.arg != "metaclass":
            continue
        full = describer.index.resolve_dotted(mod.name, dotted(k.value))
        if full.split(".")[0] in getattr(sys, "stdlib_module_names", ()):
            return None
        meta = describer._resolve_class(mod.name, dotted(k.value))
        call = _own_def(meta[1], "__call__") if meta else None
        if meta is None or call is None:
            return None
        params = after_self(parameters(call.args, meta[0].src))
        if all(p["kind"] in (VAR_POS, VAR_KW) for p in params):
            return None
        return {
            "via": f"metaclass:{full}",
            "from": f"{meta[0].name}.{meta[1].name}.__call__",
            "line": call.lineno,
            "parameters": params,
            "overloads": [],
            "extra": "forbid",
        }
    for b in cls.bases if depth < 8 else []:
        base = describer.base_class(mod, b)
        got = metaclass_ctor(describer, base[0], base[1], depth + 1) if base else None
        if got is not None:
            return {**got, "inherited": True}
    return None


def _own_def(cls: ast.ClassDef, name: str) -> Any:
    return next((st for st in cls.body if isinstance(st, FUNCS) and st.name == name), None)
