"""Which Python the probes read for (issue 34): an enum class's call signature and
``sys.version_info`` tests depend on it. The probes run on the target's own interpreter, so by
default that decides; a ``pypi:`` target runs them on this machine's Python, and its
``python==X.Y`` pin names the Python the target runs (``args["python"]``)."""

from __future__ import annotations

import ast
import sys

import pytest

from harness.errors import UsageError
from harness.targets.pypi import Pin, parse_spec, python_pin
from probes.signatures._platform import Decider, target_python
from probes.signatures._stdsigs import enum_call_params

OLD = [
    ("value", "positional-or-keyword", None),
    ("names", "positional-or-keyword", "None"),
    ("module", "keyword-only", "None"),
    ("qualname", "keyword-only", "None"),
    ("type", "keyword-only", "None"),
    ("start", "keyword-only", "1"),
]
FUNCTIONAL = [
    ("new_class_name", "positional-only", None),
    ("names", "positional-or-keyword", None),
    *OLD[2:],
    ("boundary", "keyword-only", "None"),
]


@pytest.mark.parametrize(
    ("python", "members", "expected"),
    [
        ((3, 10), True, OLD),  # EnumMeta.__call__, before boundary=
        ((3, 10), False, OLD),
        ((3, 11), True, [*OLD, ("boundary", "keyword-only", "None")]),
        ((3, 11), False, [*OLD, ("boundary", "keyword-only", "None")]),
        ((3, 12), True, [("values", "var-positional", None)]),  # EnumType.__signature__
        ((3, 12), False, FUNCTIONAL),  # no members: the functional API
        ((3, 13), True, [("values", "var-positional", None)]),
        ((3, 13), False, FUNCTIONAL),
    ],
)
def test_enum_call_signature_by_python(
    python: tuple[int, int], members: bool, expected: list[tuple[str, str, str | None]]
) -> None:
    got = [(p["name"], p["kind"], p["default"]) for p in enum_call_params(python, members)]
    assert got == expected


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"python": "3.12"}, (3, 12)),
        ({"python": "3.9.18"}, (3, 9)),
        ({}, tuple(sys.version_info[:2])),  # the interpreter running the probe
        ({"python": None}, tuple(sys.version_info[:2])),
        ({"python": "three"}, tuple(sys.version_info[:2])),  # not a version: ours
    ],
)
def test_target_python(args: dict[str, object], expected: tuple[int, int]) -> None:
    assert target_python(args) == expected


@pytest.mark.parametrize(
    ("test", "python", "expected"),
    [
        ("sys.version_info >= (3, 12)", (3, 12), True),
        ("sys.version_info >= (3, 12)", (3, 11), False),
        ("sys.version_info[:2] == (3, 10)", (3, 10), True),
        ("sys.version_info < (3, 11)", (3, 13), False),
        ("sys.platform == 'linux'", (3, 12), sys.platform == "linux"),  # the platform is ours
    ],
)
def test_version_tests_are_decided_for_the_python_read_for(
    test: str, python: tuple[int, int], expected: bool
) -> None:
    assert Decider(None, python).truth(ast.parse(test, mode="eval").body) is expected


@pytest.mark.parametrize(
    ("spec", "wheels", "python"),
    [
        ("vllm==0.20.2", ["vllm==0.20.2"], None),
        ("vllm==0.20.2,python==3.12", ["vllm==0.20.2"], "3.12"),
        ("python==3.11.7,transformers==5.17.0", ["transformers==5.17.0"], "3.11"),
    ],
)
def test_python_pin_names_the_python_not_a_wheel(
    spec: str, wheels: list[str], python: str | None
) -> None:
    got, version = python_pin(spec, parse_spec(spec))
    assert [p.requirement for p in got] == wheels and version == python


@pytest.mark.parametrize(
    "spec", ["vllm==0.20.2,python==2.7", "vllm==0.20.2,python==3", "python==3.12"]
)
def test_python_pin_refusals(spec: str) -> None:
    with pytest.raises(UsageError):
        python_pin(spec, parse_spec(spec))


def test_a_pin_named_python_is_never_fetched() -> None:
    assert python_pin("x", [Pin("Python", "3.12"), Pin("a", "1")]) == ([Pin("a", "1")], "3.12")
