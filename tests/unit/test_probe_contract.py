"""Every probe runs on the target's own Python: stdlib imports only, grammar of Python 3.10."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "probes"
#: every probe module, in every folder but the output checks (which may import torch)
PROBES = sorted(p for p in ROOT.rglob("*.py") if p.relative_to(ROOT).parts[0] != "verifiers")
OLDEST = (3, 10)


@pytest.mark.parametrize("path", PROBES, ids=lambda p: str(p.relative_to(ROOT)))
def test_parses_under_oldest_python(path: Path) -> None:
    ast.parse(path.read_text(), filename=str(path), feature_version=OLDEST)


@pytest.mark.parametrize("path", PROBES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_only_stdlib(path: Path) -> None:
    allowed = set(sys.stdlib_module_names) | {"probes", "__future__"}
    bad = []
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        bad += [f"{path.name}:{node.lineno}: {n}" for n in names if n.split(".")[0] not in allowed]
    assert bad == []


def test_contract_sees_every_shipped_probe() -> None:
    from harness.probe_runner import probe_modules

    shipped = {m for mods in probe_modules().values() for m in mods}
    files = {".".join(("probes", *p.relative_to(ROOT).with_suffix("").parts)) for p in PROBES}
    assert shipped <= {m.removesuffix(".__init__") for m in files}
    assert set(probe_modules()) >= {"signatures", "callsites", "runs", "patchops", "facts"}


def test_boot_runs_on_any_python3_syntax() -> None:
    """The bootstrap must parse on old Pythons so it can *say* they are too old."""
    src = (ROOT / "_boot.py").read_text()
    ast.parse(src, feature_version=(3, 4))
