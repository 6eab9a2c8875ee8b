"""Keys the caller reads from a dict view of a callee object: ``cfg.to_dict()["field"]``.

A view -- ``obj.to_dict()``, ``obj.model_dump()``, ``dataclasses.asdict(obj)``, ``vars(obj)``,
``obj.__dict__`` -- has the object's fields as keys; when a release drops a field, the key is
gone and ``d["field"]`` raises KeyError. Recorded: a read that raises on a missing key
(``view["k"]``, ``view.pop("k")``, ``del view["k"]``), on the view itself or through a name
bound to it; not one that cannot (``.get("k")``, ``.pop("k", None)``), nor a key the code tests
(``"k" in d``) or writes, nor any key of a dict handed to another call first (it may fill it).
"""

from __future__ import annotations

import ast
from typing import Any

from probes._walk import children, walk
from probes.signatures._syntax import dotted

#: method views (``obj.to_dict()``) and function views (``asdict(obj)``)
METHOD_VIEWS = frozenset({"to_dict", "model_dump", "dict"})
FUNCTION_VIEWS = frozenset({"asdict", "vars"})
#: the attribute names a view is spelt with (``x.to_dict``, ``dataclasses.asdict``, ``x.__dict__``)
VIEW_ATTRS = METHOD_VIEWS | FUNCTION_VIEWS | {"__dict__"}
#: text that must appear in a file for any view to be there (spares the walk elsewhere)
MARKS = ("to_dict", "model_dump", ".dict(", "asdict", "vars(", "__dict__")


def view_of(node: ast.AST) -> tuple[ast.expr, str] | None:
    """``(object, view)`` when ``node`` is a dict view of an object, else None."""
    if isinstance(node, ast.Call) and not node.keywords:
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in METHOD_VIEWS and not node.args:
            return f.value, f.attr
        name = dotted(f).split(".")[-1]
        if name in FUNCTION_VIEWS and len(node.args) == 1:
            return node.args[0], name
    if (
        isinstance(node, ast.Attribute)
        and node.attr == "__dict__"
        and isinstance(node.ctx, ast.Load)
    ):
        return node.value, "__dict__"
    return None


