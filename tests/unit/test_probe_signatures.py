"""The signatures probe on a handwritten package: one case per rule a caller relies on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from probes._finder import ProbeFailure
from probes.signatures import signatures

SITE = str(Path(__file__).resolve().parents[1] / "fixtures" / "site")


def probe(module: str, qualname: str | None = None, **kw: Any) -> dict[str, Any]:
    warnings: list[str] = []
    return signatures.run(
        {"module": module, "qualname": qualname, "paths": [SITE], **kw}, warnings.append
    )


def params(sym: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    return [(p["name"], p["kind"], p["default"]) for p in sym["parameters"]]


@pytest.mark.parametrize(
    ("module", "qualname", "expected"),
    [
        (
            "calleepkg.core",
            "plain",
            [
                ("a", "positional-or-keyword", None),
                ("b", "positional-or-keyword", "2"),
                ("c", "keyword-only", None),
                ("rest", "var-keyword", None),
            ],
        ),
        (
            "calleepkg.lazy_mod",
            "LazyThing",
            [
                ("a", "positional-only", None),
                ("b", "positional-or-keyword", '"x"'),
                ("args", "var-positional", None),
                ("c", "keyword-only", None),
                ("d", "keyword-only", "1.0"),
                ("kw", "var-keyword", None),
            ],
        ),
        # dataclass: default_factory, init=False dropped, InitVar kept, ClassVar dropped, KW_ONLY
        (
            "calleepkg.core",
            "Record",
            [
                ("name", "positional-or-keyword", None),
                ("size", "positional-or-keyword", "0"),
                ("cache", "positional-or-keyword", "dict"),
                ("seed", "positional-or-keyword", "7"),
                ("flag", "keyword-only", "False"),
            ],
        ),
        # inherited dataclass fields come first; kw_only=True applies to the child's own
        (
            "calleepkg.core",
            "Child",
            [
                ("name", "positional-or-keyword", None),
                ("size", "positional-or-keyword", "0"),
                ("cache", "positional-or-keyword", "dict"),
                ("seed", "positional-or-keyword", "7"),
                ("flag", "keyword-only", "False"),
                ("extra", "keyword-only", None),
            ],
        ),
        # a decorator marked with PEP 681 dataclass_transform, defined in another module
        (
            "calleepkg.core",
            "Configured",
            [
                ("required_a", "positional-or-keyword", None),
                ("optional_b", "positional-or-keyword", '"b"'),
            ],
        ),
        ("calleepkg.core", "PydDC", [("x", "positional-or-keyword", None)]),
        # pydantic model: keyword-only fields, alias is the init name, Field(default) positional
        (
            "calleepkg.core",
            "Model",
            [("alpha", "keyword-only", None), ("Beta", "keyword-only", '"b"')],
        ),
        (
            "calleepkg.core",
            "Point",
            [("x", "positional-or-keyword", None), ("y", "positional-or-keyword", "0")],
        ),
        # inherited constructor
        (
            "calleepkg.core",
            "Derived",
            [("engine", "positional-or-keyword", None), ("verbose", "keyword-only", "False")],
        ),
        # star-import re-export
        (
            "calleepkg.sub",
            "deep_fn",
            [("x", "positional-or-keyword", None), ("y", "positional-or-keyword", "1")],
        ),
    ],
)
def test_parameters(
    module: str, qualname: str, expected: list[tuple[str, str, str | None]]
) -> None:
    assert params(probe(module, qualname)["symbols"][0]) == expected


@pytest.mark.parametrize(
    ("qualname", "via", "extra"),
    [
        ("Record", "dataclass", "forbid"),
        ("Configured", "dataclass_transform:calleepkg.transform.model", "forbid"),
        ("PydDC", "pydantic-dataclass", "ignore"),
        ("Model", "pydantic-model", "forbid"),
        ("Point", "namedtuple", "forbid"),
        ("Base", "__init__", "forbid"),
    ],
)
def test_constructor_rule_is_named(qualname: str, via: str, extra: str) -> None:
    ctor = probe("calleepkg.core", qualname)["symbols"][0]["constructor"]
    assert (ctor["via"], ctor["extra"]) == (via, extra)


def test_unknown_base_is_unknown_not_empty() -> None:
    sym = probe("calleepkg.core", "External")["symbols"][0]
    assert sym["parameters"] is None
    assert sym["constructor"]["via"] == "unknown"


def test_initvar_is_marked() -> None:
    sym = probe("calleepkg.core", "Record")["symbols"][0]
    assert [p["name"] for p in sym["parameters"] if p.get("init_var")] == ["seed"]


@pytest.mark.parametrize(
    ("module", "qualname", "hops"),
    [
        ("calleepkg", "RenamedRecord", [("calleepkg", "import"), ("calleepkg.core", "defined")]),
        ("calleepkg", "LazyThing", [("calleepkg", "lazy"), ("calleepkg.lazy_mod", "defined")]),
        ("calleepkg", "plain", [("calleepkg", "import"), ("calleepkg.core", "defined")]),
    ],
)
def test_reexport_chain(module: str, qualname: str, hops: list[tuple[str, str]]) -> None:
    out = probe(module, qualname)
    assert [(h["module"], h["how"]) for h in out["chain"]] == hops
    assert out["symbols"][0]["file"].startswith("calleepkg/")


def test_renamed_reexport_keeps_definition_name() -> None:
    sym = probe("calleepkg", "RenamedRecord")["symbols"][0]
    assert (sym["qualname"], sym["file"], sym["line"]) == ("Record", "calleepkg/core.py", 24)


def test_method_kinds_and_inherited_member() -> None:
    base = probe("calleepkg.core", "Base")["symbols"][0]
    kinds = {m["qualname"]: m["kind"] for m in base["members"]}
    assert kinds == {
        "Base.__init__": "method",
        "Base.run": "method",
        "Base.helper": "staticmethod",
        "Base.build": "classmethod",
        "Base.name": "property",
    }
    assert "engine" in base["attributes"]
    run = probe("calleepkg.core", "Derived.run")
    assert run["symbols"][0]["qualname"] == "Base.run"
    assert run["chain"][-1]["how"] == "inherited"


def test_overloads_listed_with_implementation() -> None:
    sym = probe("calleepkg.transform", "pick")["symbols"][0]
    assert len(sym["overloads"]) == 2
    assert [p["name"] for p in sym["overloads"][1]["parameters"]] == ["x", "y"]


def test_module_listing_has_dist_and_async() -> None:
    out = probe("calleepkg.core")
    assert (out["dist"], out["version"]) == ("calleepkg", "1.2.3")
    by_name = {s["qualname"]: s for s in out["symbols"]}
    assert by_name["coro"]["is_async"] is True
    assert by_name["plain"]["doc"] == "Plain function."


def test_source_excerpt_covers_decorators() -> None:
    out = probe("calleepkg.core", "Configured", source=True)
    assert out["source"]["text"].splitlines()[0] == "@model"
    assert out["source"]["start"] == 43


@pytest.mark.parametrize(
    ("module", "qualname", "kind", "suggestion"),
    [
        ("calleepkg.cor", None, "module-not-found", "calleepkg.core"),
        ("nosuchpkg", None, "dist-not-installed", None),
        ("calleepkg.core", "Recrd", "symbol-not-found", "calleepkg.core:Record"),
        ("calleepkg.core", "Base.rnu", "symbol-not-found", "Base.run"),
    ],
)
def test_misses_explain_themselves(
    module: str, qualname: str | None, kind: str, suggestion: str | None
) -> None:
    with pytest.raises(ProbeFailure) as info:
        probe(module, qualname)
    assert info.value.kind == kind
    if suggestion:
        assert suggestion in info.value.details["suggestions"]
    else:
        assert SITE in info.value.details["searched"]


def test_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    pkg = tmp_path / "badpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("x = 1\ndef broken(:\n")
    with pytest.raises(ProbeFailure) as info:
        signatures.run({"module": "badpkg", "paths": [str(tmp_path)]}, lambda m: None)
    assert info.value.kind == "invalid-source"
    assert f"{pkg / '__init__.py'}:2" in str(info.value)


def test_a_stub_stands_in_for_a_compiled_module() -> None:
    """``_typed.abi3.so`` with ``_typed.pyi`` beside it: the stub's signatures, its file named."""
    got = probe("calleepkg._typed", "Vec.__init__")
    assert got["file"] == "calleepkg/_typed.pyi"
    assert params(got["symbols"][0]) == [
        ("self", "positional-or-keyword", None),
        ("x", "positional-or-keyword", None),
        ("y", "positional-or-keyword", None),
    ]


