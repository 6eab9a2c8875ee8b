"""Issue 21 item 9: one ``pypi:`` line pins each dist once."""

from __future__ import annotations

import pytest

from harness.errors import UsageError
from harness.targets.pypi import Pin, parse_spec


def test_conflicting_pins_are_refused_whatever_the_spelling() -> None:
    with pytest.raises(
        UsageError, match=r"Foo_Bar is pinned twice \(foo-bar==1.0 and Foo_Bar==2.0\)"
    ):
        parse_spec("foo-bar==1.0,Foo_Bar==2.0")


def test_the_same_pin_twice_is_one_pin() -> None:
    assert parse_spec("vllm==0.16.0,speculators==0.3.0,vllm==0.16.0") == [
        Pin("vllm", "0.16.0"),
        Pin("speculators", "0.3.0"),
    ]
