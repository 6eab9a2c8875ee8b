"""The environ probe helper, by tables: which caller lines set a variable, and which callee
raises are guarded by a test of one (probes/signatures/_environ.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from probes.signatures._environ import caller_sets, refusals


@pytest.mark.parametrize(
    ("line", "pair"),
    [
        ('os.environ["X"] = "0"', ("X", "0")),
        ("os.environ.setdefault('X', '1')", ("X", "1")),
        ('os.environ.update(X="2")', ("X", "2")),
        ('os.environ.update({"X": "3"})', ("X", "3")),
        ('os.putenv("X", "4")', ("X", "4")),
        ('environ["X"] = "5"', ("X", "5")),
        ("os.environ[name] = '6'", None),  # not a literal name
        ('os.environ["X"] = value', None),  # not a literal value
        ('os.\uff45nviron["X"] = "7"', ("X", "7")),  # NFKC: the parser reads "environ"
        ('settings["X"] = "8"', None),  # no environ in the text: not walked at all
    ],
)
def test_what_a_caller_sets(line: str, pair: tuple[str, str] | None) -> None:
    got = caller_sets(ast.parse(line), "app.py", [line])
    assert [(s["name"], s["value"]) for s in got] == ([pair] if pair else [])


_GUARDS = {
    "loop": (
        "for env, value in os.environ.items():\n"
        "    if env == 'X':\n"
        "        if value != '1':\n"
        "            raise ValueError('no')\n",
        [("X", "!=", ["1"], 4)],
    ),
    "get": (
        "if os.environ.get('X') in ('a', 'b'):\n    raise RuntimeError\n",
        [("X", "in", ["a", "b"], 2)],
    ),
    "getenv_else": (
        "if os.getenv('X') == '1':\n    pass\nelse:\n    raise RuntimeError\n",
        [("X", "!=", ["1"], 4)],
    ),
    "envs": ("if envs.X == '0':\n    raise ValueError\n", [("X", "==", ["0"], 2)]),
    "and_other": (
        "if envs.X == '0' and other:\n    raise ValueError\n",
        [("X", "==", ["0"], 2, True)],
    ),
    "subscript": ("if os.environ['X'] != 'on':\n    raise SystemExit\n", [("X", "!=", ["on"], 2)]),
    "other_name": ("if os.environ.get('Y') == '0':\n    raise ValueError\n", []),
    "no_raise": ("if os.environ.get('X') == '0':\n    print('x')\n", []),
}


@pytest.mark.parametrize("case", sorted(_GUARDS))
def test_which_raises_refuse_a_value(case: str, tmp_path: Path) -> None:
    src, want = _GUARDS[case]
    pkg = tmp_path / "lib"
    pkg.mkdir()
    (pkg / "m.py").write_text("import os\nfrom lib import envs\n" + src)
    got = refusals([str(pkg)], {"X"}, lambda p: Path(p).name)
    assert [
        (r["name"], r["op"], r["values"], r["line"] - 2, *((True,) if r["conditional"] else ()))
        for r in got
    ] == want
