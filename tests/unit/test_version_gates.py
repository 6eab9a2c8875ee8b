"""The version tests an import sits under (the probe's reading) and how the checker decides
them with the release checked -- tables."""

from __future__ import annotations

import ast

import pytest

from harness.analysis.gates import GatedBlock, VersionGate, dead_branch, decided
from probes.callsites._version_gates import gated_blocks, import_gates

HEAD = (
    "import sys\nimport transformers as tf\nfrom packaging import version\n"
    "from importlib.metadata import version as dv\n"
    "from sklearn import __version__ as skv\n"
    "TV = version.parse(version.parse(dv('transformers')).base_version)\n"
    "SV = version.parse(skv)\n"
)


def gates_of(test: str, branch: str = "body") -> list[dict]:
    src = (
        HEAD
        + f"if {test}:\n    from transformers import A\nelse:\n    from transformers import B\n"
    )
    tree = ast.parse(src)
    imports = [
        n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "transformers"
    ]
    got = import_gates(tree, (3, 11))
    return got.get(id(imports[0 if branch == "body" else 1]), [])


@pytest.mark.parametrize(
    ("test", "branch", "want"),
    [
        (
            'version.parse(tf.__version__) >= version.parse("5")',
            "body",
            ("transformers", ">=", "5", True),
        ),
        (
            'version.parse(tf.__version__) >= version.parse("5")',
            "else",
            ("transformers", ">=", "5", False),
        ),
        (
            'version.parse("5") <= version.parse(tf.__version__)',
            "body",
            ("transformers", ">=", "5", True),
        ),
        ('TV < version.parse("4.50")', "body", ("transformers", "<", "4.50", True)),
        (
            'not is_transformers_version(">=", "4.50")',
            "body",
            ("transformers", ">=", "4.50", False),
        ),
        ('is_torch_greater_or_equal("2.5")', "body", ("torch", ">=", "2.5", True)),
        # imblearn: ``from sklearn import __version__``, parsed into a module-level name
        (
            'version.parse(SV.base_version) < version.parse("1.4")',
            "body",
            ("sklearn", "<", "1.4", True),
        ),
        (
            'x and version.parse(tf.__version__) > version.parse("4")',
            "body",
            ("transformers", ">", "4", True),
        ),
    ],
)
def test_the_probe_reads_a_version_test(test: str, branch: str, want: tuple) -> None:
    (g,) = gates_of(test, branch)
    assert (g["module"], g["op"], g["version"], g["taken"]) == want


@pytest.mark.parametrize(
    ("test", "branch"),
    [
        ('x and version.parse(tf.__version__) > version.parse("4")', "else"),  # any may fail
        ("flag", "body"),
    ],
)
def test_what_says_nothing(test: str, branch: str) -> None:
    assert gates_of(test, branch) == []


def test_a_string_comparison_of_the_version_is_read_as_one() -> None:
    """``tf.__version__ >= '5'`` compares strings, as Python does: the gate says so."""
    (g,) = gates_of("'4.2.0' > tf.__version__")
    assert (g["module"], g["op"], g["version"], g.get("strings")) == (
        "transformers",
        "<",
        "4.2.0",
        True,
    )


def test_the_targets_python_decides_a_version_info_test() -> None:
    assert gates_of("sys.version_info >= (3, 99)")[0]["python"] is False
    assert gates_of("sys.version_info >= (3, 99)", "else") == []  # it runs


def gate(op: str, version: str, taken: bool = True, module: str = "transformers") -> VersionGate:
    return VersionGate(line=9, text="t", module=module, op=op, version=version, taken=taken)


@pytest.mark.parametrize(
    ("gates", "installed", "dead"),
    [
        ((gate(">=", "5"),), "4.57.6", True),
        ((gate(">=", "5"),), "5.0.0", False),
        ((gate(">=", "5"),), "5.0.0rc1", True),  # as packaging orders a pre-release
        ((gate(">=", "5", taken=False),), "4.57.6", False),
        ((gate("<", "4.50"),), "4.50.0", True),
        ((gate("==", "2"),), "2.0.0", False),
        ((gate(">=", "5", module="torch"),), "4.57.6", False),  # no torch version: unknown
        ((gate(">=", "not a version"),), "4.57.6", False),
        ((VersionGate(line=3, text="sys.version_info >= (3, 99)", python=False),), None, True),
        # ``__version__ < "4.2.0"`` as strings: "4.57.6" < "4.2.0" is False, "4.10.0" < ... True
        ((VersionGate(9, "t", "transformers", "<", "4.2.0", strings=True),), "4.57.6", True),
        ((VersionGate(9, "t", "transformers", "<", "4.2.0", strings=True),), "4.10.0", False),
        ((gate("<", "4.2.0"),), "4.10.0", True),  # as versions, the other way round
    ],
)
def test_dead_branch(gates: tuple[VersionGate, ...], installed: str | None, dead: bool) -> None:
    assert bool(dead_branch(gates, {"transformers": installed})) is dead


def test_gated_blocks_span_the_branches_in_functions_too() -> None:
    src = (
        "import transformers\nfrom packaging import version\n\n\ndef f(m):\n"
        "    if version.parse(transformers.__version__) >= version.parse('5'):\n"
        "        m.new()\n        m.newer()\n    else:\n        m.old()\n    m.both()\n"
    )
    got = [
        (b["start"], b["end"], b["gates"][0]["taken"]) for b in gated_blocks(ast.parse(src), None)
    ]
    assert got == [(7, 8, True), (10, 10, False)]


ATLEAST = VersionGate(10, "V >= parse('1.1')", "sklearn", ">=", "1.1", True)
BELOW = VersionGate(10, "V >= parse('1.1')", "sklearn", ">=", "1.1", False)
BLOCKS = (GatedBlock("m.py", 11, 11, (ATLEAST,)), GatedBlock("m.py", 13, 13, (BELOW,)))


@pytest.mark.parametrize(
    ("line", "installed", "want"),
    [
        (11, "1.5.2", (True, frozenset({"V >= parse('1.1')"}))),  # the branch taken: it holds
        (13, "1.5.2", None),  # the else cannot run
        (13, "1.0.2", (True, frozenset({"not (V >= parse('1.1'))"}))),
        (12, "1.5.2", (True, frozenset())),  # outside both branches
        (11, None, (True, frozenset())),  # no version known: nothing decided
    ],
)
def test_decided(line: int, installed: str | None, want: tuple | None) -> None:
    """A line's version branches, as the release decides them (a spread key put there)."""
    assert decided(line, "m.py", BLOCKS, {"sklearn": installed}) == want
