"""check's baseline pins: read as packaging reads the caller's metadata, packaging imported
only for the shapes the plain reading leaves to it."""

from __future__ import annotations

from typing import Any

import pytest

from harness.reading.baseline import baseline_pins

CALLEES: dict[str, Any] = {"vllm": {"dist": "vllm"}, "hf": {"dist": "Hugging_Face.Hub"}}


def by_packaging(requires: list[str]) -> tuple[dict[str, str], list[str]]:
    """The reading before the plain path: every line through packaging."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    names = {canonicalize_name(i["dist"]) for i in CALLEES.values()}
    pins: dict[str, str] = {}
    notes: list[str] = []
    for text in requires:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        name = canonicalize_name(req.name)
        if name not in names or name in pins:
            continue
        spec = list(req.specifier)
        if len(spec) == 1 and spec[0].operator in ("==", "==="):
            pins[name] = spec[0].version
        elif spec:
            notes.append(
                f"{req.name}: the caller declares {req.specifier}, not one version; "
                f"pass --baseline {req.name}==VER for drift"
            )
    return pins, notes


@pytest.mark.parametrize(
    "requires",
    [
        ['vllm==0.11.0; extra == "datagen"', "torch", "transformers>=4.55"],
        ["vllm == 0.11.0", "vllm==0.12.0"],
        ["vllm===0.11.0 ; extra=='x'"],
        ["vllm>=0.10,<0.12", "Hugging-Face-Hub==1.2"],
        ["hugging_face.hub==0.3.1rc1", "vllm[audio]==0.11.0"],
        ['vllm==0.11.0; python_version >= "3.9"', "vllm==0.9"],
        ["vllm-==1.0", "vllm.x==1", "  vllm==1.0", "vllm==1.0; extra == ", "vllm ==1.*"],
        ["vllm @ https://example.com/vllm.whl", 'vllm==0.11.0; extra == "a b"', "vllm"],
        ["", "; extra == 'x'", "==1.0", "vllm==1.0.0; extra == 'dev' and extra == 'x'"],
    ],
)
def test_the_plain_reading_agrees_with_packaging(requires: list[str]) -> None:
    assert baseline_pins(requires, CALLEES, []) == by_packaging(requires)
