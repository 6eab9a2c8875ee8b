"""What a probe ships, computed from its imports: a planted probes/ tree, read with ast."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.probe_modules import closure, probe_names, shipped

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


def test_the_table_is_kept_and_read_back_while_no_probe_file_changed(
    root: Path, tmp_path: Path
) -> None:
    """A warm ``check`` must not parse probes/ again (~0.4 s of its 0.5 s budget)."""
    store = tmp_path / "store"
    table = {name: closure(root, main) for name, main in probe_names(root).items()}
    assert shipped(root, store) == table
    (kept,) = store.iterdir()
    # what the store holds is what the next run gets: nothing is walked again
    kept.write_text(json.dumps({"probe": ["probes", "probes.job.probe"]}))
    assert shipped(root, store) == {"probe": ("probes", "probes.job.probe")}


def test_a_changed_probe_file_is_walked_again(root: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    assert "probes.job._leaf" not in shipped(root, store)["other"]
    (root / "other.py").write_text(
        "import probes.job._leaf\n\ndef run(args, warn):\n    return 1\n"
    )
    assert "probes.job._leaf" in shipped(root, store)["other"]


def test_a_store_that_cannot_be_written_only_costs_the_walk(root: Path, tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("")
    table = {name: closure(root, main) for name, main in probe_names(root).items()}
    assert shipped(root, blocked / "store") == table
    assert shipped(root, None) == table
