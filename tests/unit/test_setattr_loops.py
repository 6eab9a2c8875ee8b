"""Which ``setattr(self, name, ...)`` loops make only names the source spells."""

from __future__ import annotations

import ast

import pytest

from probes.signatures._loops import looped_literals

CASES = [
    # a literal list, tuple or set of strings
    ("for f in ['a', 'b']:\n    setattr(self, f, 1)", {"f": ["a", "b"]}),
    ("for f in ('a',):\n    setattr(self, f, 1)", {"f": ["a"]}),
    # the class's own literal list, through self or cls
    ("for f in self.NAMES:\n    setattr(self, f, 1)", {"f": ["x", "y"]}),
    ("for f in cls.NAMES:\n    setattr(self, f, 1)", {"f": ["x", "y"]}),
    # data: any name
    ("for f in kwargs:\n    setattr(self, f, 1)", {}),
    ("for f in self.OTHER:\n    setattr(self, f, 1)", {}),
    ("for f in ['a', g]:\n    setattr(self, f, 1)", {}),
    # rebound inside the loop: any name
    ("for f in ['a']:\n    f = f + '_x'\n    setattr(self, f, 1)", {}),
]


@pytest.mark.parametrize(("body", "want"), CASES)
def test_looped_literals(body: str, want: dict[str, list[str]]) -> None:
    src = "class C:\n    NAMES = ['x', 'y']\n    OTHER = make()\n    def m(self, **kwargs):\n"
    src += "\n".join(f"        {ln}" for ln in body.splitlines())
    cls = ast.parse(src).body[0]
    assert isinstance(cls, ast.ClassDef)
    fn = cls.body[2]
    assert isinstance(fn, ast.FunctionDef)
    assert looped_literals(fn, cls) == want