def _const(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def direct_read(view: ast.AST, parent: dict[int, ast.AST]) -> tuple[str, str, ast.AST] | None:
    """``(key, how, node)`` when the view itself is read by a key that must be there."""
    up = parent.get(id(view))
    if isinstance(up, ast.Subscript) and up.value is view and isinstance(up.ctx, ast.Load):
        key = _const(up.slice)
        return (key, "subscript", up) if key else None
    if isinstance(up, ast.Attribute) and up.attr == "pop":
        call = parent.get(id(up))
        if isinstance(call, ast.Call) and call.func is up and len(call.args) == 1:
            key = _const(call.args[0])
            return (key, "pop", call) if key and not call.keywords else None
    return None


def name_reads(scope: ast.AST, name: str, line: int) -> list[tuple[str, str, ast.AST]]:
    """Reads of ``name`` (bound to a view at ``line``) by a key that must be there, until it is
    bound again; none for keys the scope tests or writes, none after it is passed on (or
    written by keys we cannot read): a read before that raises all the same (``d.pop("k")``
    then ``Config(**d)``), unless a loop may bring the later line round first."""
    parent: dict[int, ast.AST] = {}
    loads: list[ast.Name] = []
    until = 10**9
    for node in walk(scope):
        for c in children(node):
            parent[id(c)] = node
        if isinstance(node, ast.Name) and node.id == name:
            if isinstance(node.ctx, ast.Load):
                loads.append(node)
            elif node.lineno > line:
                until = min(until, node.lineno)
    reads: list[tuple[str, str, ast.AST]] = []
    spared: set[str] = set()
    spoiled = until  # from this line on another hand may have filled it
    for n in sorted(loads, key=lambda x: (x.lineno, x.col_offset)):
        if not line < n.lineno <= until:
            continue
        if n.lineno > spoiled:
            break
        up = parent.get(id(n))
        if isinstance(up, ast.Subscript) and up.value is n:
            key = _const(up.slice)
            if isinstance(up.ctx, ast.Load) and key:
                reads.append((key, "subscript", up))
            elif isinstance(up.ctx, ast.Del) and key:
                reads.append((key, "del", up))
            elif key:
                spared.add(key)  # written: there from here on
            else:
                spoiled = n.lineno  # d[k] = ... with a key we cannot read
        elif isinstance(up, ast.Attribute):
            call = parent.get(id(up))
            args = call.args if isinstance(call, ast.Call) and call.func is up else []
            key = _const(args[0]) if args else None
            if up.attr == "pop" and len(args) == 1 and key:
                reads.append((key, "pop", call))
            elif up.attr in ("get", "pop", "setdefault") and key:
                spared.add(key)
            elif up.attr in ("keys", "items", "values", "copy", "get"):
                continue
            else:
                spoiled = n.lineno  # update(), clear(), ...: keys we cannot name come or go
        elif isinstance(up, ast.Compare) and any(
            isinstance(o, (ast.In, ast.NotIn)) for o in up.ops
        ):
            if up.left is not n and _const(up.left):
                spared.add(_const(up.left) or "")
        elif isinstance(up, (ast.For, ast.comprehension, ast.Starred)) or (
            isinstance(up, ast.Call) and dotted(up.func) in ("len", "print", "list", "sorted")
        ):
            continue
        else:
            spoiled = n.lineno  # passed on, returned, stored: another hand may fill it
    if spoiled < until and any(_in_loop(r[2], parent, scope) for r in reads):
        return []  # a later line may run before a read, on the loop's next turn
    return [r for r in reads if r[0] not in spared and r[2].lineno < spoiled]


def _in_loop(node: ast.AST, parent: dict[int, ast.AST], scope: ast.AST) -> bool:
    up = parent.get(id(node))
    while up is not None and up is not scope:
        if isinstance(up, (ast.For, ast.AsyncFor, ast.While)):
            return True
        up = parent.get(id(up))
    return False


def record(
    visitor: Any, st: ast.stmt, scope: str, local: dict, cls: dict | None
) -> list[dict[str, Any]]:
    """The key reads of views in one statement of ``visitor``'s file (``FileVisitor``)."""
    parent: dict[int, ast.AST] = {}
    views: list[tuple[ast.AST, ast.expr, str]] = []
    todo: list[ast.AST] = [c for c in children(st) if not isinstance(c, ast.stmt)]
    for c in todo:
        parent[id(c)] = st
    while todo:  # the statement's own expressions: nested statements are visited on their own
        node = todo.pop()
        got = view_of(node)
        if got is not None:
            views.append((node, *got))
        for c in children(node):
            if not isinstance(c, (ast.stmt, ast.Lambda)):
                parent[id(c)] = node
                todo.append(c)
    out: list[dict[str, Any]] = []
    for node, obj, view in views:
        r = visitor.env.ref(obj, local, cls)
        if not (r and r[0] == "instance" and len(r) == 3 and visitor.callees.is_callee(r[1])):
            continue
        reads: list[tuple[str, str, ast.AST]] = []
        direct = direct_read(node, parent)
        if direct is not None:
            reads.append(direct)
        up = parent.get(id(node))
        if (
            isinstance(up, ast.Assign)
            and up.value is node
            and len(up.targets) == 1
            and isinstance(up.targets[0], ast.Name)
        ):
            where = visitor._fn if visitor._fn is not None else visitor.tree
            reads += name_reads(where, up.targets[0].id, up.lineno)
        for key, how, at in reads:
            out.append(
                {
                    **visitor.site(at, scope),
                    "ref": ("symbol", r[1], r[2]),
                    "view": view,
                    "key": key,
                    "how": how,
                    "view_line": getattr(node, "lineno", 0),
                }
            )
    return out
