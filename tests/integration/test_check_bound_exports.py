"""`harness check` on a call of a module-level name that is a bound method of a module-level
instance (issue 46: huggingface_hub's ``api = HfApi()``, ``model_info = api.model_info``): the
name signs as the method without ``self``, so a keyword the release removed from the method is
an error at the call, and the calls that still bind are none.

The pair is handwritten (``tests/fixtures/fixpairs/boundapp-0.1.0``, ``boundlib-1.0.0`` and
``-2.0.0``): 2.0.0 renamed ``Api.info``'s ``use_auth_token`` to ``token``.
"""

from __future__ import annotations

from tests.support.fixcheck import check_fixpair


def test_a_keyword_gone_from_the_bound_method_is_an_error(fixpairs_env: dict[str, str]) -> None:
    data = check_fixpair(fixpairs_env, "boundapp", "boundlib", "2.0.0")
    got = {(f["line"], f["severity"], f["category"]) for f in data["findings"]}
    assert got == {(5, "error", "unexpected-kwarg")}, data["findings"]
    (f,) = data["findings"]
    assert "use_auth_token" in f["message"]


def test_the_release_it_was_written_for_is_clean(fixpairs_env: dict[str, str]) -> None:
    assert check_fixpair(fixpairs_env, "boundapp", "boundlib", "1.0.0")["summary"]["error"] == 0
