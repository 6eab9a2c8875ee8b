"""What a use of a call's result does differently when the return changed kind (a table)."""

from __future__ import annotations

import pytest

from harness.analysis.rules.return_kind import Returned, breaks
from harness.analysis.uses import ResultUse


def r(kinds: str, falsy: bool, arity: int | None = None) -> Returned:
    return Returned(frozenset(kinds.split("/")), falsy, arity, "", "")


BOOL = r("bool", True)
PAIR = r("tuple", False, 2)
TRIPLE = r("tuple", False, 3)
OPT = r("None/tuple", True)


@pytest.mark.parametrize(
    ("how", "text", "now", "was", "said"),
    [
        ("truth", "ok", PAIR, BOOL, "is always true now"),
        ("truth", "ok", BOOL, BOOL, ""),  # same kind: nothing
        ("truth", "ok", OPT, BOOL, ""),  # may still be false: the test still means something
        ("truth", "ok", BOOL, PAIR, ""),  # a pair became a bool: the test got meaningful
        ("compare", "f() is True", PAIR, BOOL, "compares a tuple where it compared a bool"),
        ("compare", "f() == x", PAIR, TRIPLE, ""),  # not a bool/None comparison
        ("unpack", "a, b = f()", BOOL, PAIR, "cannot unpack non-iterable bool object"),
        ("unpack", "a, b = f()", TRIPLE, PAIR, "too many values to unpack (expected 2, got 3)"),
        ("unpack", "a, b, c = f()", PAIR, TRIPLE, "not enough values to unpack"),
        ("unpack", "a, *b = f()", TRIPLE, PAIR, ""),  # a starred target takes any length
        ("unpack", "a, b = f()", PAIR, PAIR, ""),
        ("subscript", "f()[0]", PAIR, BOOL, ""),  # the returns module's kind of use
    ],
)
def test_breaks(how: str, text: str, now: Returned, was: Returned, said: str) -> None:
    got = breaks(ResultUse(how, 1, text), now, was)
    assert (said in got and got != "") if said else got == ""
