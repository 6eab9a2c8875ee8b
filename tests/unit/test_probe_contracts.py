"""What a probe and harness must spell alike: the markers in the byte streams between them, the
modules a probe ships with, and each reading probe op's envelope.

Each envelope test runs the op for real, on the handwritten fixture site, through the real
bootstrap in a subprocess (the envelope travels as the JSON line harness reads), and hands it
to the very function harness reads that op with; the assertions check values only the right
field names can carry, so a field renamed on one side fails here. The runs and patchops ops
are in ``test_probe_contracts_runs.py``.
"""

from __future__ import annotations

import ast
import platform
import sys
from pathlib import Path

import pytest

from harness import probe_files
from harness.analysis.scan import Scan, lookups_from
from harness.fixing.facts import Wanted, read_side
from harness.fixing.texts import compile_errors
from harness.patching.gates import misspelled
from harness.probe_files import probes_dir
from harness.probe_runner import MARK, probe_modules, run_probe
from harness.reading.compare import diff
from harness.reading.probe import gather_facts, probe
from harness.runs.follow import stream
from harness.runs.record import state, verification
from harness.runs.target import preflight, remote
from harness.runs.target.describe import StepPlan
from harness.runs.target.step_check import read_vocab, serve_call
from harness.targets.local import LocalTarget
from probes.runs import _follow, _proctree, _rundir, runs, supervisor
from tests.support.tinydist import FolderTarget, install

SITE = Path(__file__).resolve().parents[1] / "fixtures" / "site"
PROBES = probes_dir()


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FolderTarget:
    """The handwritten fixture packages; a fresh cache, so cached ops run their probe."""
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    return FolderTarget(SITE, "site")


def _constant(path: Path, name: str) -> object:
    """A module-level constant read without running the module (``_boot`` runs on import)."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return ast.literal_eval(node.value)
    raise AssertionError(f"no {name} in {path.name}")


# -- markers -------------------------------------------------------------------------------


def test_the_envelope_marker_is_spelled_alike() -> None:
    boot = _constant(PROBES / "_boot.py", "MARK")
    assert isinstance(boot, str) and boot.lstrip("\n").encode() == MARK


def test_the_follow_stream_markers_are_spelled_alike() -> None:
    assert _follow.STREAM_MARK == stream.STREAM_MARK
    assert _follow.END_MARK.encode() == stream.END_MARK


def test_the_verify_report_marker_is_spelled_alike() -> None:
    assert verification.REPORT_MARK.encode() == supervisor.VERIFY_MARK
    for path in sorted((PROBES / "verifiers").glob("[!_]*.py")):  # _*.py: their modules
        assert _constant(path, "MARK") == verification.REPORT_MARK, path.name


def test_the_runs_constants_are_spelled_alike() -> None:
    """What the probe reports and harness judges by the same words (the disk's fullness, the
    GPU holders that are daemons by design)."""
    assert _rundir.FULL_BELOW == preflight.FULL_BELOW
    assert _proctree.GPU_DAEMONS == state.GPU_DAEMONS


def test_runs_live_where_both_sides_look() -> None:
    assert runs.runs_root("/w") == remote.runs_root("/w") == "/w/.harness/runs"
    follower = stream.follower_argv(LocalTarget(), "/w/r", 0, wait=True, poll=0.05, lost_check=1.0)
    assert follower[2] == "/w/r/" + probe_files.PROGRAM[0]  # the copy launch writes


# -- what ships with what ------------------------------------------------------------------


def _file(module: str) -> Path:
    """The file of a dotted probe module (a package: its ``__init__.py``)."""
    rel = PROBES.joinpath(*module.split(".")[1:])
    return rel / "__init__.py" if rel.is_dir() else rel.with_suffix(".py")


def _probe_imports(module: str, top_level: bool) -> set[str]:
    """The probe modules ``module`` imports (at module level only, or anywhere), dotted."""
    tree = ast.parse(_file(module).read_text())
    nodes = tree.body if top_level else list(ast.walk(tree))
    out: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "probes":
            base = str(node.module)
            subs = {f"{base}.{a.name}" for a in node.names if _file(f"{base}.{a.name}").is_file()}
            out |= subs or {base}
    return out


@pytest.mark.parametrize("name", sorted(probe_modules()))
def test_a_probe_ships_every_module_it_imports_before_it(name: str) -> None:
    """The bootstrap runs the modules in list order: a module-level import of a module
    shipped later (or not at all) fails on the target, whatever the tests import here; so
    does a package shipped after its modules."""
    mods = probe_modules()[name]
    assert mods[-1].rpartition(".")[2] == name
    late = [
        f"{m} imports {dep}"
        for i, m in enumerate(mods)
        for dep in sorted(_probe_imports(m, top_level=True) | _parents(m))
        if dep not in mods[:i]
    ]
    assert late == []


def _parents(module: str) -> set[str]:
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


@pytest.mark.parametrize("name", sorted(probe_modules()))
def test_a_probe_ships_its_whole_import_closure(name: str) -> None:
    """A lazy import (inside a function) runs on the target too: every module reachable
    through any import of a shipped module is shipped."""
    mods = set(probe_modules()[name])
    needed = set().union(*(_probe_imports(m, top_level=False) for m in mods))
    assert needed - mods == set()


def test_the_run_program_copy_holds_every_module_it_imports() -> None:
    """The run directory's copy runs alone for days: what it imports must be copied too."""
    copied = {f"probes.runs.{Path(p).stem}" for p in probe_files.PROGRAM}
    needed = set().union(*(_probe_imports(m, top_level=False) for m in copied))
    assert needed <= copied
    assert all((PROBES / "runs" / p).is_file() for p in probe_files.PROGRAM)


