"""The pure decisions behind issue 34's class-hierarchy checks, as tables: how the callee's
own ``self.meth(...)`` calls bind to a caller's override, and how a mixed class's other
machinery is named."""

from __future__ import annotations

import pytest

from harness.analysis.hierarchy import Machinery, SelfCall, Where
from harness.analysis.rules.overrides import call_problems
from harness.analysis.scan import Callee
from harness.analysis.uses import Method
from harness.models import Parameter, Symbol


def _params(names: list[str]) -> tuple[Parameter, ...]:
    out = []
    for n in names:
        kind = (
            "var-keyword"
            if n.startswith("**")
            else "var-positional"
            if n.startswith("*")
            else "positional-or-keyword"
        )
        name, _, default = n.lstrip("*").partition("=")
        out.append(Parameter.from_dict({"name": name, "kind": kind, "default": default or None}))
    return tuple(out)


def _call(positional: int, keywords: tuple[str, ...] = (), owner: str = "Base.init") -> SelfCall:
    return SelfCall(Where("pkg/base.py", 10, owner), positional, keywords)


@pytest.mark.parametrize(
    ("override", "call", "own", "breaks"),
    [
        (["self"], _call(0), (), False),  # tie_weights(self), called bare: fine
        (["self"], _call(0, ("recompute_mapping",)), (), True),  # transformers 5.17
        (["self", "**kw"], _call(0, ("recompute_mapping",)), (), False),
        (["self", "**kw"], _call(1), (), True),  # a positional **kw cannot take
        (["self", "*a", "**kw"], _call(2, ("x",)), (), False),
        (["self", "X", "y=None"], _call(3), (), True),  # sklearn's _fit(X, y, routed_params)
        # ... made from a method the caller's class overrides too: it never runs on it
        (["self", "X", "y=None"], _call(3, owner="Pipeline.fit"), ("fit",), False),
    ],
)
def test_a_callee_self_call_binds_to_the_override(
    override: list[str], call: SelfCall, own: tuple[str, ...], breaks: bool
) -> None:
    base = Callee(
        Symbol.from_dict({"qualname": "Base.m", "kind": "method", "parameters": []}),
        self_calls=(call,),
    )
    got = call_problems(base, Method("m", 1, "method", _params(override)), frozenset(own))
    assert bool(got) is breaks
    if breaks:
        assert "pkg/base.py:10" in got[0][0] and got[0][1]


@pytest.mark.parametrize(
    ("base", "root", "kind", "words"),
    [
        (
            "BaseModel",
            "pydantic.BaseModel",
            "pydantic-model",
            "a pydantic model (pydantic.BaseModel)",
        ),
        (
            "PydanticClassRegistryMixin",
            "pydantic.BaseModel",
            "pydantic-model",
            "a pydantic model (pydantic.BaseModel, through PydanticClassRegistryMixin)",
        ),
        ("Meta", "pkg.Meta", "metaclass", "a class made by the metaclass (pkg.Meta)"),
    ],
)
def test_the_other_machinery_is_named_with_the_base_that_brings_it(
    base: str, root: str, kind: str, words: str
) -> None:
    assert Machinery(0, 1, base, root, kind).words == words
