"""The fix rules as tables: a finding and two callee versions in, a decision out (pure).

Every "needs a person" row is a case where an edit would be a guess; every fix row names the
exact edit. The symbols are written as the ``locate`` probe reports them.
"""

from __future__ import annotations

from typing import Any

import pytest

from harness.analysis.findings import ERROR, Finding
from harness.fixing.model import Facts, Fix, ImportEdit, KeywordEdit, Manual, ModuleDefs, Side
from harness.fixing.rules import (
    RULES,
    decide,
    dropped_keyword,
    moved_import,
    renamed_keyword,
    renamed_symbol,
)
from harness.models import (
    KEYWORD_ONLY,
    POSITIONAL_OR_KEYWORD,
    VAR_KEYWORD,
    Symbol,
)


def p(
    name: str, default: str | None = None, kind: str = POSITIONAL_OR_KEYWORD, ann: str | None = None
) -> dict[str, Any]:
    return {"name": name, "kind": kind, "default": default, "annotation": ann}


def sym(
    module: str,
    qual: str,
    params: list[dict[str, Any]] | None,
    kind: str = "function",
    members: list[dict[str, Any]] | None = None,
    version: str = "2.0",
) -> Symbol:
    return Symbol.from_dict(
        {
            "qualname": qual,
            "kind": kind,
            "module": module,
            "file": module.replace(".", "/") + ".py",
            "line": 10,
            "parameters": params,
            "members": members or [],
            "dist": "lib",
            "version": version,
        }
    )


def method(cls: str, name: str, params: list[dict[str, Any]]) -> dict[str, Any]:
    return {"qualname": f"{cls}.{name}", "kind": "method", "parameters": [p("self"), *params]}


def imp(module: str, name: str) -> Finding:
    return Finding(
        ERROR,
        "import-missing",
        "app/uses.py",
        3,
        f"from {module} import {name}",
        f"{module}:{name}",
        f"cannot import name '{name}' from '{module}' (lib 2.0)",
        "Import it from where lib 2.0 defines it now, or drop the use.",
        imported=name,
    )


def kwarg(symbol: str, kw: str, line: int = 7) -> Finding:
    func = symbol.partition(":")[2]
    return Finding(
        ERROR,
        "unexpected-kwarg",
        "app/uses.py",
        line,
        "",
        symbol,
        f"{func}() got an unexpected keyword argument '{kw}'",
        "",
        keywords=(kw,),
    )


def side(label: str, **kw: Any) -> Side:
    return Side(label, **kw)


OLD_PARSE = sym("lib.util", "parse", [p("text"), p("strict", "False")], version="1.0")


# -- moved import ---------------------------------------------------------------------------
def moved(defined: list[Symbol], old: Symbol | None = OLD_PARSE) -> Facts:
    return Facts(
        side("lib 1.0", symbols={"lib.util:parse": old} if old else {}),
        side("lib 2.0", defined={"parse": tuple(defined)}),
    )


@pytest.mark.parametrize(
    ("defined", "expect"),
    [
        # one definition elsewhere, a new optional parameter: a compatible move
        (
            [sym("lib.text", "parse", [p("text"), p("strict", "False"), p("enc", "'utf-8'")])],
            ImportEdit(3, "lib.util", "parse", "lib.text", "parse"),
        ),
        # a dropped parameter is compatible too: the calls passing it get their own finding
        (
            [sym("lib.text", "parse", [p("text")])],
            ImportEdit(3, "lib.util", "parse", "lib.text", "parse"),
        ),
        (
            [
                sym("lib.a", "parse", [p("text"), p("strict", "False")]),
                sym("lib.b", "parse", [p("text"), p("strict", "False")]),
            ],
            "is defined in 2 modules of lib 2.0: lib.a (lib/a.py:10), lib.b (lib/b.py:10)",
        ),
        (
            [sym("lib.text", "parse", [p("text")], kind="class")],
            "is a class in lib.text now (was a function",
        ),
        (
            [sym("lib.text", "parse", [p("text"), p("strict", "False"), p("mode")])],
            "new required parameter 'mode'",
        ),
        (
            [sym("lib.text", "parse", [p("text"), p("strict", "False", kind=KEYWORD_ONLY)])],
            "parameter 'strict' is now keyword-only",
        ),
        ([], None),  # defined nowhere: not a move (the rename rule is asked next)
    ],
)
def test_moved_import(defined: list[Symbol], expect: object) -> None:
    got = moved_import.decide(imp("lib.util", "parse"), moved(defined))
    if expect is None:
        assert got is None
    elif isinstance(expect, ImportEdit):
        assert isinstance(got, Fix) and got.edit == expect
        assert got.moved == ("lib.text:parse", "lib.util:parse")
        assert (got.dist, got.version) == ("lib", "2.0")
    else:
        assert isinstance(got, Manual) and str(expect) in got.reason, got