# -- reading probes: one envelope each, read by harness's own parser -----------------------


def test_signatures_envelope(site: FolderTarget) -> None:
    report = probe(site, "calleepkg.core:Record", source=True)
    assert (report.module, report.dist, report.version) == ("calleepkg.core", "calleepkg", "1.2.3")
    assert report.file is not None and report.file.endswith("core.py")
    assert report.source is not None and "class Record" in report.source.text
    (sym,) = report.symbols
    assert (sym.qualname, sym.kind) == ("Record", "class")
    assert sym.parameters and sym.line > 0


def test_live_envelope(site: FolderTarget) -> None:
    report = probe(site, "boundpkg.bound:NewName", live=True)  # imported for real: no pydantic
    assert report.live and report.module == "boundpkg.bound"
    (sym,) = report.symbols
    assert (sym.qualname, sym.kind) == ("NewName", "class")


def test_facts_envelope(site: FolderTarget) -> None:
    facts = gather_facts(site, ["calleepkg", "nosuchdist"], gpus=False)
    assert (facts.dists["calleepkg"], facts.dists["nosuchdist"]) == ("1.2.3", None)
    assert facts.python["version"] == platform.python_version()
    assert facts.python["executable"] == sys.executable
    assert facts.site_packages


def test_facts_names_envelope(site: FolderTarget) -> None:
    """``names``: every installed dist, for the gates' "did you mean"."""
    got = misspelled(site, ["calleepk"], [], {})
    assert got == {"calleepk": "did you mean calleepkg (1.2.3)?"}


def _scan(site: FolderTarget, probe_name: str, **args: object) -> Scan:
    env = run_probe(site, probe_name, {"caller": "callerpkg", "callees": None, **args})
    return Scan.from_dict(env.data)  # harness.reading.check's edge


def test_callsites_envelope(site: FolderTarget) -> None:
    scan = _scan(site, "callsites")
    assert (scan.caller.dist, scan.caller.version) == ("callerpkg", "0.1.0")
    assert scan.versions()["calleepkg"] == "1.2.3"
    assert scan.imports and scan.calls and scan.attributes and scan.subclasses
    call = next(c for c in scan.calls if c.ref.key == "calleepkg.core:Record")
    assert call.file.startswith("callerpkg/") and call.line > 0
    assert scan.symbols["calleepkg.core:Record"].symbol is not None
    assert all(u.file in scan.caller.files for u in scan.calls)


def test_fixscan_envelope(site: FolderTarget) -> None:
    scan = _scan(site, "fixscan", only=["callerpkg/uses.py"])
    assert scan.calls and {c.file for c in scan.calls} == {"callerpkg/uses.py"}


def test_callsites_refs_envelope(site: FolderTarget) -> None:
    """``refs``: the baseline's read of the symbols a scan found (check, diff --used-by)."""
    data = run_probe(site, "callsites", {"refs": [["calleepkg.core", "Record"]]}).data
    got = lookups_from(data["symbols"])["calleepkg.core:Record"]
    assert got.symbol is not None and got.symbol.symbol.qualname == "Record"


def test_api_envelope(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    old = install(tmp_path / "old", "1.0", "def f(a):\n    pass\n\nclass C:\n    pass\n")
    new = install(tmp_path / "new", "2.0", "def f(a, b):\n    pass\n\nclass C:\n    pass\n")
    report = diff("tinypkg", FolderTarget(old, "old"), FolderTarget(new, "new"))
    assert (report.old_version, report.new_version) == ("1.0", "2.0")
    assert report.stats["symbols_from"] == report.stats["symbols_to"] == 2
    (entry,) = report.entries
    assert (entry.symbol, entry.status.value, entry.breaking) == ("tinypkg.core:f", "changed", True)


def test_locate_envelope(site: FolderTarget) -> None:
    want = Wanted(frozenset({("calleepkg.core", "Record")}), frozenset({"Record"}))
    side = read_side(site, want, ["calleepkg"], "new", reads=True)
    assert side.symbols["calleepkg.core:Record"].qualname == "Record"
    assert "calleepkg.core:Record" in side.reads
    assert any(s.module == "calleepkg.core" for s in side.defined["Record"])


def test_compiles_envelope(site: FolderTarget) -> None:
    errors = compile_errors(site, {"bad.py": "def f(:\n", "good.py": "x = 1\n"})
    assert list(errors) == ["bad.py"]
    assert errors["bad.py"].startswith("bad.py:1: ")
    assert errors["bad.py"].endswith(f"(Python {platform.python_version()})")


def test_serveargs_envelope(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    target = FolderTarget(SITE.parent / "serve", "serve")
    plan = StepPlan("serve", command=("vllm", "serve", "m"), cwd=str(tmp_path))
    call = serve_call(plan, "")
    assert call is not None
    vocab, _cached = read_vocab(target, call, plan)
    assert (vocab.dist, vocab.version) == ("vllm", "0.99.0")
    assert {"--tensor-parallel-size", "-tp", "--port", "--chat-template", "-asc"} <= vocab.flags
    spec = vocab.configs["--speculative-config"]
    assert spec.fields == {"method", "num_speculative_tokens", "draft_model_config"}
    assert spec.file == "vllm/config/speculative.py" and spec.line and not spec.open


def test_the_contract_covers_every_probe() -> None:
    """A new probe gets an envelope test here (or in the runs file) with its parser."""
    here = (
        Path(__file__).read_text()
        + (Path(__file__).parent / "test_probe_contracts_runs.py").read_text()
    )
    missing = [p for p in probe_modules() if f"def test_{p}_" not in here]
    assert missing == []
