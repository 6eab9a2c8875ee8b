"""Classes a function makes, read where a call of it stands for a class.

vLLM writes ``class LlamaBidirectionalModel(as_embedding_model(LlamaForCausalLM))``: the base
is whatever ``as_embedding_model`` returns, a class it defines on each call
(``class ModelForEmbedding(_create_pooling_model_cls(cls))``) over the class it was given.
:func:`made_class` reads the factory's code for the class statement it returns and gives it
back with the factory's parameters written as the call's arguments (absolute dotted names, so
the class resolves in the factory's own module), as if it had been written out at the call.
The same reading serves ``X = make_class(Base)`` at module level. A factory that returns no
class it defines itself (``return cls`` only, or a call) makes no class here.
"""

from __future__ import annotations

import ast
import copy
from typing import Any

FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def made_class(describer: Any, mod: Any, call: ast.Call, depth: int = 0) -> Any:
    """``(module, ClassDef)`` of the class ``call`` (written in ``mod``) returns, or None."""
    from probes.signatures._syntax import dotted

    name = dotted(call.func)
    if not name or depth > 6:
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
    key = (got.module.name, got.name, tuple(sorted(args.items())))
    memo = describer.__dict__.setdefault("_made_classes", {})
    if key not in memo:
        memo[key] = None
        local = returned_class(got.node)
        if local is not None:
            memo[key] = (got.module, _written_out(local, args))
    return memo[key]


def returned_class(fn: Any) -> ast.ClassDef | None:
    """The class statement in ``fn``'s own body that a ``return NAME`` hands back (the last)."""
    from probes.signatures._decorated import own_nodes, own_statements

    stmts = list(own_statements(fn.body))
    classes = {s.name: s for s in stmts if isinstance(s, ast.ClassDef)}
    found = None
    for s in stmts:
        for n in own_nodes(s):
            if isinstance(n, ast.Return) and isinstance(n.value, ast.Name):
                found = classes.get(n.value.id, found)
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
