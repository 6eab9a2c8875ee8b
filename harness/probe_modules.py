"""Which modules a probe ships: its imports' closure, read from ``probes/`` with ``ast``.

A probe is a module of ``probes/`` (a folder of ``probes/``, by job) that defines ``run``;
its name is the file's. What it needs on the target is every ``probes.*`` module it imports,
at the top or inside a function (a lazy import runs on the target as much as any), and
theirs, except under ``if TYPE_CHECKING:``, which never runs. The bootstrap
(``probes/_boot.py``) runs the modules in list order with no finder behind them, so a module
comes after every module its own top level imports, and each package before its modules.

Nothing is imported here; a probe's walk reads only the files it reaches, each once per
harness process (``harness run`` reads the ``runs`` and ``facts`` probes' ~15 files, not all
of ``probes/``).
"""

from __future__ import annotations

import ast
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


def _imports(tree: ast.Module, known: frozenset[str]) -> tuple[set[str], set[str]]:
    """``(top, lazy)``: the ``probes`` modules imported when the module runs, and those
    imported only inside a function. Only statements are walked (an import is one)."""
    top: set[str] = set()
    lazy: set[str] = set()

    def named(module: str, names: list[str]) -> set[str]:
        subs = {f"{module}.{n}" for n in names if f"{module}.{n}" in known}
        return subs if subs else ({module} if module in known else set())

    def visit(stmts: list[ast.stmt], in_function: bool) -> None:
        for node in stmts:
            if isinstance(node, ast.If) and _type_checking(node):
                visit(node.orelse, in_function)
                continue
            found: set[str] = set()
            if isinstance(node, ast.Import):
                found = {a.name for a in node.names if a.name in known}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found = named(node.module, [a.name for a in node.names])
            (lazy if in_function else top).update(found)
            inner = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            for field in _BODIES:
                block = getattr(node, field, None)
                if block:
                    visit(block, inner)
            for part in (*getattr(node, "handlers", ()), *getattr(node, "cases", ())):
                visit(part.body, inner)

    visit(tree.body, False)
    return top, lazy - top


#: The fields of a statement that hold statements (handlers and match cases: their bodies).
_BODIES = ("body", "orelse", "finalbody")


def _edges(path: Path, names: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
    """One module's ``(top, lazy)`` imports of ``probes`` modules (read once per version of
    the file in a process)."""
    st = path.stat()
    return _edges_of(path, st.st_mtime_ns, st.st_size, names)


@cache
def _edges_of(
    path: Path, _mtime: int, _size: int, names: frozenset[str]
) -> tuple[frozenset[str], frozenset[str]]:
    text = path.read_text(encoding="utf-8")
    if ROOT not in text:  # no import of a probes module can be there: no parse
        return frozenset(), frozenset()
    top, lazy = _imports(ast.parse(text), names)
    return frozenset(top), frozenset(lazy)


def _packages(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _defines_run(path: Path) -> bool:
    text = path.read_text(encoding="utf-8")
    if "def run" not in text:  # no parse for a module that cannot be a probe
        return False
    return any(isinstance(n, ast.FunctionDef) and n.name == "run" for n in ast.parse(text).body)


def probe_names(root: Path) -> dict[str, str]:
    """Every probe (a module that defines ``run``), by name: its dotted module."""
    out: dict[str, str] = {}
    for name, path in _files(root).items():
        if _defines_run(path):
            out[name.rpartition(".")[2]] = name
    return out


def probe_main(root: Path, probe: str) -> str:
    """The dotted module of the probe named ``probe`` (what :func:`probe_names` maps it to),
    reading only the files of that name.

    Raises:
        KeyError: no such probe.
    """
    found = [
        name
        for name, path in _files(root).items()
        if name.rpartition(".")[2] == probe and _defines_run(path)
    ]
    if not found:
        raise KeyError(probe)
    return found[-1]  # as probe_names has it: the last of that name wins


def closure(root: Path, main: str) -> tuple[str, ...]:
    """The dotted modules ``main`` needs on the target, in an order the bootstrap can run:
    packages first, each module after those its top level imports, ``main`` last. Only the
    modules reached are read."""
    files = _files(root)
    names = frozenset(files)
    graph: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
    todo = [main]
    while todo:
        mod = todo.pop()
        if mod in graph:
            continue
        top, lazy = _edges(files[mod], names)
        graph[mod] = (top - {mod}, lazy - {mod})
        for dep in (*graph[mod][0], *graph[mod][1], *_packages(mod)):
            if dep in files and dep not in graph:
                todo.append(dep)
    need = set(graph)
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
