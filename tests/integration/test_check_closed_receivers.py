"""A member read through the caller's own class, gone from its callee base, with no baseline
to compare with (the caller pins a range, as most do): ``closedapp`` 0.1.0 requires
``closedlib>=1.0``. closedlib 2.0.0 dropped ``TrainingArguments.overwrite_output_dir`` (read on
a parameter annotated with the caller's dataclass deriving from it -- tevatron's and
FlagEmbedding's runners) and ``PreTrainedConfig._create_repo`` (read on ``self`` of a caller
class deriving from it through the ``PretrainedConfig`` alias -- auto-round's and optimum's
configs). ``TrainingArguments.__post_init__`` sets attributes in a loop over its own literal
list of field names: that makes no other name, so the class is still read as closed. No
subclass of those caller classes defines the names, so the callee base alone decides: an
error. ``OpenArguments`` reads ``seed_offset``, which its subclass defines: never reported,
nor ``cache_dir``, which a subclass imported under another name defines."""

from __future__ import annotations

from tests.support.fixcheck import check_fixpair


def test_members_gone_from_the_callee_base_without_a_baseline(
    fixpairs_env: dict[str, str],
) -> None:
    data = check_fixpair(fixpairs_env, "closedapp", "closedlib", "2.0.0")
    assert not data.get("baseline")
    errors = {
        (f["file"], f["line"], f["symbol"]): f["message"]
        for f in data["findings"]
        if f["severity"] == "error"
    }
    assert set(errors) == {
        ("closedapp/run.py", 8, "closedlib.args:TrainingArguments.overwrite_output_dir"),
        ("closedapp/run.py", 16, "closedlib.config:PreTrainedConfig._create_repo"),
    }
    msg = errors[("closedapp/run.py", 8, "closedlib.args:TrainingArguments.overwrite_output_dir")]
    assert msg.startswith(
        "'TrainingArguments' object has no attribute 'overwrite_output_dir' (closedlib 2.0.0): "
        "RunArguments reads it through its base TrainingArguments (closedlib/args.py:"
    )
    assert msg.endswith("and no subclass of RunArguments in the caller defines it")
    assert not any("seed_offset" in f["message"] for f in data["findings"])
    assert not any("cache_dir" in f["message"] for f in data["findings"])


def test_the_release_it_works_on_says_nothing(fixpairs_env: dict[str, str]) -> None:
    data = check_fixpair(fixpairs_env, "closedapp", "closedlib", "1.0.0")
    assert [f for f in data["findings"] if f["severity"] == "error"] == []
