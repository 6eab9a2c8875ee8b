"""The shape of the code: no import cycle among harness/ modules, no module doing five jobs.

Imports are read with ``ast`` (nothing is imported): every ``import`` and ``from ... import``
anywhere in a module -- a function's lazy import counts as much as one at the top, because a
cycle through a lazy import is still two modules that cannot be understood apart -- except
under ``if TYPE_CHECKING:``, which only names types. ``from pkg import name`` is an edge to
``pkg.name`` when that is a module, else to ``pkg``.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "harness"
PROBES = REPO / "probes"
#: A module longer than this does several jobs (DESIGN.md: split past ~400 lines).
MAX_LINES = 400
#: What a probe over MAX_LINES says in its docstring, with the reason it stays one file.
ONE_FILE = "Why one file:"
#: Probes over MAX_LINES not split yet (each a large AST visitor or transaction class), with
#: their size as a ceiling: they may shrink, not grow, and no other probe may join them.
NOT_SPLIT_YET = {
    "callsites.py": 871,
    "_describe.py": 620,
    "signatures.py": 539,
    "patchops.py": 563,
}


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(
    tree: ast.AST, package: str, type_checking: bool = False
) -> list[tuple[str, list[str]]]:
    """``(module, names)`` of every import outside ``if TYPE_CHECKING:`` blocks (inside them
    too with ``type_checking``)."""
    found: list[tuple[str, list[str]]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking(node) and not type_checking:
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((a.name, []) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            found.append((base, [a.name for a in node.names]))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def import_graph(type_checking: bool = False) -> dict[str, set[str]]:
    mods = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: set[str] = set()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for module, names in _imports(tree, package, type_checking):
            subs = [f"{module}.{n}" for n in names if f"{module}.{n}" in mods]
            if subs:
                edges.update(subs)
            if len(subs) < len(names) or not names:
                # the nearest harness module that holds the imported names
                probe = module
                while probe and probe not in mods:
                    probe = probe.rpartition(".")[0]
                if probe:
                    edges.add(probe)
        edges.discard(name)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            child = next(it, None)
            if child is not None:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_the_cycle_finder_finds_cycles() -> None:
    """The checker itself: a planted two- and three-module cycle are both reported."""
    graph = {"a": {"b"}, "b": {"a", "c"}, "c": set(), "x": {"y"}, "y": {"z"}, "z": {"x"}}
    assert sorted(cycles(graph)) == [["a", "b"], ["x", "y", "z"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_the_import_walk_sees_lazy_imports_and_skips_type_checking() -> None:
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from harness.targets.ssh import SshTarget\n"
        "def f():\n    from harness.runs import remote\n"
    )
    got = _imports(tree, "harness.x")
    assert ("harness.runs", ["remote"]) in got
    assert not any(m == "harness.targets.ssh" for m, _ in got)


def test_no_import_cycle_among_harness_modules() -> None:
    graph = import_graph()
    assert "harness.targets.base" in graph and graph["harness.cli"]  # the walk saw the code
    assert cycles(graph) == []


#: Cycles that only ``if TYPE_CHECKING:`` imports close, left to the work that removes them:
#: the rules type their argument as the ``Checker`` that imports them (issue 23, part 4: rules
#: return findings). A ceiling: these may shrink or go, and no other cycle may join them.
_RULES = ("api_drift", "attributes", "calls", "defaults", "forwards", "imports", "installs",
          "overrides", "returns")  # fmt: skip
TYPE_ONLY_CYCLES_LEFT = [
    ["harness.analysis.checker", *(f"harness.analysis.rules.{r}" for r in _RULES)]
]


def test_no_import_cycle_even_through_type_checking_imports() -> None:
    """A type named under ``if TYPE_CHECKING:`` still ties two modules together: the one that
    names it cannot be read without the other."""
    graph = import_graph(type_checking=True)
    known = [set(k) for k in TYPE_ONLY_CYCLES_LEFT]
    left = [c for c in cycles(graph) if not any(set(c) <= k for k in known)]  # grown: left
    assert left == []


#: The layers below the command line, and what they may not import: a target or a run is
#: used by views, groups and the CLI, never the other way round.
LOWER = ("harness.targets", "harness.runs")
UPPER = ("harness.group", "harness.views", "harness.cli")


def _within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def test_no_upward_import_from_targets_or_runs() -> None:
    graph = import_graph(type_checking=True)
    upward = sorted(
        f"{m} -> {dep}"
        for m, deps in graph.items()
        if _within(m, LOWER)
        for dep in deps
        if _within(dep, UPPER)
    )
    assert graph["harness.targets.registry"]  # the walk saw the lower layers
    assert upward == []


def test_the_layer_check_sees_lazy_and_type_checking_imports() -> None:
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from harness.views.runs import StreamView\n"
        "def f():\n    from harness.group import spec\n"
    )
    got = [m for m, _ in _imports(tree, "harness.runs", type_checking=True)]
    assert "harness.views.runs" in got and "harness.group" in got
    assert _within("harness.views.runs", UPPER) and not _within("harness.viewsx", UPPER)


def test_no_module_does_five_jobs() -> None:
    long = {
        str(path.relative_to(REPO)): n
        for path in sorted(PACKAGE.rglob("*.py"))
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def test_a_long_probe_says_why_it_stays_one_file() -> None:
    """Probes ship as a list of modules (harness.probe_runner.PROBE_MODULES); one longer than
    a harness module may be says in its docstring why it cannot be split, or is listed in
    NOT_SPLIT_YET (and may not grow)."""
    unexplained, grown = [], []
    for path in sorted(PROBES.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        n = len(text.splitlines())
        if n <= MAX_LINES or ONE_FILE in (ast.get_docstring(ast.parse(text)) or ""):
            continue
        if path.name not in NOT_SPLIT_YET:
            unexplained.append(path.name)
        elif n > NOT_SPLIT_YET[path.name]:
            grown.append(f"{path.name}: {n} lines")
    assert (unexplained, grown) == ([], [])


def test_every_import_of_a_harness_name_resolves() -> None:
    """A lazy ``from harness.x import y`` (inside a function, so importing the module does not
    run it) names a module and a name that exist -- mypy's ``ignore_missing_imports`` would
    let a moved module's old path through."""
    import importlib

    broken = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module):
                continue
            if node.module.split(".")[0] != "harness":
                continue
            where = f"{path.relative_to(REPO)}:{node.lineno}"
            try:
                module = importlib.import_module(node.module)
            except ImportError as exc:
                broken.append(f"{where}: {exc}")
                continue
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                if not hasattr(module, alias.name):
                    try:
                        importlib.import_module(name)
                    except ImportError:
                        broken.append(f"{where}: no {alias.name} in {node.module}")
    assert broken == []


def test_one_launch_path() -> None:
    """A run starts on a target in one place (``harness.group.start``, and the Ray cluster a
    run owns): a step feature written there holds on one host and across hosts alike."""
    callers = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            f = node.func if isinstance(node, ast.Call) else None
            name = ast.unparse(f) if isinstance(f, ast.Attribute) else ""
            if name == "remote.launch":
                callers.add(str(path.relative_to(REPO)))
    assert callers == {"harness/group/start.py", "harness/group/ray.py"}
