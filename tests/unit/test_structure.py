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


def _modules(root: Path = PACKAGE) -> dict[str, Path]:
    out = {}
    for path in sorted(root.rglob("*.py")):
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


def import_graph(type_checking: bool = False, root: Path = PACKAGE) -> dict[str, set[str]]:
    mods = _modules(root)
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


def test_no_import_cycle_even_through_type_checking_imports() -> None:
    """A type named under ``if TYPE_CHECKING:`` still ties two modules together: the one that
    names it cannot be read without the other. (The last one, the check rules typing their
    argument as the ``Checker`` that imported them, went when rules began returning findings.)"""
    graph = import_graph(type_checking=True)
    assert graph["harness.analysis.checker"]  # the walk saw the rules' side too
    assert cycles(graph) == []


def test_no_import_cycle_among_probe_modules() -> None:
    """probes/ alike, through lazy and ``TYPE_CHECKING`` imports: a probe's modules are read
    (and shipped) as a closure, and a circle makes every module in it ship with every other."""
    graph = import_graph(type_checking=True, root=PROBES)
    assert graph["probes.callsites.callsites"]  # the walk saw the probes
    assert cycles(graph) == []


#: Every folder's floor (docs/ARCHITECTURE.md, "Floors"): a module imports only from a lower
#: floor or its own folder, lazy and ``if TYPE_CHECKING:`` imports included -- an arrow that
#: runs back up, or sideways between two folders of one floor, fails. A new folder (or a new
#: module at the top of ``harness/``) needs its line here.
FLOORS = {
    "harness.__main__": 12,
    "harness.cli": 11,
    "harness.views": 10,
    "harness.launch": 9,
    "harness.group": 8,
    "harness.report": 7, "harness.fixing": 7,
    "harness.runs": 6,
    "harness.reading": 5,
    "harness.patching": 4, "harness.analysis": 4,
    "harness.probe_runner": 3,
    "harness.targets": 2,
    "harness.config": 1, "harness.models": 1, "harness.probe_files": 1,
    "harness.probe_modules": 1,
    "harness": 0, "harness.errors": 0, "harness.vocab": 0, "harness.cache": 0,
    "harness.interrupts": 0, "harness.mdtext": 0,
}  # fmt: skip


def folder_of(module: str, depth: int = 2) -> str:
    """The unit a floor is given to: ``harness.X`` for a package or a top-level module
    (``harness.X.Y`` with ``depth=3``)."""
    return ".".join(module.split(".")[:depth])


def against_the_floors(
    graph: dict[str, set[str]], floors: dict[str, int], depth: int = 2
) -> list[str]:
    """``module -> dep`` for each import that does not go down to a lower floor (its own
    folder aside), and ``module: no floor`` for a module whose folder has no line."""
    bad = sorted(f"{m}: no floor" for m in graph if folder_of(m, depth) not in floors)
    for m, deps in sorted(graph.items()):
        here = folder_of(m, depth)
        for dep in sorted(deps):
            there = folder_of(dep, depth)
            if here in floors and there != here and floors.get(there, 99) >= floors[here]:
                bad.append(f"{m} -> {dep}")
    return bad


def test_every_import_goes_down_a_floor() -> None:
    graph = import_graph(type_checking=True)
    assert graph["harness.targets.registry"] and graph["harness.launch.start"]  # walked
    assert against_the_floors(graph, FLOORS) == []


#: runs/'s folders by job (docs/ARCHITECTURE.md, "Floors"): a run's state and record, the
#: pipeline file, the target's side, following -- each imports only from those below it.
RUNS_FLOORS = {
    "harness.runs.follow": 3,
    "harness.runs.target": 2,
    "harness.runs.pipeline": 1,
    "harness.runs.record": 0,
    "harness.runs": -1,
}  # fmt: skip


