"""`harness check` following receiver types through the caller's own code (issue 46, item 3,
classes a, c, d): a removed base method called on ``self`` in a caller subclass, a removed
member reached through a caller wrapper's ``__getattr__``, and a renamed parameter whose old
name a new ``**kwargs`` swallows, reached through ``getattr`` or a name bound to the function.

The pairs are handwritten (``tests/fixtures/fixpairs/{inherit,wrap,swallow}{app,lib}-*``, built
into real wheels and read through ``pypi:``); each app pins its lib at 1.0.0 (the baseline) and
2.0.0 breaks it. Their shapes are the real ones: a transformers ``Trainer`` subclass calling the
base's ``self.log_metrics``, peft's ``PeftModel.__getattr__`` handing names to the model it
wraps, a tokenizer call passing a keyword a release renamed behind ``**kwargs``.
"""

from __future__ import annotations

import pytest

from tests.support.fixcheck import check_fixpair


def errors(data: dict) -> dict[tuple[str, int], dict]:
    return {(f["file"], f["line"]): f for f in data["findings"] if f["severity"] == "error"}


def test_a_removed_base_method_on_self_is_an_error_through_super_and_our_own_bases(
    fixpairs_env: dict[str, str],
) -> None:
    data = check_fixpair(fixpairs_env, "inheritapp", "inheritlib", "2.0.0")
    assert data["baseline"] == {"inheritlib": "1.0.0"}
    # inheritapp/__init__.py is test_check_inherited's connector (its own findings)
    got = {k: f for k, f in errors(data).items() if k[0] != "inheritapp/__init__.py"}
    train = "inheritapp/train.py"
    # :14 self.m(), :19 super().m(), :26 through BaseTrainer (another module), :31 read only
    assert set(got) == {(train, 14), (train, 19), (train, 26), (train, 31)}
    assert {f["attribute"] for f in got.values()} == {
        "log_metrics",
        "save_state",
        "create_scheduler",
        "on_epoch_end",
    }
    f = got[(train, 14)]
    assert f["category"] == "missing-attribute"
    assert f["symbol"] == "inheritlib.trainer:Trainer.log_metrics"
    assert "'Trainer' object has no attribute 'log_metrics' (inheritlib 2.0.0)" in f["message"]
    assert "DirectTrainer inherits it from Trainer" in f["message"]
    assert "inheritlib 1.0.0 at inheritlib/trainer.py:15" in f["message"]
    assert f["callee_file"] == "inheritlib/trainer.py"
    assert "LayeredTrainer inherits it" in got[(train, 26)]["message"]


def test_names_our_classes_define_set_or_serve_stay_silent(fixpairs_env: dict[str, str]) -> None:
    """compute_loss (BaseTrainer defines it), evaluation_hook (set in __init__), custom_hook
    (only our subclass has it), self.model (the base sets it), Forgiving's __getattr__."""
    data = check_fixpair(fixpairs_env, "inheritapp", "inheritlib", "2.0.0")
    reads = [f for f in data["findings"] if f["category"] not in CLASS_LEVEL]
    assert not [f for f in reads if f["file"] == "inheritapp/base.py"]
    lines = {f["line"] for f in reads if f["file"] == "inheritapp/train.py"}
    assert not lines & {15, 20, 25, 42}
    # with no baseline, a read through self is a proof only where no subclass of ours defines
    # the name (custom_hook's subclass would): the removals, less the super() read
    data = check_fixpair(fixpairs_env, "inheritapp", "inheritlib", "2.0.0", "--no-baseline")
    got = {k for k in errors(data) if k[0] != "inheritapp/__init__.py"}
    assert got == {
        ("inheritapp/train.py", 14),
        ("inheritapp/train.py", 26),
        ("inheritapp/train.py", 31),
    }
    assert not [f for f in data["findings"] if f["file"] == "inheritapp/base.py"]


#: what a class statement itself is told (test_check_inherited's rules), not a read through it
CLASS_LEVEL = {"base-method-added", "override-orphaned", "literal-changed"}


def test_c_a_removed_member_through_a_wrappers_getattr_is_an_error(
    fixpairs_env: dict[str, str],
) -> None:
    data = check_fixpair(fixpairs_env, "wrapapp", "wraplib", "2.0.0")
    got = errors(data)
    serve, wrapper = "wrapapp/serve.py", "wrapapp/wrapper.py"
    # :18 an attribute set from a constructor, :19 from our function's return annotation,
    # :28 a local through an assignment, wrapper.py:21 self in the wrapper's subclass,
    # :59 our method's return annotation, :60 an annotated attribute, :61 our property's
    assert set(got) == {(serve, n) for n in (18, 19, 28, 59, 60, 61)} | {(wrapper, 21)}
    f = got[(serve, 19)]
    assert f["symbol"] == "wraplib:Model.tie_weights"
    assert "'Model' object has no attribute 'tie_weights' (wraplib 2.0.0)" in f["message"]
    assert "ModelWrapper.__getattr__ (self.model) hands it to the wrapped Model" in f["message"]
    assert "wraplib 1.0.0 at wraplib/model.py:15" in f["message"]
    # the wrapper's own members, a name no release had, a __getattr__ that does not forward
    quiet = {(wrapper, n) for n in (22, 23, 24, 37)} | {(serve, n) for n in (20, 21, 22, 29)}
    # guarded by the caller: hasattr (an if, past an early exit, an and), except AttributeError
    quiet |= {(serve, n) for n in (34, 38, 40, 43)}
    assert not [f for f in data["findings"] if (f["file"], f["line"]) in quiet]


def test_d_a_renamed_parameter_swallowed_by_kwargs_is_reported_every_way_it_is_reached(
    fixpairs_env: dict[str, str],
) -> None:
    data = check_fixpair(fixpairs_env, "swallowapp", "swallowlib", "2.0.0")
    got = errors(data)
    text = "swallowapp/text.py"
    # direct, getattr with a default, getattr without, a local name, a module-level name,
    # a bound method held in a name, a method reached by getattr on an annotated object
    assert set(got) == {(text, n) for n in (10, 16, 17, 22, 23, 28, 41)}
    for f in got.values():
        assert f["category"] == "missing-required-arg"
    f = got[(text, 16)]
    assert f["symbol"] == "swallowlib:tokenize"
    assert "missing 1 required argument: 'pad_to'" in f["message"]
    assert "'padding' is no parameter of it now: its **kwargs takes 'padding'" in f["message"]
    assert f["fix"] == (
        "tokenize renamed 'padding' to 'pad_to' after swallowlib 1.0.0: pass pad_to= instead "
        "of padding=."
    )
    assert "'add_special_tokens'" in got[(text, 28)]["message"]
    # getattr(lib, "old_helper", None): gone, and the default stands in -- silent
    assert not [f for f in data["findings"] if f["line"] in (32, 33, 34, 36)]


@pytest.mark.parametrize(
    ("app", "lib"),
    [("inheritapp", "inheritlib"), ("wrapapp", "wraplib"), ("swallowapp", "swallowlib")],
)
def test_the_release_each_app_was_written_for_is_clean(
    fixpairs_env: dict[str, str], app: str, lib: str
) -> None:
    data = check_fixpair(fixpairs_env, app, lib, "1.0.0")
    assert data["summary"]["error"] == 0
    assert data["summary"]["warning"] == 0
