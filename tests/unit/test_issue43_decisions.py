"""Issue 43's pure decisions, by tables: which set value a callee guard refuses, how literals
compare with the baseline's, which series is carried forward, when a gate leaves a release
out, what a patch's added lines set, and the matrix note's line per kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.analysis.environ import Environ, EnvRefusal, EnvSet, refused
from harness.analysis.findings import Category, Finding, Severity
from harness.analysis.literals import ClassLiterals, FunctionLiterals, changed
from harness.patching.series import PatchSpec
from harness.reading.carried import carried_from, gated_off, patch_sets
from harness.reading.matrix import kind_notes


@pytest.mark.parametrize(
    ("op", "values", "value", "raises"),
    [
        ("!=", ("1",), "0", True),
        ("!=", ("1",), "1", False),
        ("==", ("0",), "0", True),
        ("in", ("legacy", "v0"), "legacy", True),
        ("in", ("legacy", "v0"), "fast", False),
        ("not in", ("1", "true"), "0", True),
    ],
)
def test_a_guard_refuses_the_values_its_test_holds_for(
    op: str, values: tuple[str, ...], value: str, raises: bool
) -> None:
    assert EnvRefusal("X", op, values, "lib/p.py", 9).refuses(value) is raises


def test_refused_pairs_each_set_with_its_first_refusing_guard() -> None:
    sets = (EnvSet("A", "0", "app.py", 3), EnvSet("B", "fast", "app.py", 4))
    guards = (EnvRefusal("A", "!=", ("1",), "lib.py", 9), EnvRefusal("B", "==", ("x",), "l", 2))
    more = (EnvSet("B", "x", "0001.patch", 12, patch="0001", gate="lib <2"),)
    got = refused(Environ(sets, guards), more)
    assert [(s.name, s.value, s.patch) for s, _ in got] == [("A", "0", ""), ("B", "x", "0001")]


def _lits(**fns: tuple[str, ...]) -> ClassLiterals:
    return ClassLiterals(
        {k: FunctionLiterals(f"m.py:{i}", v) for i, (k, v) in enumerate(fns.items())}
    )


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        (("'NHD'",), ("'LBNHC'",), ["'NHD' -> 'LBNHC'"]),
        (("x.shape[1]", "0"), ("x.shape[2]", "0"), ["x.shape[1] -> x.shape[2]"]),
        (("1",), ("1", "2"), ["(none) -> 2"]),
        (("1", "2"), ("2",), ["1 -> (none)"]),
        (("'a'",), ("'a'",), None),
        (tuple("abcdefgh"), tuple("AbCdEfGh"), ["a -> A", "c -> C", "e -> E", "(+1 more)"]),
    ],
)
def test_literals_compare_function_by_function(
    old: tuple[str, ...], new: tuple[str, ...], said: list[str] | None
) -> None:
    got = changed(_lits(f=old, gone=("1",)), _lits(f=new, added=("2",)))
    assert (list(got[0].changes) if got else None) == said


def test_a_constant_says_old_and_new_where_it_is_now() -> None:
    old = ClassLiterals(constants={"LAYOUT": ("m.py:3", "'NHD'")})
    new = ClassLiterals(constants={"LAYOUT": ("m.py:5", "'LBNHC'")})
    (c,) = changed(old, new)
    assert (c.name, c.at, c.changes) == ("LAYOUT", "m.py:5", ("'NHD' -> 'LBNHC'",))


@pytest.mark.parametrize(
    ("versions", "installed", "carried"),
    [
        (["0.24.0"], "0.26.0", "0.24.0"),
        (["0.20.2", "0.24.0", "0.30.0"], "0.26.0", "0.24.0"),
        (["0.30.0"], "0.26.0", None),
        ([], "0.26.0", None),
    ],
)
def test_the_series_carried_forward_is_the_nearest_below(
    versions: list[str], installed: str, carried: str | None
) -> None:
    assert carried_from(versions, installed) == carried


def _patch(text: str = "", requires: tuple[tuple[str, str], ...] = ()) -> PatchSpec:
    return PatchSpec("0014-x", Path("0014-x.patch"), "why", requires, text, ())


@pytest.mark.parametrize(
    ("requires", "versions", "off"),
    [
        ((("vllm", ">=0.21,<0.27"),), {"vllm": "0.34.0"}, True),
        ((("vllm", ">=0.21,<0.27"),), {"vllm": "0.26.0"}, False),
        ((("vllm", ">=0.21,<0.27"),), {}, False),  # unknown: not said to be off
        ((), {"vllm": "0.34.0"}, False),
    ],
)
def test_a_gate_leaves_a_release_out(
    requires: tuple[tuple[str, str], ...], versions: dict[str, str | None], off: bool
) -> None:
    assert gated_off(_patch(requires=requires), versions) is off


def test_a_patch_sets_what_its_added_lines_assign() -> None:
    text = (
        "why\n--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,4 @@\n import os\n"
        '+os.environ["VLLM_USE_V2_MODEL_RUNNER"] = "0"\n'
        "+os.environ.setdefault('MODE', 'legacy')\n"
        '-os.environ["OLD"] = "1"\n'
    )
    got = patch_sets(_patch(text), "p/0014-x.patch", "vllm <0.27")
    assert [(s.name, s.value, s.line, s.patch, s.gate) for s in got] == [
        ("VLLM_USE_V2_MODEL_RUNNER", "0", 6, "0014-x", "vllm <0.27"),
        ("MODE", "legacy", 7, "0014-x", "vllm <0.27"),
    ]


def _f(category: Category, symbol: str, source: str = "") -> Finding:
    return Finding(Severity.WARNING, category, "a.py", 1, source, symbol, "m", "f")


def test_the_matrix_note_says_a_line_per_kind_each_method_once() -> None:
    found = [
        _f(Category.BASE_METHOD_ADDED, "m:Sub.get_finished_count"),
        _f(Category.BASE_METHOD_ADDED, "m:Base.get_finished_count"),  # another subclass's
        _f(Category.OVERRIDE_ORPHANED, "m:Base.prefer_blocks"),
        _f(Category.ENV_REFUSED, "X", 'os.environ["X"] = "0"'),
        _f(Category.PATCHED_FILE_DELETED, "v/a.py"),
        _f(Category.PATCHED_FILE_DELETED, "v/b.py"),
        _f(Category.DRIFT, "m:f"),
    ]
    assert kind_notes(found) == (
        "base gained (not overridden): Sub.get_finished_count",
        "overrides the base no longer has: Base.prefer_blocks",
        'refuses: os.environ["X"] = "0"',
        "patches a file the release deleted: v/a.py, v/b.py",
    )