def test_a_guarded_import_left_unbound_moves_at_the_import_line() -> None:
    """``try: from lib.util import parse / except ImportError: pass`` then ``parse(x)``: the
    error is at the use (unbound-name); the edit is the import's, at its own line."""
    use = Finding(
        ERROR,
        "unbound-name",
        "app/uses.py",
        40,
        "parse(x)",
        "lib.util:parse",
        "name 'parse' is not defined",
        "",
        imported="parse",
        origin_line=12,
    )
    got = decide(use, moved([sym("lib.text", "parse", [p("text"), p("strict", "False")])]))
    assert isinstance(got, Fix) and got.kind == "moved-import"
    assert got.edit == ImportEdit(12, "lib.util", "parse", "lib.text", "parse")


def test_moved_import_needs_the_old_version_and_an_import() -> None:
    facts = moved([sym("lib.text", "parse", [p("text")])], old=None)
    assert moved_import.decide(imp("lib.util", "parse"), facts) is None
    assert moved_import.decide(kwarg("lib.util:parse", "x"), moved([])) is None


# -- renamed class / function ---------------------------------------------------------------
SESSION = sym(
    "lib.api",
    "Session",
    [p("url"), p("pool", "4")],
    kind="class",
    members=[method("Session", "open", [])],
    version="1.0",
)


def renamed(
    new_defs: dict[str, Symbol],
    old_defs: dict[str, Symbol] | None = None,
    exported: frozenset[str] = frozenset(),
) -> Facts:
    before = {"Session": SESSION, **(old_defs or {})}
    return Facts(
        side(
            "lib 1.0",
            symbols={"lib:Session": SESSION},
            modules={"lib.api": ModuleDefs(frozenset(before), before)},
        ),
        side(
            "lib 2.0",
            modules={"lib.api": ModuleDefs(frozenset(new_defs), new_defs, {"lib": exported})},
        ),
    )


def cls(
    name: str, params: list[dict[str, Any]] | None = None, methods: tuple[str, ...] = ("open",)
) -> Symbol:
    return sym(
        "lib.api",
        name,
        [p("url"), p("pool", "4")] if params is None else params,
        kind="class",
        members=[method(name, m, []) for m in methods],
    )


@pytest.mark.parametrize(
    ("new_defs", "old_defs", "exported", "expect"),
    [
        # the one new class of that shape, served by the package the caller imports from
        (
            {"ClientSession": cls("ClientSession")},
            None,
            frozenset({"ClientSession"}),
            ("lib", "ClientSession"),
        ),
        # not re-exported there: import it from where it is defined
        ({"ClientSession": cls("ClientSession")}, None, frozenset(), ("lib.api", "ClientSession")),
        (
            {"HttpSession": cls("HttpSession"), "WebSession": cls("WebSession")},
            None,
            frozenset(),
            "2 new names there have its shape: HttpSession, WebSession",
        ),
        ({"Connection": cls("Connection")}, None, frozenset(), "the names are unrelated"),
        (
            {"ClientSession": cls("ClientSession", methods=("open", "close"))},
            None,
            frozenset(),
            None,
        ),
        (
            {"ClientSession": cls("ClientSession", params=[p("url"), p("pool", "8")])},
            None,
            frozenset(),
            None,
        ),
        (
            {"ClientSession": cls("ClientSession")},
            {
                "OldSession": sym(
                    "lib.api",
                    "OldSession",
                    [p("url"), p("pool", "4")],
                    kind="class",
                    members=[method("OldSession", "open", [])],
                )
            },
            frozenset(),
            "Session and OldSession left lib.api with the same shape",
        ),
        (
            {"session": sym("lib.api", "session", [p("url"), p("pool", "4")])},
            None,
            frozenset(),
            "but is a function: another kind is not a rename",
        ),
        ({"Session": SESSION}, None, frozenset(), None),  # still there: not a rename
    ],
)
def test_renamed_symbol(
    new_defs: dict[str, Symbol],
    old_defs: dict[str, Symbol] | None,
    exported: frozenset[str],
    expect: object,
) -> None:
    got = renamed_symbol.decide(imp("lib", "Session"), renamed(new_defs, old_defs, exported))
    if expect is None:
        assert got is None
    elif isinstance(expect, tuple):
        assert isinstance(got, Fix), got
        assert got.edit == ImportEdit(3, "lib", "Session", expect[0], expect[1])
    else:
        assert isinstance(got, Manual) and str(expect) in got.reason, got


