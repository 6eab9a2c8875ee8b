"""``dataclasses.replace(obj, name=value)``: a call of ``type(obj)`` with every field of ``obj``
and the names given.

span-marker 1.8.1 runs ``dataclasses.replace(args, include_inputs_for_metrics=True)`` on a
``transformers.TrainingArguments``; transformers 5 dropped the field, and ``replace`` raises
what the synthesized ``__init__`` raises: ``TypeError: ... unexpected keyword argument``. The
call is recorded as a call of the object's class whose other keywords come from a ``**`` the
binder cannot read (``**vars(obj)``): a removed or renamed field is an unexpected keyword, and
no field is reported missing.
"""

from __future__ import annotations

import ast
from typing import Any

from probes.signatures._syntax import dotted

Ref = tuple
_REPLACE = frozenset({"dataclasses.replace", "copy.replace"})


def replaced(
    env: Any, node: ast.Call, local: dict, cls: dict | None
) -> tuple[Ref | None, ast.Call]:
    """(the callee class ``obj`` is an instance of, ``Class(**vars(obj), name=value)``) for a
    ``replace(obj, ...)`` call on a callee instance; else (what ``node.func`` refers to,
    ``node`` unchanged)."""
    name = dotted(node.func)
    if not name or len(node.args) != 1 or not node.keywords or not name.endswith("replace"):
        return env.ref(node.func, local, cls), node
    full = env.callees.index.resolve_dotted(env.module, name) if env.module else name
    obj = env.ref(node.args[0], local, cls) if full in _REPLACE else None
    if not obj or obj[0] != "instance" or len(obj) > 3 or not env.callees.is_callee(obj[1]):
        return env.ref(node.func, local, cls), node
    fields = ast.keyword(arg=None, value=ast.Call(ast.Name("vars", ast.Load()), node.args, []))
    made = ast.Call(func=node.func, args=[], keywords=[*node.keywords, fields])
    return ("symbol", obj[1], obj[2]), ast.copy_location(made, node)
