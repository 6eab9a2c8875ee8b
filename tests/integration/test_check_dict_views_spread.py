"""`harness check` on a key read from a dict view before the dict is handed on (issue 46: trl's
``d = args.to_dict(); d["hub_token"] = ...; d.pop("push_to_hub_token"); SFTConfig(**d)``): the
pop raises KeyError before any other hand could fill the dict, so a field the release dropped
is an error; a read after the dict was handed on (or in a loop that hands it on) is not.

The pair is handwritten: ``tests/fixtures/fixpairs/spreadapp-0.1.0`` against ``viewlib-1.0.0``
and ``-2.0.0`` (2.0.0 dropped ``TrainArgs.fp16``).
"""

from __future__ import annotations

import json

import pytest

from tests.support.cli import run_cli


@pytest.fixture
def env(fixpairs_env: dict[str, str]) -> dict[str, str]:
    return fixpairs_env


def findings(env: dict[str, str], lib: str) -> set[tuple[int, str, str]]:
    spec = f"pypi:spreadapp==0.1.0,viewlib=={lib}"
    r = run_cli("check", "spreadapp", "-t", spec, "--json", env=env)
    assert r.code in (0, 1), r.err
    return {(f["line"], f["severity"], f["category"]) for f in json.loads(r.out)["findings"]}


def test_a_key_popped_before_the_dict_is_handed_on_is_an_error(env: dict[str, str]) -> None:
    assert findings(env, "2.0.0") == {(9, "error", "missing-key")}


def test_the_release_it_was_written_for_is_clean(env: dict[str, str]) -> None:
    assert findings(env, "1.0.0") == set()
