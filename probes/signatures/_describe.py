"""Turn ``ast`` function definitions into plain dicts: parameters, kinds, decorators, overloads.

Classes are described by :mod:`probes.signatures._describe_class` (their constructor, often
synthesised by a library: :mod:`probes.signatures._class_flavour`), from the pieces here.
"""

from __future__ import annotations

import ast
from typing import Any

from probes.signatures._syntax import ModuleSummary, Source, dotted

POS_ONLY = "positional-only"
POS_OR_KW = "positional-or-keyword"
VAR_POS = "var-positional"
KW_ONLY = "keyword-only"
VAR_KW = "var-keyword"


def unparse(node: ast.AST | None, src: Source | None = None) -> str | None:
    if node is None:
        return None
    return src.text(node) if src is not None else ast.unparse(node)


def parameters(args: ast.arguments, src: Source | None = None) -> list[dict[str, Any]]:
    """Every parameter with its kind, default and annotation, as written in the source."""
    out: list[dict[str, Any]] = []
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    defaults += list(args.defaults)
    for i, a in enumerate(positional):
        kind = POS_ONLY if i < len(args.posonlyargs) else POS_OR_KW
        out.append(param(a.arg, kind, defaults[i], a.annotation, src))
    if args.vararg:
        out.append(param(args.vararg.arg, VAR_POS, None, args.vararg.annotation, src))
    for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        out.append(param(a.arg, KW_ONLY, d, a.annotation, src))
    if args.kwarg:
        out.append(param(args.kwarg.arg, VAR_KW, None, args.kwarg.annotation, src))
    return out


def after_self(params: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a bound call fills: the parameters after ``self``/``cls``. A method whose first
    parameter is ``*args`` takes ``self`` as its first item and still takes every positional
    after it (datasets' ``Features.__init__(*args, **kwargs)``, written so that ``self`` may
    be passed as a keyword)."""
    return params if params and params[0]["kind"] == VAR_POS else params[1:]


def always_raises(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """The body, past its docstring, is one ``raise``: calling it never returns (a class whose
    ``__init__`` does so has no instance: transformers' ``AutoModel.__init__`` raises
    ``OSError("... is designed to be instantiated using from_pretrained")``)."""
    body = [
        st
        for st in fn.body
        if not (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant))
    ]
    return len(body) == 1 and isinstance(body[0], ast.Raise)


def param(
    name: str, kind: str, default: ast.AST | None, ann: ast.AST | None, src: Source | None = None
) -> dict:
    return {
        "name": name,
        "kind": kind,
        "default": unparse(default, src),
        "annotation": unparse(ann, src),
    }


def function_kind(node: ast.FunctionDef | ast.AsyncFunctionDef, in_class: bool) -> str:
    names = [dotted(d).split(".")[-1] for d in node.decorator_list]
    full = [dotted(d) for d in node.decorator_list]
    if "staticmethod" in names:
        return "staticmethod"
    if "classmethod" in names:
        return "classmethod"
    if (
        "property" in names
        or "cached_property" in names
        or any(f.endswith((".setter", ".getter", ".deleter")) for f in full)
    ):
        return "property"
    return "method" if in_class else "function"


def describe_function(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    qualname: str,
    in_class: bool,
    overloads: list[ast.AST] | None = None,
    src: Source | None = None,
) -> dict:
    return {
        "qualname": qualname,
        "kind": function_kind(node, in_class),
        "is_async": isinstance(node, ast.AsyncFunctionDef),
        "line": node.lineno,
        "end_line": node.end_lineno or node.lineno,
        "decorators": [unparse(d, src) for d in node.decorator_list],
        "parameters": parameters(node.args, src),
        "returns": unparse(node.returns, src),
        "overloads": [
            {
                "parameters": parameters(o.args, src),
                "returns": unparse(o.returns, src),
                "line": o.lineno,
            }
            for o in (overloads or [])
            if isinstance(o, (ast.FunctionDef, ast.AsyncFunctionDef))
        ],
        "doc": docstring(node),
    }


def docstring(node: ast.AST) -> str | None:
    try:
        doc = ast.get_docstring(node)  # type: ignore[arg-type]
    except TypeError:
        return None
    return doc.strip().splitlines()[0] if doc and doc.strip() else None


def is_overload(node: ast.AST) -> bool:
    return any(dotted(d).split(".")[-1] == "overload" for d in getattr(node, "decorator_list", []))


def is_accessor(node: ast.AST) -> bool:
    """``@x.setter`` / ``@x.deleter`` on ``def x``: the same property, which a reader knows by
    its getter (the line to read, the type it returns), not by the last ``def`` of the name."""
    name = getattr(node, "name", None)
    return any(
        dotted(d) in (f"{name}.setter", f"{name}.deleter")
        for d in getattr(node, "decorator_list", [])
    )


def body_functions(body: list[ast.stmt]) -> dict[str, tuple[ast.AST, list[ast.AST]]]:
    """name -> (implementation, overload stubs), in body order (the last impl wins, as at run;
    a property's setter and deleter leave it its getter)."""
    out: dict[str, tuple[ast.AST, list[ast.AST]]] = {}
    for st in body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if st.name in out and is_accessor(st):
                continue
            impl, ovl = out.get(st.name, (None, []))
            if is_overload(st):
                out[st.name] = (impl or st, [*ovl, st])
            else:
                out[st.name] = (st, ovl)
    return out


def module_overloads(mod: ModuleSummary, name: str) -> list[ast.AST]:
    return body_functions(mod.tree.body).get(name, (None, []))[1]
