"""Modules a package makes at import by calling a function: importable, with no file.

transformers 5's ``__init__`` keeps old module paths working with
``_create_module_alias(f"{__name__}.tokenization_utils", ".tokenization_utils_sentencepiece")``:
the function puts a ``types.ModuleType`` into ``sys.modules[alias]`` whose ``__getattr__``
returns ``getattr(importlib.import_module(target, __name__), name)``. So ``from
transformers.tokenization_utils import PreTrainedTokenizer`` works at run time, and reading the
files alone says "no module". Such a function is recognised by what it does -- it stores into
``sys.modules[<its parameter>]`` and calls ``import_module(<another parameter>, ...)`` -- and
each module-level call whose two arguments are known strings (a literal, an f-string of
``__name__``) makes one alias. A call in a module-level ``for`` over the package's own files
(transformers 5.17's ``for _proc_file in sorted((Path(__file__).parent /
"models").rglob("image_processing_*.py"))``, then ``_model = _proc_file.parent.name``,
``_module = _proc_file.stem``) makes one per file: the loop is run over the files there, with
the body's plain assignments of names, path parts and f-strings. Anything else computed makes
none that can be read: such a module stays missing.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from probes.signatures._suffix_fallback import SuffixRule, suffix_rules
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


def aliases(tree: ast.Module, package: str, init_file: str | None = None) -> dict[str, str]:
    """alias module -> the module it forwards to, for each module-level call of a factory
    whose arguments are known strings (``__name__`` is ``package``: this is its ``__init__``,
    at ``init_file`` when known: then a loop over the package's files is run too)."""
    return read_aliases(tree, package, init_file)[0]


def read_aliases(
    tree: ast.Module, package: str, init_file: str | None = None
) -> tuple[dict[str, str], dict[str, list[SuffixRule]]]:
    """:func:`aliases`, and the suffix fallbacks a loop gives an alias's own ``__getattr__``
    (``sys.modules[alias].__getattr__ = factory(target)``: :mod:`._suffix_fallback`)."""
    made = factories(tree)
    out: dict[str, str] = {}
    rules: dict[str, list[SuffixRule]] = {}
    if not made:
        return out, rules
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
    if init_file is not None:
        for loop in _module_loops(tree.body):
            out.update(_loop_aliases(loop, made, package, init_file, rules))
    return out, rules


def _module_loops(body: list[ast.stmt]) -> list[ast.For]:
    """The ``for`` statements that run when the module does (in ``if``/``try`` blocks too)."""
    out: list[ast.For] = []
    for st in body:
        if isinstance(st, ast.For):
            out.append(st)
        elif not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            blocks = [getattr(st, f, None) or [] for f in ("body", "orelse", "finalbody")]
            blocks += [h.body for h in getattr(st, "handlers", None) or []]
            out += [loop for b in blocks for loop in _module_loops(b)]
    return out


#: the most files one loop is run over (transformers 5.17: ~330 image processors)
_LOOP_FILES = 5000


def _loop_aliases(
    loop: ast.For,
    made: dict[str, tuple[int, int]],
    package: str,
    init_file: str,
    rules: dict[str, list[SuffixRule]],
) -> dict[str, str]:
    """The aliases a ``for`` over the package's own files makes, each file in turn; into
    ``rules``, the suffix fallbacks of the ``__getattr__`` it gives one."""
    if not isinstance(loop.target, ast.Name):
        return {}
    files = _files_of(loop.iter, init_file)
    if not files:
        return {}
    out: dict[str, str] = {}
    defs = {st.name: st for st in loop.body if isinstance(st, ast.FunctionDef)}
    served = {name: _returned_rules(fn) for name, fn in defs.items()}
    for f in files[:_LOOP_FILES]:
        env: dict[str, Any] = {loop.target.id: f}
        for st in loop.body:
            if isinstance(st, ast.Assign) and len(st.targets) == 1:
                t = st.targets[0]
                if isinstance(t, ast.Name):
                    env[t.id] = _value(st.value, env, package)
                elif (alias := _getattr_of(t, env, package)) and isinstance(st.value, ast.Call):
                    fn = st.value.func
                    if isinstance(fn, ast.Name) and served.get(fn.id):
                        rules[alias] = served[fn.id]
            elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
                call = st.value
                where = made.get(call.func.id) if isinstance(call.func, ast.Name) else None
                if where is None or len(call.args) <= max(where):
                    continue
                alias = _value(call.args[where[0]], env, package)
                target = _value(call.args[where[1]], env, package)
                if isinstance(alias, str) and isinstance(target, str) and alias and target:
                    out[alias] = absolute(target, package)
    return out


def _getattr_of(t: ast.expr, env: dict[str, Any], package: str) -> str | None:
    """``sys.modules[<alias>].__getattr__`` as an assignment target: the alias."""
    if not (isinstance(t, ast.Attribute) and t.attr == "__getattr__"):
        return None
    sub = t.value
    if not (isinstance(sub, ast.Subscript) and dotted(sub.value) == "sys.modules"):
        return None
    got = _value(sub.slice, env, package)
    return got if isinstance(got, str) else None


def _returned_rules(factory: ast.FunctionDef) -> list[SuffixRule]:
    """The suffix fallbacks of the function ``factory`` defines and returns."""
    inner = {st.name: st for st in factory.body if isinstance(st, ast.FunctionDef)}
    for st in factory.body:
        if isinstance(st, ast.Return) and isinstance(st.value, ast.Name) and st.value.id in inner:
            return suffix_rules(inner[st.value.id])
    return []


def _files_of(node: ast.expr, init_file: str) -> list[Path]:
    """``sorted(P.rglob(pattern))`` / ``P.glob(pattern)`` (in ``sorted``/``list`` or not)
    for a path ``P`` made from ``Path(__file__)``: the files there, in order; else []."""
    if isinstance(node, ast.Call) and dotted(node.func) in ("sorted", "list") and node.args:
        node = node.args[0]
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("rglob", "glob")
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return []
    root = _path_of(node.func.value, init_file)
    if root is None or not root.is_dir():
        return []
    found = (
        root.rglob(node.args[0].value)
        if node.func.attr == "rglob"
        else root.glob(node.args[0].value)
    )
    return sorted(found)


def _path_of(node: ast.expr, init_file: str) -> Path | None:
    """``Path(__file__)``, its ``.parent``/``.resolve()``, and ``/ "literal"`` of those."""
    if isinstance(node, ast.Call) and dotted(node.func).split(".")[-1] == "Path" and node.args:
        arg = node.args[0]
        return Path(init_file) if isinstance(arg, ast.Name) and arg.id == "__file__" else None
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        inner = _path_of(node.value, init_file)
        return inner.parent if inner is not None else None
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and not node.args
        and node.func.attr in ("resolve", "absolute")
    ):
        return _path_of(node.func.value, init_file)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        left = _path_of(node.left, init_file)
        right = node.right
        if left is not None and isinstance(right, ast.Constant) and isinstance(right.value, str):
            return left / right.value
    return None