def test_runs_folders_import_down_their_floors() -> None:
    graph = import_graph(type_checking=True)
    inside = {m: {d for d in ds if d.startswith("harness.runs")}
              for m, ds in graph.items() if m.startswith("harness.runs")}  # fmt: skip
    assert graph["harness.runs.follow.commands"]  # walked
    assert against_the_floors(inside, RUNS_FLOORS, depth=3) == []


def test_the_floor_check_catches_an_arrow_back_up_or_sideways() -> None:
    """Planted: a run importing the report (up), a reader importing a patcher's peer (sideways
    on one floor), and a folder the table does not know."""
    floors = {"harness.runs": 6, "harness.report": 7, "harness.patching": 4, "harness.analysis": 4}
    graph = {
        "harness.runs.launch": {"harness.report.build", "harness.runs.record.models"},
        "harness.runs.record.models": set(),
        "harness.report.build": {"harness.runs.record.models"},
        "harness.patching.plan": {"harness.analysis.scan"},
        "harness.analysis.scan": set(),
        "harness.newthing.x": set(),
    }
    assert against_the_floors(graph, floors) == [
        "harness.newthing.x: no floor",
        "harness.patching.plan -> harness.analysis.scan",
        "harness.runs.launch -> harness.report.build",
    ]


def test_the_layer_check_sees_lazy_and_type_checking_imports() -> None:
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from harness.views.runs import StreamView\n"
        "def f():\n    from harness.group import spec\n"
    )
    got = [m for m, _ in _imports(tree, "harness.runs", type_checking=True)]
    assert "harness.views.runs" in got and "harness.group" in got
    assert folder_of("harness.views.runs") == "harness.views"


#: probes/'s floors (docs/ARCHITECTURE.md, "Floors"): a probe ships the closure of its imports
#: (harness.probe_modules), so an arrow back up ships a higher folder with a lower probe.
PROBE_FLOORS = {
    "probes.callsites": 3,
    "probes.signatures": 2, "probes.runs": 2, "probes.patching": 2, "probes.verifiers": 2,
    "probes.facts": 1, "probes.live": 1, "probes.compiles": 1, "probes.zygote": 1,
    "probes": 0, "probes._boot": 0, "probes._finder": 0, "probes._walk": 0,
}  # fmt: skip
#: The one arrow back up, with why: signatures/_lookup.py asks callsites' forwards, hierarchy
#: and returns while it resolves a name (inverting it edits the rule-writers' files: issue 45).
PROBE_ARROWS_UP = {
    "probes.signatures._lookup -> probes.callsites._forwards",
    "probes.signatures._lookup -> probes.callsites._hierarchy",
    "probes.signatures._lookup -> probes.callsites._returns",
}


def test_every_probe_import_goes_down_a_floor() -> None:
    graph = import_graph(type_checking=True, root=PROBES)
    assert graph["probes.runs.runs"] and graph["probes.callsites.callsites"]  # walked
    assert set(against_the_floors(graph, PROBE_FLOORS)) == PROBE_ARROWS_UP


def test_every_file_leaves_for_the_target_from_one_module() -> None:
    """What the target runs of probes/ is read in harness/probe_files.py alone (a probe's
    modules, the worker, the run program, the output checks, the smoke hook, the early
    follower, the disk count); probe_runner finds the probes' names and closures there too."""
    callers = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("probes_dir"):
                callers.add(str(path.relative_to(REPO)))
    assert callers == {"harness/probe_files.py", "harness/probe_runner.py"}
    runner = (PACKAGE / "probe_runner.py").read_text(encoding="utf-8")
    assert "read_text" not in runner.replace("path.read_text", "")  # its cache file aside


