"""What the caller does around a callee call, read from its own tree (stdlib only).

Helpers of the callsites probe, each pure over ``ast``: literal arguments, how a call's result
is used (``x[0]``, iterated, passed on as ``keyword=``), the attributes a function reads on its
first parameter, and the ``types.MethodType`` installs a module makes.
"""

from __future__ import annotations

import ast
from typing import Any

from probes._walk import children, walk
from probes.signatures._syntax import dotted

#: uses of a call's result that depend on the kind of object returned (``kind_sensitive``)
KIND_SENSITIVE = frozenset({"truth", "unpack", "compare"})


def literal_text(node: ast.expr) -> str | None:
    """Source text of a literal argument (``0``, ``None``, ``"x"``, ``(1, 2)``), else None."""
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return ast.unparse(node)


def result_uses(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[int, list[dict[str, Any]]]:
    """id(call) -> how the function uses that call's result: ``x = f(); x[0]``, ``f()[0]``.

    Behaviour drift is noticeable only where the result is used; saying how (indexed,
    iterated, ``len``, an attribute, unpacked, tested) tells the reader what breaks.
    """
    parent: dict[int, ast.AST] = {}
    stores: dict[str, list[int]] = {}
    loads: dict[str, list[ast.Name]] = {}
    calls: list[ast.AST] = []
    for node in walk(fn):  # one walk: parents, name stores and loads, calls
        for child in children(node):
            parent[id(child)] = node
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                loads.setdefault(node.id, []).append(node)
            else:
                stores.setdefault(node.id, []).append(node.lineno)
        elif isinstance(node, (ast.Call, ast.Await)):
            calls.append(node)
    out: dict[int, list[dict[str, Any]]] = {}
    for node in calls:
        call = node.value if isinstance(node, ast.Await) else node
        if not isinstance(call, ast.Call):
            continue
        up = parent.get(id(node))
        if isinstance(up, ast.Subscript) and up.value is node:
            out.setdefault(id(call), []).append(_use("subscript", up))
        kind_use = kind_sensitive(node, parent)  # ``if f():``, ``a, b = f()``, ``f() is True``
        if kind_use is not None:
            out.setdefault(id(call), []).append(kind_use)
        if isinstance(up, ast.keyword) and up.arg and isinstance(parent.get(id(up)), ast.Call):
            out.setdefault(id(call), []).append(_passed(up, parent[id(up)]))
        if (
            isinstance(up, ast.Assign)
            and len(up.targets) == 1
            and isinstance(up.targets[0], ast.Name)
        ):
            name, line = up.targets[0].id, up.lineno
            until = min([ln for ln in stores.get(name, []) if ln > line], default=10**9)
            for n in sorted(loads.get(name, []), key=lambda n: (n.lineno, n.col_offset)):
                if line < n.lineno <= until:
                    got = _classify(n, parent)
                    if got is not None:
                        out.setdefault(id(call), []).append(got)
    return out


def _use(how: str, node: ast.AST) -> dict[str, Any]:
    return {"how": how, "line": getattr(node, "lineno", 0), "text": ast.unparse(node)[:120]}


def _passed(kw: ast.keyword, call: ast.AST) -> dict[str, Any]:
    """The result handed on as ``keyword=`` to another call (resolved by the visitor)."""
    return {"how": "passed", "line": kw.value.lineno, "keyword": kw.arg, "call": call}


def _classify(name: ast.Name, parent: dict[int, ast.AST]) -> dict[str, Any] | None:
    up = parent.get(id(name))
    if isinstance(up, ast.keyword) and up.arg and isinstance(parent.get(id(up)), ast.Call):
        return _passed(up, parent[id(up)])
    if isinstance(up, ast.Subscript) and up.value is name:
        return _use("subscript", up)
    if isinstance(up, ast.Attribute):
        return _use("attribute", up)
    if isinstance(up, (ast.For, ast.AsyncFor, ast.comprehension)) and up.iter is name:
        return _use("iterate", up.iter if isinstance(up, ast.comprehension) else name)
    if isinstance(up, ast.Call) and isinstance(up.func, ast.Name) and up.func.id == "len":
        return _use("len", up)
    return kind_sensitive(name, parent)


def kind_sensitive(node: ast.AST, parent: dict[int, ast.AST]) -> dict[str, Any] | None:
    """A use that depends on what kind of object ``node`` is, not on its members: tested for
    truth (``if``, ``while``, ``not``, ``and``/``or``, ``assert``, ``bool()``), unpacked, or
    compared (``== True``, ``is None``) -- where a ``bool`` that became a tuple changes meaning."""
    up = parent.get(id(node))
    if isinstance(up, (ast.If, ast.While, ast.IfExp, ast.Assert)) and up.test is node:
        return _use("truth", node)
    if isinstance(up, ast.UnaryOp) and isinstance(up.op, ast.Not):
        return _use("truth", up)
    if isinstance(up, ast.BoolOp) or (
        isinstance(up, ast.Call) and dotted(up.func) == "bool" and up.args == [node]
    ):
        return _use("truth", up)
    if isinstance(up, ast.comprehension) and node in up.ifs:
        return _use("truth", node)
    if isinstance(up, ast.Assign) and isinstance(up.targets[0], (ast.Tuple, ast.List)):
        return _use("unpack", up)
    if isinstance(up, ast.Compare) and len(up.ops) == 1:
        return _use("compare", up)
    return None


def self_attributes(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, int]:
    """Attributes a function reads on its first parameter and never sets itself -> first line."""
    first = (fn.args.posonlyargs or fn.args.args)[0].arg
    loads: dict[str, int] = {}
    stores: set[str] = set()
    for n in walk(fn):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == first:
            if isinstance(n.ctx, ast.Load):
                loads.setdefault(n.attr, n.lineno)
            else:
                stores.add(n.attr)
    return {a: ln for a, ln in loads.items() if a not in stores and not a.startswith("__")}


def attributes_set_on(fn: ast.AST, obj: str) -> set[str]:
    """The attributes ``fn`` assigns on the object spelled ``obj`` (``self.model``)."""
    return {
        t.attr
        for n in walk(fn)
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Attribute) and ast.unparse(t.value) == obj
    }