def _value(node: ast.expr, env: dict[str, Any], package: str) -> Any:
    """A loop body's value: a name bound before, a path's ``.parent``/``.name``/``.stem``, a
    string, an f-string of those and ``__name__``; None when it is anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return package if node.id == "__name__" else env.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _value(node.value, env, package)
        if isinstance(base, Path) and node.attr in ("parent", "name", "stem"):
            return getattr(base, node.attr)
        return None
    if isinstance(node, ast.JoinedStr):
        parts: list[str] = []
        for v in node.values:
            got = (
                _value(v.value, env, package)
                if isinstance(v, ast.FormattedValue)
                and v.conversion == -1
                and v.format_spec is None
                else (v.value if isinstance(v, ast.Constant) else None)
            )
            if not isinstance(got, str):
                return None
            parts.append(got)
        return "".join(parts)
    return None


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
        self._of: dict[str, tuple[dict[str, str], dict[str, list[SuffixRule]]]] = {}

    def target(self, module: str) -> str | None:
        """What ``module`` forwards to, when an ancestor package's ``__init__`` makes it (the
        import runs every ancestor's ``__init__`` first); None when nothing does."""
        made = self._made(module)
        return made[1][0][module] if made is not None else None

    def renamed(self, module: str, name: str) -> tuple[str, SuffixRule, str] | None:
        """An alias module's ``__getattr__`` serving ``name`` under another name: (that name,
        the rule, the ``__init__`` making it); None when no rule applies."""
        made = self._made(module)
        if made is None:
            return None
        package, (_, rules) = made
        for rule in rules.get(module, ()):
            new = rule.apply(name)
            if new is not None:
                mod = self.index.module(package)
                return new, rule, self.index.rel(mod.loc.file) if mod is not None else ""
        return None

    def _made(
        self, module: str
    ) -> tuple[str, tuple[dict[str, str], dict[str, list[SuffixRule]]]] | None:
        """The ancestor package whose ``__init__`` makes ``module``, with what it makes."""
        parts = module.split(".")
        for i in range(1, len(parts)):
            package = ".".join(parts[:i])
            if package not in self._of:
                mod = self.index.module(package)
                ok = mod is not None and mod.loc.is_package and mod.loc.file.endswith(".py")
                self._of[package] = (
                    read_aliases(mod.tree, package, mod.loc.file) if ok else ({}, {})
                )
            if module in self._of[package][0]:
                return package, self._of[package]
        return None
