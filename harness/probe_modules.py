"""Which modules a probe ships: its imports' closure, read from ``probes/`` with ``ast``.

A probe is a module of ``probes/`` (a folder of ``probes/``, by job) that defines ``run``;
its name is the file's. What it needs on the target is every ``probes.*`` module it imports,
at the top or inside a function (a lazy import runs on the target as much as any), and
theirs, except under ``if TYPE_CHECKING:``, which never runs. The bootstrap
(``probes/_boot.py``) runs the modules in list order with no finder behind them, so a module
comes after every module its own top level imports, and each package before its modules.

Nothing is imported here. The walk parses every file of ``probes/`` (~0.4 s, most of a warm
``check``), so :func:`shipped` keeps its table on disk, under a key made of every file's
(name, mtime, size): a run after the first costs a ``stat`` per file.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
from functools import cache
from pathlib import Path

ROOT = "probes"
#: Files of ``probes/`` that are not shipped as a probe's modules: the bootstrap itself, the
#: kept worker, the run program's start-up hook, and the output checks copied as a folder.
_NOT_MODULES = frozenset({"_boot", "zygote"})
_NOT_FOLDERS = frozenset({"verifiers"})


def _module_name(rel: Path) -> str:
    parts = [ROOT, *rel.with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _files(root: Path) -> dict[str, Path]:
    """Every shippable module of ``root`` (``probes/``), by its dotted name."""
    out: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if rel.parts[0] in _NOT_FOLDERS or "__pycache__" in rel.parts:
            continue
        if len(rel.parts) == 1 and rel.stem in _NOT_MODULES:
            continue
        out[_module_name(rel)] = path
    return out


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _statements(node: ast.AST) -> list[ast.AST]:
    """The statements (and ``except``/``case`` clauses) directly inside ``node``: an import is
    a statement, so expressions are never walked."""
    out: list[ast.AST] = []
    for field in ("body", "orelse", "finalbody", "handlers", "cases"):
        value = getattr(node, field, None)
        if isinstance(value, list):
            out += value
    return out


def _imports(tree: ast.Module, known: dict[str, Path]) -> tuple[set[str], set[str]]:
    """``(top, lazy)``: the ``probes`` modules imported when the module runs, and those
    imported only inside a function."""
    top: set[str] = set()
    lazy: set[str] = set()

    def named(module: str, names: list[str]) -> set[str]:
        subs = {f"{module}.{n}" for n in names if f"{module}.{n}" in known}
        return subs if subs else ({module} if module in known else set())

    def visit(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, ast.If) and _type_checking(node):
            for other in node.orelse:
                visit(other, in_function)
            return
        found: set[str] = set()
        if isinstance(node, ast.Import):
            found = {a.name for a in node.names if a.name in known}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found = named(node.module, [a.name for a in node.names])
        (lazy if in_function else top).update(found)
        inner = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        for child in _statements(node):
            visit(child, inner)

    visit(tree, False)
    return top, lazy - top


@cache
def _walk(root: Path) -> dict[str, tuple[frozenset[str], frozenset[str], bool]]:
    """Each module's ``(top, lazy, defines run)``, every file parsed once."""
    files = _files(root)
    graph = {}
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top, lazy = _imports(tree, files)
        top.discard(name)
        lazy.discard(name)
        runs = any(isinstance(n, ast.FunctionDef) and n.name == "run" for n in tree.body)
        graph[name] = (frozenset(top), frozenset(lazy), runs)
    return graph


def _graph(root: Path) -> dict[str, tuple[frozenset[str], frozenset[str]]]:
    return {name: (top, lazy) for name, (top, lazy, _) in _walk(root).items()}


def _packages(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def probe_names(root: Path) -> dict[str, str]:
    """Every probe (a module that defines ``run``), by name: its dotted module."""
    return {name.rpartition(".")[2]: name for name, (*_, runs) in _walk(root).items() if runs}


def closure(root: Path, main: str) -> tuple[str, ...]:
    """The dotted modules ``main`` needs on the target, in an order the bootstrap can run:
    packages first, each module after those its top level imports, ``main`` last."""
    graph = _graph(root)
    need: set[str] = set()
    todo = [main]
    while todo:
        mod = todo.pop()
        if mod in need:
            continue
        need.add(mod)
        for dep in (*graph[mod][0], *graph[mod][1], *_packages(mod)):
            if dep in graph and dep not in need:
                todo.append(dep)
    order: list[str] = []
    placed: set[str] = set()

    def place(mod: str, path: tuple[str, ...]) -> None:
        if mod in placed:
            return
        if mod in path:
            raise ValueError(f"probes: a top-level import cycle: {' -> '.join((*path, mod))}")
        for dep in sorted({*graph[mod][0], *_packages(mod)} & need):
            place(dep, (*path, mod))
        placed.add(mod)
        order.append(mod)

    for mod in sorted(need - {main}):
        place(mod, ())
    place(main, ())
    return tuple(order)


def shipped(root: Path, store: Path | None) -> dict[str, tuple[str, ...]]:
    """Every probe's :func:`closure`, by probe name -- read from ``store`` (a folder) when it
    holds the table for these very files (and this very module), else computed and written
    there. A store that cannot be read or written only costs the walk."""
    files = [*_files(root).values(), Path(__file__)]
    stamp = [(str(p), st.st_mtime_ns, st.st_size) for p in files for st in (p.stat(),)]
    digest = hashlib.sha256(json.dumps(stamp).encode()).hexdigest()[:32]
    path = store / f"probe-modules-{digest}.json" if store is not None else None
    if path is not None:
        try:
            got = json.loads(path.read_text(encoding="utf-8"))
            return {name: tuple(mods) for name, mods in got.items()}
        except (OSError, ValueError, AttributeError, TypeError):
            pass
    _walk.cache_clear()  # the files changed since this process last walked them, maybe
    table = {name: closure(root, main) for name, main in probe_names(root).items()}
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            part = path.with_name(f".{path.name}.{os.getpid()}")
            part.write_text(json.dumps(table), encoding="utf-8")
            os.replace(part, path)
        except OSError:
            pass
    return table