def line_scopes(tree: ast.Module) -> dict[int, str]:
    """Line -> innermost enclosing def/class qualname (for findings' ``scope``)."""
    out: dict[int, str] = {}

    def visit(node: ast.AST, qual: str) -> None:
        for c in children(node):
            if isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = c.name if qual == "<module>" else f"{qual}.{c.name}"
                for ln in range(c.lineno, (c.end_lineno or c.lineno) + 1):
                    out[ln] = inner
                visit(c, inner)
            else:
                visit(c, qual)

    visit(tree, "<module>")
    return out


def annotation_union(node: ast.expr) -> list[ast.expr]:
    """Members of ``A | B``, ``Optional[A]``, ``Union[A, B]`` (else the node itself)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return annotation_union(node.left) + annotation_union(node.right)
    if isinstance(node, ast.Subscript):
        head = dotted(node.value).split(".")[-1]
        inner = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if head == "Optional":
            return [*inner, ast.Constant(None)]
        if head == "Union":
            return [m for e in inner for m in annotation_union(e)]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return annotation_union(ast.parse(node.value, mode="eval").body)
        except SyntaxError:
            return [node]
    return [node]


def early_install_queries(tree: ast.Module) -> list[list[str]]:
    """The attribute sets of ``obj.x = types.MethodType(f, obj)`` installs in a module, read
    from the tree alone (no name resolution) -- the same sets ``_installs`` records."""
    functions = {
        st.name: st for st in tree.body if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    out: list[list[str]] = []
    for fn in walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in walk(fn):
            if not (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Attribute)
                and isinstance(node.value, ast.Call)
                and dotted(node.value.func).split(".")[-1] == "MethodType"
                and len(node.value.args) == 2
                and isinstance(node.value.args[0], ast.Name)
            ):
                continue
            func = functions.get(node.value.args[0].id)
            if func is None or not (func.args.posonlyargs or func.args.args):
                continue
            obj = ast.unparse(node.targets[0].value)
            set_here = attributes_set_on(fn, obj)
            attrs = sorted(a for a in self_attributes(func) if a not in set_here)
            if attrs:
                out.append(attrs)
    return out
