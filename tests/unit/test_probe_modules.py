"""What a probe ships, computed from its imports: a planted probes/ tree, read with ast."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.probe_modules import closure, probe_names

#: A small probes/ tree: file -> source.
TREE = {
    "__init__.py": '"""probes"""\n',
    "_boot.py": "import probes.zz\n",  # the bootstrap is never a shipped module
    "_finder.py": "import os\n",
    "job/__init__.py": "",
    "job/_leaf.py": "X = 1\n",
    "job/_mid.py": "from probes.job._leaf import X\n",
    "job/_lazy.py": "Y = 2\n",
    "job/_typed.py": "Z = 3\n",
    "job/probe.py": (
        "from typing import TYPE_CHECKING\n"
        "from probes import _finder\n"
        "from probes.job import _mid\n"
        "if TYPE_CHECKING:\n    from probes.job import _typed\n"
        "def run(args, warn):\n    from probes.job._lazy import Y\n    return Y\n"
    ),
    "other.py": "def run(args, warn):\n    return 1\n",
    "verifiers/check.py": "def run(args, warn):\n    import torch\n",
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for rel, src in TREE.items():
        path = tmp_path / "probes" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(src)
    return tmp_path / "probes"


def test_probes_are_the_modules_that_define_run_outside_verifiers(root: Path) -> None:
    assert probe_names(root) == {"probe": "probes.job.probe", "other": "probes.other"}


@pytest.mark.parametrize(
    ("main", "shipped"),
    [
        # packages first, each module after what its top level imports, the probe last; the
        # lazy import ships too, the TYPE_CHECKING one does not
        (
            "probes.job.probe",
            (
                "probes",
                "probes._finder",
                "probes.job",
                "probes.job._lazy",
                "probes.job._leaf",
                "probes.job._mid",
                "probes.job.probe",
            ),
        ),
        ("probes.other", ("probes", "probes.other")),
        ("probes.job._mid", ("probes", "probes.job", "probes.job._leaf", "probes.job._mid")),
    ],
)
def test_a_probe_ships_its_import_closure_in_load_order(
    root: Path, main: str, shipped: tuple[str, ...]
) -> None:
    assert closure(root, main) == shipped


def test_a_top_level_import_circle_is_refused(root: Path) -> None:
    (root / "job" / "_leaf.py").write_text("from probes.job._mid import *\n")
    with pytest.raises(ValueError, match="top-level import cycle"):
        closure(root, "probes.job.probe")
