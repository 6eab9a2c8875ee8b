"""Uses reached through a callee's values, TypedDict calls, and metaclass-made constructors.

The fixture ``tests/fixtures/valsite/valcaller/uses.py`` marks each line that must be reported
(``# E: <category>``); every other line there is a valid use that once read as an error:
``logger.info`` on a module-level instance, ``Partial(title=...)`` on a ``total=False``
TypedDict, ``Made("n")`` on a class whose metaclass ``__call__`` takes the call.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from harness.analysis.checker import Checker
from harness.analysis.findings import Finding
from harness.analysis.scan import Scan
from probes._finder import Finder
from probes.callsites import callsites
from probes.callsites._values import UNTYPED, value_of
from probes.signatures._astindex import Index
from probes.signatures._lookup import Lookup
from probes.signatures._typeddict import key_default
from tests.support import markers

SITE = Path(__file__).resolve().parents[1] / "fixtures" / "valsite"
USES = SITE / "valcaller" / "uses.py"


@pytest.fixture(scope="module")
def findings() -> list[Finding]:
    data = callsites.run(
        {"caller": "valcaller", "callees": None, "paths": [str(SITE)]}, lambda m: None
    )
    return Checker(Scan.from_dict(data), {"valcallee": "1.0"}).run()


@pytest.fixture(scope="module")
def lookup() -> Lookup:
    return Lookup(Index(Finder([str(SITE)])), lambda m: None)


def test_every_marked_finding_and_nothing_else(findings: list[Finding]) -> None:
    got = {(f.file, f.line, f.severity, f.category) for f in findings if f.severity != "info"}
    assert got == markers.expected(USES, "valcaller/uses.py")


def test_a_misspelled_method_on_an_instance_names_its_class(findings: list[Finding]) -> None:
    (typo,) = [f for f in findings if f.line == 14]
    assert typo.symbol == "valcallee._impl:Logger.sucess"
    assert typo.message == "'Logger' object has no attribute 'sucess' (valcallee 1.0)"


@pytest.mark.parametrize(
    ("qualname", "want"),
    [
        ("logger", ("instance", "valcallee._impl", "Logger")),  # a class imported under _alias
        ("registry", ("instance", "valcallee._impl", "Registry")),  # annotated
        ("Holder.default", ("instance", "valcallee._impl", "Logger")),  # a class attribute
        ("SETTINGS", UNTYPED),  # a dict literal
        ("handlers", UNTYPED),  # a function's result, unannotated
        ("cached_config", UNTYPED),  # a decorated function: lru_cache adds attributes
        ("plain", None),  # a plain function: its attributes are a function's
        ("Holder", None),  # a class
        ("no_such_name", None),  # missing: the usual path reports it
    ],
)
def test_value_of(lookup: Lookup, qualname: str, want: tuple[str, ...] | None) -> None:
    assert value_of(lookup, "valcallee", qualname) == want


def test_a_metaclass_call_makes_the_instance_type_unknown(lookup: Lookup) -> None:
    assert value_of(lookup, "valcallee.meta", "made") == UNTYPED


@pytest.mark.parametrize(
    ("keywords", "annotation", "required"),
    [
        ("", "int", True),
        ("total=True", "int", True),
        ("total=False", "int", False),
        ("", "NotRequired[int]", False),
        ("", "typing_extensions.NotRequired[int]", False),
        ("total=False", "Required[int]", True),
        ("", "Annotated[NotRequired[int], 'doc']", False),
        ("total=False", "ReadOnly[Required[int]]", True),
        ("", "'NotRequired[int]'", False),  # a string annotation
        ("", "Optional[int]", True),  # None is a value, not an absent key
        ("total=False", "RequiredSomething[int]", False),  # only the markers themselves
    ],
)
def test_typeddict_key_is_required(keywords: str, annotation: str, required: bool) -> None:
    cls = ast.parse(f"class D(TypedDict{', ' + keywords if keywords else ''}): pass").body[0]
    assert isinstance(cls, ast.ClassDef)
    ann = ast.parse(annotation, mode="eval").body
    assert (key_default(cls, ann) is None) is required


@pytest.mark.parametrize(
    ("qualname", "via", "params"),
    [
        ("Made", "metaclass:valcallee.meta.Named", ["name", "size"]),
        ("MadeChild", "metaclass:valcallee.meta.Named", ["name", "size"]),  # a base's metaclass
        ("Single", "__init__", ["path"]),  # ``__call__(cls, *args, **kwargs)`` hands them on
    ],
)
def test_constructor_through_a_metaclass(
    lookup: Lookup, qualname: str, via: str, params: list[str]
) -> None:
    sym = lookup.ref("valcallee.meta", qualname)["symbol"]
    assert sym["constructor"]["via"] == via
    assert [p["name"] for p in sym["parameters"]] == params
