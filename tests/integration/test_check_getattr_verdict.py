"""`harness check` on names a module ``__getattr__`` no longer serves (issue 46, class b in
general form): the function is evaluated for each concrete name -- tests against literal
tables, ``try: TABLE[name] except KeyError``, ``globals()[name]``, a closure a factory makes
(pydantic's ``getattr_migration``) -- to served, gone or unknown; gone is an error.

The pair is handwritten (``tests/fixtures/fixpairs/gateapp-0.1.0``, ``gatelib-1.0.0`` and
``-2.0.0``), each pattern taken from a real release: numpy 1.24's ``__former_attrs__``
(``gatelib``), scipy 1.12's submodules-or-globals (``gatelib.sub``), pydantic 2's migration
tables (``gatelib.main``); ``gatelib.lazy`` serves through a call whose exception its ``try``
catches, which nobody can decide: it stays a warning. Every expectation was run: 2.0.0 fails
at exactly the lines asserted as errors, 1.0.0 runs all of them.
"""

from __future__ import annotations

from tests.support.fixcheck import check_fixpair

USES = "gateapp/uses.py"


def by_line(data: dict) -> dict[int, tuple[str, str]]:
    mine = [f for f in data["findings"] if f["file"] == USES]
    return {f["line"]: (f["severity"], f["category"]) for f in mine}


def test_names_the_getattr_raises_for_are_errors(fixpairs_env: dict[str, str]) -> None:
    data = check_fixpair(fixpairs_env, "gateapp", "gatelib", "2.0.0")
    got = by_line(data)
    assert got[2] == ("error", "import-missing")  # globals()[name] raises KeyError -> raise
    assert got[3] == ("error", "import-missing")  # the factory's closure: no table lists it
    assert got[10] == ("error", "missing-attribute")  # `if attr in __former_attrs__: raise`
    assert got[11] == ("error", "missing-attribute")
    said = {f["line"]: f["message"] for f in data["findings"] if f["file"] == USES}
    where = "(gatelib/_migration.py:"
    assert f"gatelib.main's __getattr__ raises for 'ModelMetaclass' {where}" in said[3]
    assert "gatelib.sub's __getattr__ raises for 'interp' (gatelib/sub.py:15)" in said[2]


def test_names_it_serves_or_may_serve_are_no_errors(fixpairs_env: dict[str, str]) -> None:
    """OldName (:4) is a moved name the tables serve; zeros (:5) comes through a call; fv
    (:12) an expired function served as a stub; testing (:13) a lazily imported submodule."""
    for lib in ("1.0.0", "2.0.0"):
        got = by_line(check_fixpair(fixpairs_env, "gateapp", "gatelib", lib))
        for line in (4, 5, 12, 13):
            assert got.get(line, ("warning",))[0] != "error", (lib, line)


def test_the_release_it_was_written_for_has_no_error(fixpairs_env: dict[str, str]) -> None:
    data = check_fixpair(fixpairs_env, "gateapp", "gatelib", "1.0.0")
    assert data["summary"]["error"] == 0, [f for f in data["findings"] if f["severity"] == "error"]


def test_a_base_class_read_from_a_module_is_checked(fixpairs_env: dict[str, str]) -> None:
    """``class Mine(gm.Metric)`` reads gm.Metric when the module runs (jury x datasets 3's
    ``class Metric(datasets.Metric, ABC)``); under ``if hasattr(gm, "Metric")`` it does not."""
    data = check_fixpair(fixpairs_env, "gateapp", "gatelib", "2.0.0")
    mine = [f for f in data["findings"] if f["file"] == "gateapp/bases.py"]
    got = {f["line"]: (f["severity"], f["category"]) for f in mine}
    assert got == {4: ("error", "missing-attribute")}, mine
