"""What a star import takes by name (``__all__``) and what a transformers-4 lazy package serves
(``_import_structure``) -- the two readings that decide whether a missing name is an error."""

from __future__ import annotations

import ast
from types import SimpleNamespace

import pytest

from probes.signatures._lazy_package import structure_exports
from probes.signatures._resolvable import star_exports


@pytest.mark.parametrize(
    ("source", "want"),
    [
        ("x = 1\n", frozenset()),  # no __all__: the star copies the globals
        ("__all__ = ['A', 'B']\n", frozenset({"A", "B"})),
        ("__all__ = ('A',)\n__all__ += ['B']\n", frozenset({"A", "B"})),
        ("__all__ = ['A'] + sub.__all__\n", None),  # built: unsure
        ("__all__ = ['A']\n__all__.extend(more)\n", None),
        ("__all__ = ['A']\nfor n in __all__: pass\n", None),  # read back: unsure
    ],
)
def test_star_exports(source: str, want: frozenset[str] | None) -> None:
    assert star_exports(SimpleNamespace(tree=ast.parse(source))) == want


LAZY = """
import sys
_import_structure = {"models.bert": ["BertModel"], "loaders": ["Loader"]}
_import_structure["models.gpt"] = ["GPTModel"]
_import_structure["loaders"].extend(["FastLoader"])
_import_structure["loaders"].append("SlowLoader")
sys.modules[__name__] = _LazyModule(__name__, globals()["__file__"], _import_structure)
"""


def test_structure_exports_reads_the_literal_table() -> None:
    served, unsure, stars = structure_exports(ast.parse(LAZY), "pkg")
    assert {k: v[0] for k, v in served.items()} == {
        "BertModel": "pkg.models.bert",
        "Loader": "pkg.loaders",
        "GPTModel": "pkg.models.gpt",
        "FastLoader": "pkg.loaders",
        "SlowLoader": "pkg.loaders",
    }
    assert unsure is False
    assert stars == []


@pytest.mark.parametrize(
    ("extra", "served", "stars"),
    [  # a dummy module imported here: its public names, as a star import binds them
        (
            "from .utils import dummy\n"
            '_import_structure["dummy"] = [n for n in dir(dummy) if not n.startswith("_")]\n',
            set(),
            ["pkg.utils.dummy"],
        ),
        ("_import_structure = {k: set(v) for k, v in _import_structure.items()}\n", set(), []),
    ],
)
def test_structure_exports_follows_what_keeps_the_names(
    extra: str, served: set[str], stars: list[str]
) -> None:
    got, unsure, star = structure_exports(ast.parse(LAZY + extra), "pkg")
    assert not unsure and star == stars and served <= set(got)


def test_a_structure_merged_into_the_one_handed_over_is_read() -> None:
    src = """
import sys
_import_structure = {"loaders": ["Loader"]}
structure = define()
structure[frozenset()].update(_import_structure)
sys.modules[__name__] = _Lazy(__name__, __file__, structure, extra_objects={"__version__": v})
"""
    served, unsure, _ = structure_exports(ast.parse(src), "pkg")
    assert not unsure
    assert served["Loader"][0] == "pkg.loaders" and served["__version__"][0] == "pkg"


@pytest.mark.parametrize(
    "extra",
    [
        '_import_structure["dummy"] = [n for n in dir(dummy) if not n.startswith("_")]\n',
        "_import_structure.update(more)\n",
        '_import_structure["loaders"] += extra\n',
        "setattr(sys.modules[__name__], name, value)\n",
    ],
)
def test_a_table_written_otherwise_is_unsure(extra: str) -> None:
    assert structure_exports(ast.parse(LAZY + extra), "pkg")[1] is True


def test_no_lazy_module_no_exports() -> None:
    got = structure_exports(ast.parse('_import_structure = {"a": ["A"]}\n'), "pkg")
    assert got == ({}, False, [])


def test_a_setattr_in_a_helper_called_with_strings_may_serve_their_parts() -> None:
    """transformers 5: ``def alias(a, t): ...; setattr(sys.modules[__name__], a.rsplit(".")[-1],
    m)`` called as ``alias(f"{__name__}.tokenization_utils", ".x")``: those parts may exist
    (value unknown, module ""); the table's names are read all the same."""
    src = LAZY + (
        "def alias(a, t):\n    setattr(sys.modules[__name__], a.rsplit('.', 1)[-1], t)\n"
        'alias(f"{__name__}.tokenization_utils", ".tokenization_new")\n'
    )
    served, unsure, _ = structure_exports(ast.parse(src), "pkg")
    assert not unsure
    assert served["tokenization_utils"][0] == "" and served["BertModel"][0] == "pkg.models.bert"
    called = src + "alias(name_from_elsewhere, None)\n"
    assert structure_exports(ast.parse(called), "pkg")[1] is True
