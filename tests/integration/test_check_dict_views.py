"""`harness check` on a key read from a dict view of a callee object (issue 46, class e):
``args.to_dict().pop("fp16")``, ``d = model.to_dict(); d["use_cache"]``,
``dataclasses.asdict(run)["seed"]`` raise KeyError once the release drops the field the key
comes from; ``.get``, ``.pop(k, None)``, a key tested or set first do not.

The pair is handwritten (``tests/fixtures/fixpairs/viewapp-0.1.0``, ``viewlib-1.0.0`` and
``-2.0.0``): a dataclass whose ``to_dict`` is ``asdict(self)`` plus a key of its own, a plain
class whose ``to_dict`` deep-copies ``self.__dict__``, and a dataclass read through ``asdict``.
"""

from __future__ import annotations

from tests.support.fixcheck import check_fixpair


def test_a_key_of_a_field_the_release_dropped_is_an_error(fixpairs_env: dict[str, str]) -> None:
    data = check_fixpair(fixpairs_env, "viewapp", "viewlib", "2.0.0")
    got = {(f["line"], f["severity"], f["category"], f["attribute"]) for f in data["findings"]}
    assert got == {
        (9, "error", "missing-key", "fp16"),
        (11, "error", "missing-key", "use_cache"),
        (12, "error", "missing-key", "seed"),
    }
    said = {f["line"]: f for f in data["findings"]}
    assert said[9]["message"].startswith(
        "KeyError: 'fp16': TrainArgs.to_dict() has no key 'fp16' in viewlib 2.0.0 -- its keys "
        "are the dataclass's fields, as to_dict() at viewlib/config.py:14 builds them"
    )
    assert "viewlib 1.0.0 set it at viewlib/config.py:11" in said[9]["message"]
    assert "the attributes set on self" in said[11]["message"]
    assert said[11]["origin_line"] == 10  # where the view was taken
    assert "asdict(RunConfig) has no key 'seed'" in said[12]["message"]
    assert said[12]["symbol"] == "viewlib:RunConfig"


def test_the_release_it_was_written_for_is_clean(fixpairs_env: dict[str, str]) -> None:
    data = check_fixpair(fixpairs_env, "viewapp", "viewlib", "1.0.0")
    assert data["summary"] == {"error": 0, "warning": 0, "info": 0}