@pytest.mark.parametrize(
    ("module", "qualname", "message"),
    [
        # declared by the stub beside the source (as a variable), made by compiled code
        ("calleepkg.limits", "huge",
         "calleepkg.limits:huge is declared in calleepkg/limits.pyi only: its code is compiled"),
        ("calleepkg._speedups", None, "calleepkg._speedups is a compiled extension"),
    ],
)  # fmt: skip
def test_compiled_code_is_named_as_the_reason(
    module: str, qualname: str | None, message: str
) -> None:
    with pytest.raises(ProbeFailure) as info:
        probe(module, qualname)
    assert str(info.value).startswith(message)
    assert not info.value.details.get("suggestions")


def test_a_stub_package_stands_in_for_a_compiled_package() -> None:
    """``torch/_C/__init__.pyi`` beside ``torch/_C.*.so``: a package of stubs, submodules too."""
    assert probe("calleepkg._native", "version")["file"] == "calleepkg/_native/__init__.pyi"
    ops = probe("calleepkg._native._ops", "add")
    assert params(ops["symbols"][0]) == [
        ("a", "positional-or-keyword", None),
        ("b", "positional-or-keyword", None),
    ]


def test_a_name_only_a_stub_declares_is_described_from_the_stub() -> None:
    """numpy's ``np.array``: ``__init__.py`` gets it from compiled code; the stubs define it."""
    got = probe("calleepkg.limits", "tiny")
    assert got["symbols"][0]["file"] == "calleepkg/limits.pyi"
    assert params(got["symbols"][0]) == [("kind", "positional-or-keyword", None)]
    # through the stub's own import, into the next stub
    assert probe("calleepkg.limits", "dot")["symbols"][0]["file"] == "calleepkg/_typed.pyi"
