"""`harness check` on a name gone from a package whose module ``__getattr__`` a factory makes
(issue 46: huggingface_hub's ``_attach``, the lazy-loader idiom): ``__getattr__, __dir__,
__all__ = _attach(__name__, submodules=[...], submod_attrs=TABLE)``. The inner
``def __getattr__`` serves the table's names and raises AttributeError for every other, so a
name gone from the table is an error (import and attribute alike), not "unverifiable", and a
name it still serves is no error.

The pair is handwritten (``tests/fixtures/fixpairs/lazyapp-0.1.0``, ``lazylib-1.0.0`` and
``-2.0.0``): 2.0.0 dropped ``old_download`` from its table and from ``download.py``.
"""

from __future__ import annotations

from tests.support.fixcheck import check_fixpair, errors_by_line


def test_a_name_gone_from_the_attached_table_is_an_error(fixpairs_env: dict[str, str]) -> None:
    data = check_fixpair(fixpairs_env, "lazyapp", "lazylib", "2.0.0")
    errors = errors_by_line(data)
    assert set(errors) == {(2, "import-missing"), (10, "missing-attribute")}, errors
    assert "'old_download' from 'lazylib' (lazylib 2.0.0)" in errors[(2, "import-missing")]
    assert "old_download" in errors[(10, "missing-attribute")]
    # where it is no longer served: the __getattr__ the factory made, in the package's file
    said = errors[(2, "import-missing")]
    assert (
        "lazylib's __getattr__ (lazylib/__init__.py) serves 3 names and raises "
        "AttributeError for 'old_download'" in said
    )
    # nothing is left unverifiable: the table says what is served
    assert not [f for f in data["findings"] if f["category"] == "unverifiable"]


def test_the_names_the_table_serves_have_no_error(fixpairs_env: dict[str, str]) -> None:
    data = check_fixpair(fixpairs_env, "lazyapp", "lazylib", "1.0.0")
    assert data["summary"]["error"] == 0, data["findings"]
    assert not [f for f in data["findings"] if f["category"] == "unverifiable"]
