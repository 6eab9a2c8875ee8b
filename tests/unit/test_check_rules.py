"""`harness check` rules on a handwritten caller: each error line is marked in the fixture.

The fixture `tests/fixtures/site/callerpkg/uses.py` ends every line that must be reported with
``# E: <category>`` (error) or ``# W: <category>`` (warning); this test reads those markers as the
specification, so adding a case to the fixture adds it here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.analysis.checker import Checker, override_issues
from harness.analysis.findings import CheckReport, Finding
from harness.analysis.scan import Scan
from harness.models import Symbol
from probes.callsites import callsites
from tests.support import markers

SITE = Path(__file__).resolve().parents[1] / "fixtures" / "site"
USES = SITE / "callerpkg" / "uses.py"


def scan() -> dict[str, Any]:
    return callsites.run(
        {"caller": "callerpkg", "callees": None, "paths": [str(SITE)]}, lambda m: None
    )


def expected() -> set[tuple[str, int, str, str]]:
    """Every fixture module of the caller states its own (uses.py, kwargs.py, ...)."""
    out = set()
    for path in sorted(USES.parent.glob("*.py")):
        out |= markers.expected(path, f"callerpkg/{path.name}")
    return out


@pytest.fixture(scope="module")
def findings() -> list[Finding]:
    return Checker(Scan.from_dict(scan()), {"calleepkg": "1.2.3", "hyphen_pkg": "2.0"}).run()


def test_every_marked_finding_and_nothing_else(findings: list[Finding]) -> None:
    got = {(f.file, f.line, f.severity, f.category) for f in findings if f.severity != "info"}
    assert got == expected()


def test_guarded_import_is_info(findings: list[Finding]) -> None:
    infos = [
        (f.category, f.symbol)
        for f in findings
        if f.severity == "info" and f.category == "import-guarded"
    ]
    assert infos == [
        ("import-guarded", "calleepkg.core:gone_first"),  # and what its try body binds later
        ("import-guarded", "calleepkg.core:gone_second"),  # the name before it is bound
        ("import-guarded", "calleepkg.core:gone_record"),  # a fallback that never runs
        ("import-guarded", "calleepkg.core:gone_primary"),  # its fallback runs, and fails
        ("import-guarded", "calleepkg.nowhere:anything"),  # ModuleNotFoundError: module gone
        ("import-guarded", "calleepkg.core:gone_nested"),  # an outer except ImportError
        ("import-guarded", "calleepkg.core:Optional_thing"),  # fallback binds None
        ("import-guarded", "calleepkg.core:gone_helper"),  # and its unguarded uses are errors
        ("import-guarded", "calleepkg.core:gone_flagged"),  # uses behind the flag: fine
        ("import-guarded", "calleepkg.core:gone_def"),  # a def fallback: calls bind to it
    ]


def test_except_module_not_found_does_not_guard_a_missing_name(findings: list[Finding]) -> None:
    (f,) = [f for f in findings if f.symbol == "calleepkg.core:gone_narrow"]
    assert (f.severity, f.category) == ("error", "import-missing")
    assert f.message == (
        "cannot import name 'gone_narrow' from 'calleepkg.core' (calleepkg 1.2.3); the `except "
        "ModuleNotFoundError` of line 46 does not catch it: a name missing from a module that "
        "is there raises ImportError"
    )
    assert f.fix.startswith(
        "Import it from where calleepkg 1.2.3 defines it now, or catch ImportError there."
    )


def test_a_fallback_of_imports_that_bind_never_runs(findings: list[Finding]) -> None:
    (f,) = [f for f in findings if f.symbol == "calleepkg.core:gone_record"]
    assert f.message == (
        "calleepkg.core:gone_record does not exist in calleepkg 1.2.3, but the import is the "
        "except ImportError fallback of line 30, whose imports bind on calleepkg 1.2.3: it "
        "does not run"
    )


def test_a_name_a_module_getattr_serves_binds_and_a_warning_one_is_noted(
    findings: list[Finding],
) -> None:
    """``from calleepkg.moved import old_fn``: the shim's branch warns, then returns newhome's
    ``new_fn``; the import is fine (info), and calls bind to ``new_fn``."""
    notes = [f for f in findings if f.category == "deprecated"]
    assert [(f.severity, f.file, f.line, f.symbol) for f in notes] == [
        ("info", "callerpkg/shims.py", 6, "calleepkg.moved:old_fn")
    ]
    assert "calleepkg/moved.py:13" in notes[0].message
    assert (
        notes[0].fix
        == "Import it from where it lives: from calleepkg.newhome import new_fn as old_fn."
    )
    (call,) = [f for f in findings if (f.file, f.line) == ("callerpkg/shims.py", 14)]
    assert call.symbol == "calleepkg.moved:old_fn" and "new_fn()" in call.message


def test_default_callees_are_the_imported_source_packages() -> None:
    data = scan()
    assert set(data["callees"]) == {"calleepkg", "hyphen_pkg"}
    assert data["callees"]["calleepkg"] == {"dist": "calleepkg", "version": "1.2.3"}
    assert data["caller"]["requires"] == ["calleepkg==1.0.0"]


def test_findings_carry_callee_signature_and_fix(findings: list[Finding]) -> None:
    (f,) = [f for f in findings if (f.file, f.line) == ("callerpkg/uses.py", 41)]
    assert f.symbol == "calleepkg:RenamedRecord"
    assert (f.callee_file, f.callee_line) == ("calleepkg/core.py", 24)
    assert f.signature and f.signature.startswith("Record(name: str, size: int = 0")
    assert "bogus" in f.fix
    assert f.source == 'RenamedRecord("n", bogus=1)  # E: unexpected-kwarg'


def test_report_json_round_trip(findings: list[Finding]) -> None:
    report = CheckReport(
        "t", "callerpkg", "0.1.0", {"calleepkg": "1.2.3"}, {}, tuple(findings), {"files": 2}
    )
    assert CheckReport.from_dict(report.to_dict()) == report


@pytest.mark.parametrize(
    ("base", "override", "ok"),
    [
        (["self", "steps"], ["self", "steps"], True),
        (["self", "steps"], ["self"], False),
        (["self", "steps"], ["self", "*args", "**kw"], True),
        (["self"], ["self", "needed"], False),
        (["self", "steps"], ["self", "steps", "extra=1"], True),
        # torch's Module.forward(self, *input): its callers pass any positionals
        (["self", "*input"], ["self", "hidden_states", "mask=None"], True),
        (["self", "**kw"], ["self", "needed"], True),  # ... or any keyword
        (["self", "a"], ["self", "a", "b"], False),  # a named base still passes only its own
    ],
)
def test_override_compatibility(base: list[str], override: list[str], ok: bool) -> None:
    def params(names: list[str]) -> list[dict[str, Any]]:
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
            out.append({"name": name, "kind": kind, "default": default or None})
        return out

    issues = override_issues(
        Symbol.from_dict({"qualname": "f", "kind": "method", "parameters": params(base)}),
        Symbol.from_dict({"qualname": "f", "kind": "method", "parameters": params(override)}),
    )
    assert (issues == []) is ok


def test_an_override_of_a_base_attribute_without_signature_is_not_judged() -> None:
    """torch: ``forward: Callable[..., Any] = _forward_unimplemented`` -- a variable."""
    base = Symbol.from_dict({"qualname": "Module.forward", "kind": "variable", "parameters": None})
    meth = Symbol.from_dict(
        {
            "qualname": "Attn.forward",
            "kind": "method",
            "parameters": [
                {"name": "self", "kind": "positional-or-keyword", "default": None},
                {"name": "hidden_states", "kind": "positional-or-keyword", "default": None},
            ],
        }
    )
    assert override_issues(base, meth) == []


@pytest.mark.parametrize("against", ["hyphen-dist", "Hyphen_Dist", "hyphen_pkg"])
def test_against_takes_the_dist_name_or_the_import_name(against: str) -> None:
    data = callsites.run(
        {"caller": "callerpkg", "callees": [against], "paths": [str(SITE)]}, lambda m: None
    )
    assert set(data["callees"]) == {"hyphen_pkg"}
    assert data["callees"]["hyphen_pkg"]["dist"] == "hyphen-dist"
    found = Checker(Scan.from_dict(data), {"hyphen_pkg": "2.0"}).run()
    assert [(f.category, f.symbol) for f in found if f.severity == "error"] == [
        ("unexpected-kwarg", "hyphen_pkg.api:upload"),
    ]


def test_a_compiled_module_makes_a_name_unverifiable_and_says_why(
    findings: list[Finding],
) -> None:
    """No stub to read: the name may be there, so a warning naming the compiled module --
    whether imported from it directly or re-exported by ``*`` (numpy.random's mtrand)."""
    said = {f.symbol: f.message for f in findings if f.category == "unverifiable"}
    why = "(calleepkg._speedups is compiled, with no stub to read)"
    assert said["calleepkg._speedups:crunch"].endswith(why)
    assert said["calleepkg.fastmath:crunch"].endswith(why)
    assert said["calleepkg.fastmath:blend"].endswith(why)


def test_a_name_from_a_package_the_target_lacks_is_unverifiable(findings: list[Finding]) -> None:
    """torch on a pypi: target without it: the re-export may well be there on the real box."""
    (f,) = [f for f in findings if f.symbol == "calleepkg.bridge:Linear"]
    assert f.severity == "warning"
    assert f.message.endswith(
        "(calleepkg.bridge imports it from absentpkg, which is not installed here)"
    )


def test_a_rejected_key_of_a_spread_dict_says_the_line_that_puts_it_there(
    findings: list[Finding],
) -> None:
    """``Engine(**self.model_args)`` with the dict built in ``__init__``: the key is rejected
    where Engine hands it on, and ``--fix`` edits it where the dict gets it."""
    (f,) = [f for f in findings if (f.file, f.line) == ("callerpkg/kwargs.py", 118)]
    assert f.keywords == ("swap_space",) and f.origin_line == 113
    assert "Args" in f.message
