"""Classes a function makes, read where a call of it stands for a class.

vLLM writes ``class LlamaBidirectionalModel(as_embedding_model(LlamaForCausalLM))``: the base
is whatever ``as_embedding_model`` returns, a class it defines on each call
(``class ModelForEmbedding(_create_pooling_model_cls(cls))``) over the class it was given.
:func:`made_class` reads the factory's code for the class statement it returns and gives it
back with the factory's parameters written as the call's arguments (absolute dotted names, so
the class resolves in the factory's own module), as if it had been written out at the call.
The same reading serves ``X = make_class(Base)`` at module level, and ``f = make_function(...)``
(:func:`made_function`: vLLM's lazy-import wrappers). A factory that returns nothing it
defines itself (``return cls`` only, or a call) makes nothing here.
"""

from __future__ import annotations

import ast
import copy
from typing import Any

FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def made_class(describer: Any, mod: Any, call: ast.Call) -> Any:
    """``(module, ClassDef)`` of the class ``call`` (written in ``mod``) returns, or None."""
    got = _factory(describer, mod, call)
    if got is None:
        return None
    fmod, fn, args = got
    key = (fmod.name, fn.name, fn.lineno, tuple(sorted(args.items())))
    memo = describer.__dict__.setdefault("_made_classes", {})
    if key not in memo:
        memo[key] = None
        local = returned(fn, ast.ClassDef)
        if local is not None:
            memo[key] = (fmod, _written_out(local, args))
    return memo[key]


def made_function(describer: Any, mod: Any, call: ast.Call) -> Any:
    """``(module, def, factory, wrapped)`` of the function ``call`` returns (vLLM's
    ``flashinfer_cutlass_fused_moe = _lazy_import_wrapper(...)``), or None. ``wrapped``: the
    call's argument that the def's ``@functools.wraps(param)`` names (it signs as that) --
    or, with no def (``(None, None, "", argument)``), the argument the factory hands back."""
    from probes.signatures._syntax import dotted

    got = _factory(describer, mod, call)
    local = returned(got[1], FUNCS) if got is not None else None
    if got is None or local is None:
        given = handed_back(got[1], got[2]) if got is not None else None
        return (None, None, "", given) if given else None
    params = got[2]
    wrapped = None
    for d in local.decorator_list:
        if isinstance(d, ast.Call) and dotted(d).rpartition(".")[2] == "wraps" and d.args:
            first = d.args[0]
            wrapped = params.get(first.id) if isinstance(first, ast.Name) else None
    full = describer.index.resolve_dotted(mod.name, dotted(call.func))
    return got[0], local, full, wrapped


def _factory(describer: Any, mod: Any, call: ast.Call) -> Any:
    """``(module, def, {parameter: absolute dotted argument})`` of the function ``call``
    calls, when it is one on the import path."""
    from probes.signatures._syntax import dotted

    name = dotted(call.func)
    if not name:
        return None
    index = describer.index
    full = index.resolve_dotted(mod.name, name)
    owner, _, leaf = full.rpartition(".")
    if not owner or index.finder.find(owner.split(".")[0]) is None:
        return None
    got = index.resolve(owner, leaf)
    if got is None or not isinstance(got.node, FUNCS):
        return None
    args = {p: index.resolve_dotted(mod.name, dotted(a)) for p, a in _bind(got.node, call)}
    return got.module, got.node, args


def handed_back(fn: Any, args: dict[str, str]) -> str | None:
    """The call's argument when every ``return`` of ``fn`` hands back that one parameter
    (``def register(fn): ...; return fn``): the result is the argument itself."""
    from probes.signatures._decorated import own_nodes, own_statements

    names = {
        n.value.id if isinstance(n.value, ast.Name) else ""
        for s in own_statements(fn.body)
        for n in own_nodes(s)
        if isinstance(n, ast.Return)
    }
    return args.get(names.pop()) if len(names) == 1 else None


def returned(fn: Any, kinds: Any) -> Any:
    """The def or class statement (``kinds``) in ``fn``'s own body that a ``return NAME``
    hands back (the last such return)."""
    from probes.signatures._decorated import own_nodes, own_statements

    stmts = list(own_statements(fn.body))
    local = {s.name: s for s in stmts if isinstance(s, kinds)}
    found = None
    for s in stmts:
        for n in own_nodes(s):
            if isinstance(n, ast.Return) and isinstance(n.value, ast.Name):
                found = local.get(n.value.id, found)
    return found


def _bind(fn: Any, call: ast.Call) -> list[tuple[str, ast.expr]]:
    """(parameter, argument) pairs of a call whose arguments are names (``f(Cls, x=Other)``)."""
    params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)]
    out = list(zip(params, call.args, strict=False))
    out += [(k.arg, k.value) for k in call.keywords if k.arg in params]
    return [(p, a) for p, a in out if isinstance(a, (ast.Name, ast.Attribute))]


def _written_out(local: ast.ClassDef, args: dict[str, str]) -> ast.ClassDef:
    """A copy of ``local`` whose bases name the call's arguments instead of the parameters."""
    made = copy.copy(local)
    made.bases = [_Substitute(args).visit(copy.deepcopy(b)) for b in local.bases]
    shown = ", ".join(v.rpartition(".")[2] for v in args.values())
    made.name = f"{local.name}({shown})" if shown else local.name
    return made


class _Substitute(ast.NodeTransformer):
    def __init__(self, args: dict[str, str]) -> None:
        self.args = args

    def visit_Name(self, node: ast.Name) -> ast.AST:
        full = self.args.get(node.id)
        if not full:
            return node
        head, *rest = full.split(".")
        expr: ast.expr = ast.Name(head, ast.Load())
        for part in rest:
            expr = ast.Attribute(expr, part, ast.Load())
        return ast.copy_location(expr, node)
