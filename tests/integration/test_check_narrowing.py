"""`harness check` on an object whose class is known only by narrowing past an exit (issue 34,
class 5): a removal is a break, a name the baseline's class never had is not.

The pair is handwritten (``tests/fixtures/fixpairs/narrowapp-0.1.0``, ``narrowlib-1.0.0`` and
``-2.0.0``, built into real wheels and read through ``pypi:``): no released caller was found that
narrows past an exit to a callee class and then uses a member a later callee release removed
(see the commit that added it for what was searched). Its shape is the real one that made the
rule: speculators 0.3.0's trainer ``if not isinstance(m, FSDPModule): continue`` then
``m.to_empty(...)`` -- FSDP's ``FSDPModule`` is a mixin added to the model's modules, so the
object has members its narrowed class never had. ``narrowapp`` was written for narrowlib 1.0.0
(``Requires-Dist: narrowlib==1.0.0``: the baseline); 2.0.0 removed
``ShardedModule.set_reshard_after_backward``.
"""

from __future__ import annotations

from tests.support.fixcheck import check_fixpair

USES = "narrowapp/uses.py"


def findings(data: dict) -> set[tuple[int, str, str]]:
    return {(f["line"], f["severity"], f["category"]) for f in data["findings"]}


def test_a_member_the_baseline_had_is_an_error_past_continue_assert_and_helper(
    fixpairs_env: dict[str, str],
) -> None:
    data = check_fixpair(fixpairs_env, "narrowapp", "narrowlib", "2.0.0")
    assert data["baseline"] == {"narrowlib": "1.0.0"}
    # :18 past `if not isinstance(m, C): continue`, :25 past an assert, :30 through a helper
    assert findings(data) == {
        (18, "error", "missing-attribute"),
        (25, "error", "missing-attribute"),
        (30, "error", "missing-attribute"),
    }
    for f in data["findings"]:
        assert f["file"] == USES
        assert f["attribute"] == "set_reshard_after_backward"
        assert f["symbol"] == "narrowlib:ShardedModule.set_reshard_after_backward"
        said = "'ShardedModule' object has no attribute 'set_reshard_after_backward'"
        assert said in f["message"]


def test_a_member_the_baseline_lacked_stays_silent(fixpairs_env: dict[str, str]) -> None:
    """``to_empty`` (:19), ``parameters`` (:26), ``named_parameters`` (:31): the module's own
    members, which no narrowlib release had -- the mixin's instance has them at run time."""
    data = check_fixpair(fixpairs_env, "narrowapp", "narrowlib", "2.0.0")
    assert not {f["line"] for f in data["findings"]} & {19, 26, 31}
    # with no baseline to say what was removed, nothing on a narrowed object is a proof
    data = check_fixpair(fixpairs_env, "narrowapp", "narrowlib", "2.0.0", "--no-baseline")
    assert data["findings"] == []


def test_the_release_it_was_written_for_is_clean(fixpairs_env: dict[str, str]) -> None:
    data = check_fixpair(fixpairs_env, "narrowapp", "narrowlib", "1.0.0")
    assert data["summary"] == {"error": 0, "warning": 0, "info": 0}
