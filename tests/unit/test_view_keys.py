"""Which keys read from a name bound to a dict view raise when absent (``_keys.name_reads``)."""

from __future__ import annotations

import ast

import pytest

from probes.callsites._keys import name_reads


def reads(body: str) -> list[tuple[str, str]]:
    fn = ast.parse("def f(cfg):\n    d = cfg.to_dict()\n" + body)
    return sorted((k, how) for k, how, _ in name_reads(fn.body[0], "d", 2))


@pytest.mark.parametrize(
    ("body", "want"),
    [
        ('    return d["a"]\n', [("a", "subscript")]),
        ('    x = d["a"]\n    return d\n', [("a", "subscript")]),  # read before it is handed on
        ('    for i in r:\n        x = d["a"]\n        fill(d)\n', []),  # the loop comes round
        (
            '    x = d["a"]\n    y = d.pop("b")\n    del d["c"]\n',
            [("a", "subscript"), ("b", "pop"), ("c", "del")],
        ),
        ('    x = d.get("a")\n    y = d.pop("b", None)\n', []),
        ('    if "a" in d:\n        x = d["a"]\n', []),  # tested
        ('    d.setdefault("a", 1)\n    x = d["a"]\n', []),
        ('    d["a"] = 1\n    x = d["a"]\n    y = d["b"]\n', [("b", "subscript")]),  # set first
        ('    d.update(other)\n    x = d["a"]\n', []),  # keys we cannot name came in
        ('    fill(d)\n    x = d["a"]\n', []),  # handed on: another may fill it
        ('    for k in d:\n        pass\n    x = d["a"]\n', [("a", "subscript")]),
        ('    d = {}\n    x = d["a"]\n', []),  # bound again: not the view
    ],
)
def test_name_reads(body: str, want: list[tuple[str, str]]) -> None:
    assert reads(body) == want
