"""Modules a package makes at import by calling a function: importable, with no file.

transformers 5's ``__init__`` keeps old module paths working with
``_create_module_alias(f"{__name__}.tokenization_utils", ".tokenization_utils_sentencepiece")``:
the function puts a ``types.ModuleType`` into ``sys.modules[alias]`` whose ``__getattr__``
returns ``getattr(importlib.import_module(target, __name__), name)``. So ``from
transformers.tokenization_utils import PreTrainedTokenizer`` works at run time, and reading the
files alone says "no module". Such a function is recognised by what it does -- it stores into
``sys.modules[<its parameter>]`` and calls ``import_module(<another parameter>, ...)`` -- and
each module-level call whose two arguments are known strings (a literal, an f-string of
``__name__``) makes one alias. A call with computed arguments (a loop over files) makes none
that can be read: such a module stays missing, as before.
"""

from __future__ import annotations

import ast
from typing import Any

from probes.signatures._syntax import dotted, resolve_relative


def factories(tree: ast.Module) -> dict[str, tuple[int, int]]:
    """Functions of the module (at any depth of its module-level blocks) that register a
    forwarding module: name -> (position of the alias parameter, of the target parameter)."""
    out: dict[str, tuple[int, int]] = {}
    for fn in _module_level(tree.body, defs=True):
        if not isinstance(fn, ast.FunctionDef):
            continue
        params = [a.arg for a in fn.args.args]
        stored = imported = None
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if (
                        isinstance(t, ast.Subscript)
                        and dotted(t.value) == "sys.modules"
                        and isinstance(t.slice, ast.Name)
                        and t.slice.id in params
                    ):
                        stored = params.index(t.slice.id)
            if (
                isinstance(node, ast.Call)
                and dotted(node.func).split(".")[-1] == "import_module"
                and node.args
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id in params
            ):
                imported = params.index(node.args[0].id)
        if stored is not None and imported is not None and stored != imported:
            out[fn.name] = (stored, imported)
    return out


def aliases(tree: ast.Module, package: str) -> dict[str, str]:
    """alias module -> the module it forwards to, for each module-level call of a factory
    whose arguments are known strings (``__name__`` is ``package``: this is its ``__init__``)."""
    made = factories(tree)
    out: dict[str, str] = {}
    for st in _module_level(tree.body, defs=False):
        for node in ast.walk(st):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            where = made.get(node.func.id)
            if where is None or len(node.args) <= max(where):
                continue
            alias = string_of(node.args[where[0]], package)
            target = string_of(node.args[where[1]], package)
            if alias and target:
                out[alias] = absolute(target, package)
    return out


def string_of(node: ast.expr, package: str) -> str | None:
    """A literal string, or an f-string whose only value is ``__name__``; else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if not isinstance(node, ast.JoinedStr):
        return None
    parts: list[str] = []
    for v in node.values:
        if isinstance(v, ast.Constant) and isinstance(v.value, str):
            parts.append(v.value)
        elif isinstance(v, ast.FormattedValue) and dotted(v.value) == "__name__":
            parts.append(package)
        else:
            return None
    return "".join(parts)


def absolute(target: str, package: str) -> str:
    """``importlib.import_module(target, package)``'s module name."""
    level = len(target) - len(target.lstrip("."))
    return resolve_relative(package, True, level, target[level:] or None) if level else target


def _module_level(body: list[ast.stmt], defs: bool) -> list[ast.stmt]:
    """Statements that run when the module does (inside ``if``/``else``/``try``/``for``
    blocks too), never a function's body; with ``defs``, only the ``def``s among them."""
    out: list[ast.stmt] = []
    for st in body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if defs:
                out.append(st)
            continue
        blocks: list[Any] = [getattr(st, f, None) or [] for f in ("body", "orelse", "finalbody")]
        blocks += [h.body for h in getattr(st, "handlers", None) or []]
        inner = [c for b in blocks for c in _module_level(b, defs)]
        out += inner if defs or inner else [st]  # a simple statement stands for itself
    return out


class Aliases:
    """The aliases the packages of one scan make, read from each ``__init__`` once."""

    def __init__(self, index: Any) -> None:
        self.index = index
        self._of: dict[str, dict[str, str]] = {}

    def target(self, module: str) -> str | None:
        """What ``module`` forwards to, when an ancestor package's ``__init__`` makes it (the
        import runs every ancestor's ``__init__`` first); None when nothing does."""
        parts = module.split(".")
        for i in range(1, len(parts)):
            package = ".".join(parts[:i])
            if package not in self._of:
                mod = self.index.module(package)
                ok = mod is not None and mod.loc.is_package and mod.loc.file.endswith(".py")
                self._of[package] = aliases(mod.tree, package) if ok else {}
            got = self._of[package].get(module)
            if got is not None:
                return got
        return None
