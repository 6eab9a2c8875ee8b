"""Keywords a caller passes to a callee dataclass's fields and to its callee base's constructor
through ``super().__init__`` -- span-marker 1.8.1 on transformers 5 (round 2: 2 of 3 missed).

``superapp`` 0.1.0 (no baseline: ``superlib>=1.0``) subclasses ``superlib.Trainer`` and runs
``dataclasses.replace(args, include_inputs_for_metrics=True)`` on a ``TrainingArguments``
parameter, then ``super().__init__(..., tokenizer=...)``. superlib 2.0.0 dropped the dataclass
field (``replace`` raises what the synthesized ``__init__`` raises) and the decorator that took
``tokenizer`` (1.0.0's ``@deprecate_kwarg("tokenizer", new_name="processing_class")``, a
decorator factory whose literal name the wrapper handles). ``replace`` with a field that is
still there, and ``super().__init__`` with keywords the base takes, are fine on both.
"""

from __future__ import annotations

from tests.support.fixcheck import check_fixpair, errors_by_line


def test_replace_and_super_init_bind_to_the_callee(fixpairs_env: dict[str, str]) -> None:
    data = check_fixpair(fixpairs_env, "superapp", "superlib", "2.0.0")
    errors = errors_by_line(data)
    assert set(errors) == {
        (11, "unexpected-kwarg"),  # TrainingArguments(...): found before this
        (13, "unexpected-kwarg"),  # dataclasses.replace(args, ...)
        (15, "unexpected-kwarg"),  # super().__init__(..., tokenizer=...)
    }
    assert "'include_inputs_for_metrics'" in errors[(13, "unexpected-kwarg")]
    assert errors[(15, "unexpected-kwarg")] == (
        "Trainer.__init__() got an unexpected keyword argument 'tokenizer'"
    )


def test_the_release_it_was_written_for_says_nothing(fixpairs_env: dict[str, str]) -> None:
    data = check_fixpair(fixpairs_env, "superapp", "superlib", "1.0.0")
    assert [f for f in data["findings"] if f["severity"] == "error"] == []