def test_renamed_symbol_refuses_a_new_name_of_another_kind_and_an_empty_shape() -> None:
    conv = sym("lib.api", "convert", [p("x"), p("y", "2")], version="1.0")
    facts = Facts(
        side(
            "lib 1.0",
            symbols={"lib.api:convert": conv},
            modules={"lib.api": ModuleDefs(frozenset({"convert"}), {"convert": conv})},
        ),
        side(
            "lib 2.0",
            modules={
                "lib.api": ModuleDefs(
                    frozenset({"Converter"}),
                    {"Converter": sym("lib.api", "Converter", [p("x"), p("y", "2")], kind="class")},
                )
            },
        ),
    )
    got = renamed_symbol.decide(imp("lib.api", "convert"), facts)
    assert isinstance(got, Manual) and "another kind is not a rename" in got.reason
    ready = sym("lib.api", "is_ready", [], version="1.0")
    facts = Facts(
        side(
            "lib 1.0",
            symbols={"lib.api:is_ready": ready},
            modules={"lib.api": ModuleDefs(frozenset({"is_ready"}), {"is_ready": ready})},
        ),
        side(
            "lib 2.0",
            modules={
                "lib.api": ModuleDefs(
                    frozenset({"is_ready_now"}),
                    {"is_ready_now": sym("lib.api", "is_ready_now", [])},
                )
            },
        ),
    )
    got = renamed_symbol.decide(imp("lib.api", "is_ready"), facts)
    assert isinstance(got, Manual) and "proves nothing" in got.reason


# -- renamed keyword ------------------------------------------------------------------------
def kw_facts(old: list[dict[str, Any]], new: list[dict[str, Any]], kind: str = "function") -> Facts:
    key = "lib.net:connect"
    return Facts(
        side("lib 1.0", symbols={key: sym("lib.net", "connect", old, kind=kind, version="1.0")}),
        side("lib 2.0", symbols={key: sym("lib.net", "connect", new, kind=kind)}),
    )


@pytest.mark.parametrize(
    ("old", "new", "expect"),
    [
        ([p("host"), p("timeout", "10")], [p("host"), p("timeout_s", "10")], "timeout_s"),
        # unrelated names, but both typed alike: the type vouches for it
        (
            [p("host"), p("wait", "True", ann="bool")],
            [p("host"), p("block", "True", ann="bool")],
            "block",
        ),
        (
            [p("host"), p("cache", "None")],
            [p("host"), p("cache_dir", "'.cache'")],
            "its default changed",
        ),
        (
            [p("host"), p("disable_tls", "False")],
            [p("host"), p("enable_tls", "False")],
            "the meaning flipped",
        ),
        (
            [p("host"), p("wait", "True")],
            [p("host"), p("block", "True")],
            "the names are unrelated",
        ),
        (
            [p("host"), p("timeout", "10", ann="int")],
            [p("host"), p("timeout_s", "10", ann="float")],
            "its type changed (int -> float)",
        ),
        # Optional[X] and X | None are one type
        (
            [p("host"), p("timeout", "None", ann="Optional[int]")],
            [p("host"), p("timeout_s", "None", ann="int | None")],
            "timeout_s",
        ),
        ([p("host"), p("timeout", "10")], [p("host")], None),  # removed, not renamed
        (
            [p("host"), p("timeout", "10")],
            [p("timeout_s", "10"), p("host")],
            None,
        ),  # not at its position
    ],
)
def test_renamed_keyword(
    old: list[dict[str, Any]], new: list[dict[str, Any]], expect: str | None
) -> None:
    gone = old[1]["name"]
    got = renamed_keyword.decide(kwarg("lib.net:connect", gone), kw_facts(old, new))
    if expect is None:
        assert got is None
    elif expect.isidentifier():
        assert isinstance(got, Fix), got
        assert got.edit == KeywordEdit(7, gone, expect)
    else:
        assert isinstance(got, Manual) and expect in got.reason, got


