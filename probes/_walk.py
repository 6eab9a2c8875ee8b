"""``ast.walk`` and ``ast.iter_child_nodes`` without their nested generators.

The stdlib's pair costs a generator per node and a tuple per field; a check's probe walks
~200,000 nodes (the caller's files and the callee's classes), and this pair cut its run from
~0.27 to ~0.20 s. Same nodes, same order: breadth first, each node's fields in ``_fields``
order, as the stdlib yields them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

_AST = ast.AST


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk(node)``: ``node`` and every node below it, breadth first."""
    todo = [node]
    add = todo.append
    for n in todo:  # the list grows while it is read: a queue without popping
        for name in n._fields:
            value = getattr(n, name, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, _AST):
                        add(item)
            elif isinstance(value, _AST):
                add(value)
        yield n


def children(node: ast.AST) -> list[ast.AST]:
    """``list(ast.iter_child_nodes(node))``: the direct child nodes, in field order."""
    out: list[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if value.__class__ is list:
            out.extend(item for item in value if isinstance(item, _AST))
        elif isinstance(value, _AST):
            out.append(value)
    return out
