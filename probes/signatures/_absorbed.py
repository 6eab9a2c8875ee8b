"""Keywords a function decorator's wrapper takes out of ``**kwargs`` before it calls the
function it wraps -- followed statically.

huggingface_hub's ``@validate_hf_hub_args`` pops ``proxies`` and ``resume_download`` (1.x) or
turns ``use_auth_token`` into ``token`` (0.x) before calling the def: a call passing them binds
although the def has no such parameter, and one passing any other unknown keyword does not.
The decorator's code is read: its inner def that takes ``**kw``, the literal names it pops or
deletes from ``kw``, and those a same-package helper it hands ``kw`` to pops (one level).
Each such name signs as a keyword-only parameter (``absorbed_by`` says which decorator). A
decorator factory is not followed; the names it is given as literal strings sign the same way.
"""

from __future__ import annotations

import ast
from typing import Any

FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def absorb(describer: Any, mod: Any, fn: Any, d: dict) -> dict:
    """``d`` with the keywords ``fn``'s decorators absorb added as keyword-only parameters."""
    params = d.get("parameters")
    if not params or not getattr(fn, "decorator_list", None):
        return d
    from probes.signatures._bound import _function_of
    from probes.signatures._syntax import dotted

    have = {p["name"] for p in params}
    extra: list[dict] = []
    for deco in fn.decorator_list:
        if isinstance(deco, ast.Call):  # a factory: its wrapper is a call further; not followed,
            for name in _named(deco):  # but a name it is given is one it handles
                if name not in have:
                    have.add(name)
                    extra.append(_param(name, dotted(deco.func)))
            continue
        m, dfn, _, _ = _function_of(describer, mod, deco)
        if not isinstance(dfn, FUNCS) or dfn is fn:
            continue
        for name in _popped(describer, m, dfn):
            if name not in have:
                have.add(name)
                extra.append(_param(name, dotted(deco)))
    if not extra:
        return d
    overloads = [
        {**o, "parameters": _with(o["parameters"], extra)} if o.get("parameters") else o
        for o in d.get("overloads") or []
    ]  # ``@overload`` variants are what a call binds to: each takes them too
    return {**d, "parameters": _with(params, extra), "overloads": overloads}


def _param(name: str, by: str) -> dict:
    return {
        "name": name,
        "kind": "keyword-only",
        "default": "None",
        "annotation": None,
        "absorbed_by": by,
    }


def _named(deco: ast.Call) -> list[str]:
    """The identifiers a decorator factory is given as its leading literal strings
    (transformers' ``@deprecate_kwarg("tokenizer", new_name="processing_class")``): the
    wrapper it makes takes a keyword of that name (renamed, warned about, or dropped)."""
    out = []
    for a in deco.args:
        if not (isinstance(a, ast.Constant) and isinstance(a.value, str)):
            break
        if a.value.isidentifier():
            out.append(a.value)
    return out


def _with(params: list[dict], extra: list[dict]) -> list[dict]:
    have = {p["name"] for p in params}
    add = [e for e in extra if e["name"] not in have]
    at = next((i for i, p in enumerate(params) if p["kind"] == "var-keyword"), len(params))
    return [*params[:at], *add, *params[at:]]


def _popped(describer: Any, mod: Any, deco: Any) -> list[str]:
    """Literal keyword names the wrapper defined in ``deco`` takes out of its ``**kw``."""
    out: list[str] = []
    for inner in ast.walk(deco):
        if not isinstance(inner, FUNCS) or inner is deco or inner.args.kwarg is None:
            continue
        kw = inner.args.kwarg.arg
        out += _pops(inner, {kw})
        for call in ast.walk(inner):
            if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
                continue
            handed = [*call.args, *(k.value for k in call.keywords if k.arg)]
            if not any(isinstance(a, ast.Name) and a.id == kw for a in handed):
                continue
            got = describer.index.resolve(mod.name, call.func.id)
            if got is not None and isinstance(got.node, FUNCS):
                out += _pops(got.node, None)
    return out


def _pops(fn: Any, names: set[str] | None) -> list[str]:
    """``x.pop("lit", ...)`` and ``del x["lit"]`` in ``fn`` (on ``names``, or any name)."""
    out: list[str] = []
    for n in ast.walk(fn):
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr == "pop"
            and isinstance(n.func.value, ast.Name)
            and (names is None or n.func.value.id in names)
            and n.args
            and isinstance(n.args[0], ast.Constant)
            and isinstance(n.args[0].value, str)
        ):
            out.append(n.args[0].value)
        elif isinstance(n, ast.Delete):
            for t in n.targets:
                if (
                    isinstance(t, ast.Subscript)
                    and isinstance(t.value, ast.Name)
                    and (names is None or t.value.id in names)
                    and isinstance(t.slice, ast.Constant)
                    and isinstance(t.slice.value, str)
                ):
                    out.append(t.slice.value)
    return out
