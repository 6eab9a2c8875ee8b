"""`harness check` on a call whose keywords a function decorator takes out of ``**kwargs``
(huggingface_hub's ``@validate_hf_hub_args``: ``proxies``/``resume_download`` dropped in 1.x,
``use_auth_token`` mapped to ``token`` in 0.x only): those keywords bind although the def
has no such parameter, and a keyword the decorator stopped taking is the error.

The pair is handwritten (``tests/fixtures/fixpairs/decoapp-0.1.0``, ``decolib-1.0.0`` and
``-2.0.0``): 1.0.0's ``validate_args`` pops ``use_token`` itself and ``proxies`` through a
helper; 2.0.0's pops ``proxies`` and deletes ``resume`` only, and ``download`` has overloads.
"""

from __future__ import annotations

from tests.support.fixcheck import check_fixpair

AGAINST = ("--against", "decolib")


def test_a_keyword_the_decorator_no_longer_takes_is_the_error(fixpairs_env: dict[str, str]) -> None:
    data = check_fixpair(fixpairs_env, "decoapp", "decolib", "2.0.0", *AGAINST)
    errors = [f for f in data["findings"] if f["severity"] == "error"]
    assert [(f["line"], f["category"]) for f in errors] == [(5, "unexpected-kwarg")]
    said = errors[0]["message"]
    assert "download() got an unexpected keyword argument 'use_token'" in said
    assert "proxies" not in said  # the decorator's helper pops it: it binds


def test_the_release_it_was_written_for_has_no_error(fixpairs_env: dict[str, str]) -> None:
    """1.0.0's decorator takes use_token (popped in its wrapper) and proxies (its helper)."""
    data = check_fixpair(fixpairs_env, "decoapp", "decolib", "1.0.0", *AGAINST)
    assert data["summary"]["error"] == 0