def test_renamed_keyword_on_a_method_ignores_self() -> None:
    old = sym(
        "lib.net",
        "Client.send",
        [p("self"), p("data"), p("flush", "True")],
        kind="method",
        version="1.0",
    )
    new = sym(
        "lib.net", "Client.send", [p("self"), p("data"), p("flush_now", "True")], kind="method"
    )
    key = "lib.net:Client.send"
    facts = Facts(side("lib 1.0", symbols={key: old}), side("lib 2.0", symbols={key: new}))
    got = renamed_keyword.decide(kwarg(key, "flush"), facts)
    assert isinstance(got, Fix) and got.edit == KeywordEdit(7, "flush", "flush_now")


# -- dropped keyword ------------------------------------------------------------------------
def drop_facts(
    old: list[dict[str, Any]], new: list[dict[str, Any]], reads: frozenset[str] | None
) -> Facts:
    key = "lib.net:get"
    return Facts(
        side(
            "lib 1.0", symbols={key: sym("lib.net", "get", old, version="1.0")}, reads={key: reads}
        ),
        side("lib 2.0", symbols={key: sym("lib.net", "get", new)}),
    )


@pytest.mark.parametrize(
    ("old", "new", "reads", "expect"),
    [
        # never read by the version the caller was written for: dropping it changes nothing
        (
            [p("url"), p("verbose", "False")],
            [p("url")],
            frozenset({"url"}),
            KeywordEdit(7, "verbose", None),
        ),
        # read, but optional: droppable only where the call passes the old default
        (
            [p("url"), p("retry", "True")],
            [p("url")],
            frozenset({"url", "retry"}),
            KeywordEdit(7, "retry", None, only_if="True"),
        ),
        # unknown whether it was read (a decorator): the default proof still holds
        (
            [p("url"), p("retry", "True")],
            [p("url")],
            None,
            KeywordEdit(7, "retry", None, only_if="True"),
        ),
        (
            [p("url"), p("key")],
            [p("url")],
            frozenset({"url", "key"}),
            "read it (lib/net.py:10): where its value goes now",
        ),
        ([p("url"), p("key")], [p("url")], None, "may read it"),
        ([p("url"), p("retry", "True")], [p("url"), p("kw", kind=VAR_KEYWORD)], frozenset(), None),
        (
            [p("url"), p("retry", "True")],
            [p("url"), p("retries", "True")],
            frozenset(),
            None,
        ),  # a rename's
    ],
)
def test_dropped_keyword(
    old: list[dict[str, Any]],
    new: list[dict[str, Any]],
    reads: frozenset[str] | None,
    expect: object,
) -> None:
    gone = old[1]["name"]
    got = dropped_keyword.decide(kwarg("lib.net:get", gone), drop_facts(old, new, reads))
    if expect is None:
        assert got is None
    elif isinstance(expect, KeywordEdit):
        assert isinstance(got, Fix) and got.edit == expect, got
    else:
        assert isinstance(got, Manual) and str(expect) in got.reason, got


def test_a_fix_follows_a_symbol_an_earlier_fix_moved() -> None:
    """After the import moved, the call names the new key; the old version is under the old."""
    old = sym("lib.util", "get", [p("url"), p("verbose", "False")], version="1.0")
    new = sym("lib.net", "get", [p("url")])
    facts = Facts(
        side("lib 1.0", symbols={"lib.util:get": old}, reads={"lib.util:get": frozenset({"url"})}),
        side("lib 2.0", symbols={"lib.net:get": new}),
        moved_from={"lib.net:get": "lib.util:get"},
    )
    got = decide(kwarg("lib.net:get", "verbose"), facts)
    assert isinstance(got, Fix) and got.kind == "dropped-keyword"


# -- the registry ---------------------------------------------------------------------------
def test_rules_are_asked_in_order_and_the_rest_needs_a_person() -> None:
    assert [r.kind for r in RULES] == [
        "moved-import",
        "renamed-symbol",
        "renamed-keyword",
        "dropped-keyword",
        "shifted-argument",
    ]
    need = Finding(
        ERROR,
        "missing-required-arg",
        "app/uses.py",
        9,
        "Scheduler(cfg)",
        "lib.sched:Scheduler",
        "Scheduler() missing 1 required argument: 'block_size'",
        "Pass block_size",
        callee_file="lib/sched.py",
        callee_line=86,
        signature="Scheduler(cfg, block_size: int)",
    )
    got = decide(need, Facts(side("lib 1.0"), side("lib 2.0")))
    assert isinstance(got, Manual)
    assert "a new required argument" in got.reason
    assert (got.signature, got.location) == ("Scheduler(cfg, block_size: int)", "lib/sched.py:86")
    gone = decide(imp("lib.util", "parse"), moved([]))
    assert isinstance(gone, Manual) and "defined nowhere in lib 2.0 under that name" in gone.reason
