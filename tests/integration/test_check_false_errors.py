"""`harness check` must not call these breaks (issue 46, class g): an import on the branch of a
version test the release checked does not take (1), a receiver the caller bound to its OWN class
(2), and a name the callee's lazy module serves from its ``_import_structure`` (3).

The pair is handwritten (``tests/fixtures/fixpairs/falseapp-0.1.0``, ``falselib-1.0.0`` and
``-2.0.0``): falselib is a transformers-4-style lazy package (``sys.modules[__name__] =
_LazyModule(..., _import_structure)``); 2.0.0 renamed ``OldLoader`` to ``NewLoader`` and removed
``Model.legacy_step``. Two real breaks stay in it, so the fixes cannot hide them.
"""

from __future__ import annotations

from tests.support.fixcheck import check_fixpair


def errors(data: dict) -> set[tuple[str, int, str]]:
    return {
        (f["file"], f["line"], f["category"]) for f in data["findings"] if f["severity"] == "error"
    }


def test_only_the_real_breaks_are_errors(fixpairs_env: dict[str, str]) -> None:
    """gates.py's dead branches (imports: :10/:12 one each release, :17, :25, :31; a use:
    :40), own.py's own receivers (:19 an attribute rebound, :26 a local rebound) and lazy.py's
    lazy names say nothing, nor own.py:48 (``self.model`` is the callee's Model on one branch
    and what an unknown call made on the other: peft's ``self.base_model``); the branch every
    release takes (:28), the same use with no version test (:45) and the callee's own object
    (own.py:30) do."""
    assert errors(check_fixpair(fixpairs_env, "falseapp", "falselib", "2.0.0")) == {
        ("falseapp/gates.py", 28, "import-missing"),
        ("falseapp/gates.py", 45, "missing-attribute"),
        ("falseapp/own.py", 30, "missing-attribute"),
    }


def test_the_release_it_was_written_for_has_no_error(fixpairs_env: dict[str, str]) -> None:
    """1.0.0 lacks NewLoader (:10, the 2.x branch) and serves OldLoader and BertModel lazily."""
    assert errors(check_fixpair(fixpairs_env, "falseapp", "falselib", "1.0.0")) == set()
