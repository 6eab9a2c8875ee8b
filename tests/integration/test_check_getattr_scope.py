"""`harness check` on a name gone from a package where another of its modules has a module
``__getattr__`` (issue 46, class b): PEP 562's ``__getattr__`` serves its own module alone, and
a ``from m import *`` asks it only for the names ``m.__all__`` lists -- so the name is an
error, not "unverifiable", unless a ``__getattr__`` on the import's own path could serve it.

The pair is handwritten (``tests/fixtures/fixpairs/shimapp-0.1.0``, ``shimlib-1.0.0`` and
``-2.0.0``): shimlib's ``__init__`` and ``api`` star-import ``compat`` (whose unreadable
``__getattr__`` serves old names and whose ``__all__`` lists one) and ``plugins`` (a
``__getattr__`` and no ``__all__``); 2.0.0 removed ``core.warmup``.
"""

from __future__ import annotations

from tests.support.fixcheck import check_fixpair

USES = "shimapp/uses.py"


def by_line(data: dict) -> dict[int, tuple[str, str]]:
    return {f["line"]: (f["severity"], f["category"]) for f in data["findings"]}


def test_a_getattr_of_another_module_does_not_hide_a_removal(fixpairs_env: dict[str, str]) -> None:
    data = check_fixpair(fixpairs_env, "shimapp", "shimlib", "2.0.0")
    got = by_line(data)
    # the package and api star-import compat, whose __all__ does not list warmup
    assert got[6] == ("error", "import-missing")
    assert got[8] == ("error", "import-missing")
    assert got[20] == ("error", "missing-attribute")
    assert got[7] == ("error", "import-missing")  # core: no __getattr__ anywhere on the way
    said = {f["line"]: f["message"] for f in data["findings"]}
    assert "cannot import name 'warmup' from 'shimlib' (shimlib 2.0.0)" in said[6]
    assert "cannot import name 'warmup' from 'shimlib.api' (shimlib 2.0.0)" in said[8]
    assert "shimlib.api:warmup does not exist in shimlib 2.0.0" in said[20]
    # why no __getattr__ serves it, and where the release it was written for defined it
    passed = "shimlib.compat's __getattr__ serves shimlib.compat alone: a star import of it"
    assert passed in said[6] and passed in said[8]
    assert "shimlib.plugins's __getattr__ serves shimlib.plugins alone" in said[8]
    for line in (6, 7, 8):
        assert said[line].endswith("shimlib 1.0.0 defined it at shimlib/core.py:10")


def test_a_getattr_that_could_serve_the_name_stays_a_warning(fixpairs_env: dict[str, str]) -> None:
    """compat.__all__ lists LegacyEngine (:5, :9): the star asks compat's __getattr__ for it;
    plugins (:10) and compat (:11) are asked for their own names."""
    for lib in ("1.0.0", "2.0.0"):
        got = by_line(check_fixpair(fixpairs_env, "shimapp", "shimlib", lib))
        for line in (5, 9, 10, 11):
            assert got[line] == ("warning", "unverifiable"), (lib, line)


def test_the_release_it_was_written_for_has_no_error(fixpairs_env: dict[str, str]) -> None:
    assert check_fixpair(fixpairs_env, "shimapp", "shimlib", "1.0.0")["summary"]["error"] == 0
