"""`harness check` on a call that no longer binds inside ``try:`` whose handlers catch
``TypeError`` by name (issue 46: transformers' trainer wraps ``accelerator.autocast(
cache_enabled=False)`` in ``except (RuntimeError, TypeError, ...)`` and logs): the binding
error is raised and handled there, so it is no error; the same call outside such a ``try`` (or
under a broad ``except Exception``, error handling rather than a test of the signature) is.
A branch that ``m.__version__ < "4.2.0"`` (a comparison of strings, as Python makes it) rules
out on the release checked runs nowhere there: no error in it.

The pair is handwritten (``tests/fixtures/fixpairs/catchapp-0.1.0``, ``catchlib-1.0.0`` and
``-2.0.0``): 2.0.0 renamed ``autocast``'s ``cache_enabled`` to ``handler``.
"""

from __future__ import annotations

import json

import pytest

from tests.support.cli import run_cli


@pytest.fixture
def env(fixpairs_env: dict[str, str]) -> dict[str, str]:
    return fixpairs_env


def errors(env: dict[str, str], lib: str, file: str = "catchapp/uses.py") -> set[tuple[int, str]]:
    spec = f"pypi:catchapp==0.1.0,catchlib=={lib}"
    r = run_cli("check", "catchapp", "-t", spec, "--json", env=env)
    assert r.code in (0, 1), r.err
    data = json.loads(r.out)
    return {
        (f["line"], f["category"])
        for f in data["findings"]
        if f["severity"] == "error" and f["file"] == file
    }


def test_a_call_whose_type_error_is_caught_by_name_is_no_error(env: dict[str, str]) -> None:
    got = errors(env, "2.0.0")
    assert {line for line, _ in got} == {15, 20}, got
    assert (15, "unexpected-kwarg") in got


def test_a_branch_a_string_compare_of_the_version_rules_out_is_no_error(
    env: dict[str, str],
) -> None:
    """``catchlib.__version__ < "10.0"``: Python compares strings, so on 2.0.0 the branch with
    the old keyword never runs (as versions, 2.0.0 < 10.0 would have run it)."""
    assert errors(env, "2.0.0", "catchapp/gated.py") == set()


def test_the_release_it_was_written_for_has_no_error(env: dict[str, str]) -> None:
    for file in ("catchapp/uses.py", "catchapp/gated.py"):
        assert errors(env, "1.0.0", file) == set()
