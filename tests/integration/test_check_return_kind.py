"""`harness check` on a function whose return changed kind (issue 46, class f): kindlib 1.0.0's
``validate()`` and ``Store.exists()`` return a bool, 2.0.0's a ``(bool, str)`` pair -- always
true -- so every truth test, comparison or unpacking of the result means something else now.
Drift is said at each such use, through a variable bound to the result too.

The pair is handwritten (``tests/fixtures/fixpairs/kindapp-0.1.0``, ``kindlib-1.0.0`` and
``-2.0.0``); ``validate``'s kinds are read from its return statements, ``exists``'s from both.
"""

from __future__ import annotations

from tests.support.fixcheck import check_fixpair


def test_each_use_the_kind_decides_is_drift(fixpairs_env: dict[str, str]) -> None:
    data = check_fixpair(fixpairs_env, "kindapp", "kindlib", "2.0.0")
    got = {(f["line"], f["severity"], f["category"]) for f in data["findings"]}
    # :7 if, :9 not, :12 assert through `ok`, :13 `ok and`, :14 `is True`, :16 while not
    assert got == {(n, "warning", "drift") for n in (7, 9, 12, 13, 14, 16)}
    said = {f["line"]: f for f in data["findings"]}
    assert said[12]["source"] == "assert ok  # W: through the variable"
    for n in (7, 9, 12, 13):
        assert "is always true now: a tuple that is never empty" in said[n]["message"]
        assert "kindlib 2.0.0 (kindlib/checks.py line 7, 8)" in said[n]["message"]
        assert "kindlib 1.0.0 returned `False` or `'model' in config`" in said[n]["message"]
    assert "compares a tuple where it compared a bool" in said[14]["message"]
    assert "exists() returns `(key in self._keys, key)`" in said[16]["message"]


def test_the_release_it_was_written_for_is_clean(fixpairs_env: dict[str, str]) -> None:
    data = check_fixpair(fixpairs_env, "kindapp", "kindlib", "1.0.0")
    assert data["summary"] == {"error": 0, "warning": 0, "info": 0}
