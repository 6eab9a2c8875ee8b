"""`harness check` on a name gone from a lazy package whose import structure is built in steps
(issue 46: transformers 5's ``__init__``): a literal table rebuilt with its keys kept
(``T = {k: set(v) for k, v in T.items()}``), merged into the structure handed to the class put
in ``sys.modules`` (``structure[k].update(T)``), a dummy module's names listed through
``dir(m)``, and objects handed by name (``extra_objects={"__version__": ...}``). What they list
is served, every other name raises: a name gone is an error, not "unverifiable".

The pair is handwritten (``tests/fixtures/fixpairs/structapp-0.1.0``, ``structlib-1.0.0`` and
``-2.0.0``): 2.0.0 dropped ``old_engine`` from ``core`` and from its table.
"""

from __future__ import annotations

from tests.support.fixcheck import check_fixpair, errors_by_line


def test_a_name_gone_from_the_import_structure_is_an_error(fixpairs_env: dict[str, str]) -> None:
    data = check_fixpair(fixpairs_env, "structapp", "structlib", "2.0.0")
    errors = errors_by_line(data)
    assert set(errors) == {(2, "import-missing"), (10, "missing-attribute")}, errors
    assert "'old_engine' from 'structlib' (structlib 2.0.0)" in errors[(2, "import-missing")]
    assert not [f for f in data["findings"] if f["category"] == "unverifiable"]
    said = errors[(2, "import-missing")]
    assert "structlib's lazy export table (structlib/__init__.py) lists no 'old_engine'" in said


def test_the_names_it_serves_have_no_error(fixpairs_env: dict[str, str]) -> None:
    data = check_fixpair(fixpairs_env, "structapp", "structlib", "1.0.0")
    assert data["summary"]["error"] == 0, data["findings"]
    assert not [f for f in data["findings"] if f["category"] == "unverifiable"]