def test_no_module_does_five_jobs() -> None:
    """harness/ and probes/ alike: a probe ships as a list of modules
    (its imports' closure, harness.probe_modules), so a long one splits like any other."""
    long = {
        str(path.relative_to(REPO)): n
        for path in sorted([*PACKAGE.rglob("*.py"), *PROBES.rglob("*.py")])
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


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


#: Where a word of the two vocabularies is another vocabulary's word, spelled the same.
OTHER_WORDS = {
    ("harness/analysis/uses.py", "deprecated"): "a hop of the probe's import chain",
    ("harness/reading/compare.py", "moved"): "an EntryStatus count of harness diff",
    ("harness/views/reading.py", "moved"): "an EntryStatus count of harness diff",
    ("harness/reading/matrix.py", "drift"): "a matrix row's count of drift findings",
    ("harness/views/matrix.py", "drift"): "the matrix's column header",
    ("harness/views/matrix_html.py", "drift"): "the matrix's column header",
    ("harness/runs/record/verification.py", "drift"): "an output check's report key (values drift)",
}


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
        if isinstance(node, kinds) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def spelled_words(
    words: dict[str, Path],
    root: Path = REPO,
    others: dict[tuple[str, str], str] = OTHER_WORDS,
) -> list[str]:
    """``path:line 'word'`` for each string literal equal to a word, outside the module that
    defines the word's enum (``words``: word -> that module); docstrings do not count, nor
    ``others``: ``(path, word)`` where the word is another vocabulary's."""
    found = []
    for path in sorted((root / "harness").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        rel = str(path.relative_to(root))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                continue
            home = words.get(node.value)
            if home is None or home == path or id(node) in docs:
                continue
            if (rel, node.value) not in others:
                found.append(f"{rel}:{node.lineno} {node.value!r}")
    return found


def test_the_word_finder_skips_docstrings_and_the_enum_module(tmp_path: Path) -> None:
    pkg = tmp_path / "harness"
    pkg.mkdir()
    (pkg / "enum_home.py").write_text('A = "drift"\n')
    (pkg / "user.py").write_text('"""drift"""\ndef f():\n    """drift"""\n    return "drift"\n')
    words = {"drift": pkg / "enum_home.py"}
    assert spelled_words(words, tmp_path) == ["harness/user.py:4 'drift'"]


def test_no_category_or_change_kind_value_spelled_outside_its_enum() -> None:
    """A category or change kind is named by its member (``Category.DRIFT``), so a renamed
    word cannot leave a silent raw string behind."""
    from harness.analysis import apidiff, findings

    words = {c.value: Path(findings.__file__) for c in findings.Category}
    words |= {k.value: Path(apidiff.__file__) for k in apidiff.ChangeKind}
    assert spelled_words(words) == []


#: Where a run state's word is another vocabulary's word, spelled the same.
OTHER_RUN_WORDS = {
    ("harness/reading/matrix.py", "failed"): "a matrix row's key: why a version was not checked",
    ("harness/runs/follow/attach.py", "lost"): "the link event a stream reports (not the run)",
    ("harness/runs/follow/stream.py", "lost"): "the link event a stream reports (not the run)",
    ("harness/targets/mux/streams.py", "lost"): "the kept connection's frame op",
    ("harness/runs/target/remote.py", "killed"): "the stop report's key: the pids it killed",
    ("harness/runs/record/stopped.py", "killed"): "the stop report's key: the pids it killed",
    ("harness/views/runs.py", "killed"): "the stop report's key: the pids it killed",
    ("harness/runs/record/verification.py", "killed"): "the leftovers report's key: pids killed",
    ("harness/runs/record/verification.py", "failed"): "Outcome.FAILED's word and the report's key",
    ("harness/runs/record/written.py", "running"): "a server's requests in flight (its /metrics)",
}


def test_no_run_state_spelled_outside_its_enum() -> None:
    """A run's state is named by its member (``RunState.RUNNING``): a comparison with a
    misspelled or renamed word would be silently false forever."""
    from harness.runs.record import lifecycle

    words = {s.value: Path(lifecycle.__file__) for s in lifecycle.RunState}
    assert set(words) == {"running", "succeeded", "failed", "killed", "lost"}
    assert spelled_words(words, others=OTHER_RUN_WORDS) == []


#: Where a symbol kind's word is another vocabulary's word, spelled the same.
OTHER_SYMBOL_WORDS = {
    ("harness/analysis/facts.py", "method"): "a resolution's key: the method it was read in",
    ("harness/analysis/hierarchy.py", "method"): "a self-call's key: the method it is made in",
    ("harness/analysis/rules/attributes.py", "class"): "AttrUse.on: read on the class itself",
    ("harness/analysis/uses.py", "class"): "a subclass site's key: its class name",
    ("harness/analysis/uses.py", "function"): "a site's key: the function it is in",
    ("harness/targets/shell.py", "function"): "a shell keyword",
}


def test_no_symbol_kind_spelled_outside_its_enum() -> None:
    """``Symbol.kind`` is a :class:`~harness.models.SymbolKind`: a rule asks
    ``sym.kind == SymbolKind.CLASSMETHOD``, never a word that could drift from the probe's."""
    from harness import models

    words = {k.value: Path(models.__file__) for k in models.SymbolKind}
    assert len(words) == 7 and "staticmethod" in words
    assert spelled_words(words, others=OTHER_SYMBOL_WORDS) == []
    sym = models.Symbol.from_dict({"qualname": "f", "kind": "staticmethod", "line": 1})
    assert sym.kind is models.SymbolKind.STATICMETHOD
    assert type(sym.to_dict()["kind"]) is str  # the wire keeps the plain word


def test_one_launch_path() -> None:
    """A run starts on a target in one place (``harness.launch.start``, and the Ray cluster a
    run owns): a step feature written there holds on one host and across hosts alike."""
    callers = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            f = node.func if isinstance(node, ast.Call) else None
            name = ast.unparse(f) if isinstance(f, ast.Attribute) else ""
            if name == "remote.launch":
                callers.add(str(path.relative_to(REPO)))
    assert callers == {"harness/launch/start.py", "harness/launch/ray.py"}


#: What a launch or a review is asked: each enters a module once (issue 45: the launch request
#: entered launch/start.py 8 times); past that door a module passes on what it read of it.
REQUESTS = ("Request", "ReviewRequest", "StepRequest")


def request_doors(root: Path = PACKAGE) -> dict[tuple[str, str], list[str]]:
    """``(module, request type) -> [function, ...]`` taking that request as a parameter (the
    request classes' own methods aside)."""
    doors: dict[tuple[str, str], list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            a = node.args
            for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
                ann = ast.unparse(arg.annotation).split("|")[0].strip() if arg.annotation else ""
                if ann in REQUESTS:
                    rel = str(path.relative_to(root.parent))
                    doors.setdefault((rel, ann), []).append(node.name)
    return doors


def test_a_request_enters_each_module_once() -> None:
    doors = request_doors()
    assert ("harness/launch/start.py", "Request") in doors  # the walk saw the launch
    assert {k: v for k, v in doors.items() if len(v) > 1} == {}


#: Views return renderables; only the CLI prints (docs/ARCHITECTURE.md, issue 23 part 2).
VIEWS = tuple(sorted((PACKAGE / "views").glob("*.py")))


def _print_calls(path: Path) -> list[int]:
    """The lines of ``path`` that call a ``.print(...)`` method."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "print"
    ]


def test_views_return_renderables_and_never_print() -> None:
    assert len(VIEWS) > 5 and all(p.is_file() for p in VIEWS)  # the glob saw the views
    printed = [f"{p.relative_to(REPO)}:{n}" for p in VIEWS for n in _print_calls(p)]
    assert printed == []


def test_the_print_check_sees_a_print_call(tmp_path: Path) -> None:
    view = tmp_path / "view.py"
    view.write_text("def f(out, lines):\n    lines.add('x')\n    out.print('x', soft_wrap=True)\n")
    assert _print_calls(view) == [3]
