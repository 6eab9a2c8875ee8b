"""Imports that fail on the installed callee -- and the names a guarded one leaves unbound.

``from lib.x import f`` raises ImportError when ``f`` is gone (an error). Guarded by
``try/except ImportError`` it is info -- unless the handler binds nothing: then every use not
itself guarded is a NameError (``unbound-name``); a ``def`` fallback must fit the calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.analysis.bind import CallShape, bind
from harness.analysis.findings import ERROR, INFO, WARNING
from harness.analysis.uses import ref_key
from harness.models import Parameter

if TYPE_CHECKING:
    from harness.analysis.check import Checker

Json = dict[str, Any]


def run(ck: Checker) -> None:
    for use in ck.scan.get("imports") or []:
        if use.get("ok"):
            continue
        name = use.get("name")
        what = f"{use['module']}:{name}" if name else use["module"]
        where = ck._version(use["module"])
        sugg = use.get("suggestions") or []
        hint = f" Did you mean {', '.join(sugg)}?" if sugg else ""
        if name:
            ck.failed_imports.add((use["file"], f"{use['module']}:{name}"))
        if use.get("guarded"):
            ck._add(
                INFO,
                "import-guarded",
                use,
                what,
                f"{what} does not exist in {where}; the import is guarded, so the "
                "fallback branch runs",
                "Check the fallback still does what you need." + hint,
            )
            _unbound(ck, use, what, where)
            _fallback_shape(ck, use, what)
            continue
        if use.get("dynamic"):
            ck._add(
                WARNING,
                "unverifiable",
                use,
                what,
                f"{what} is not defined statically in {where} (the module has a __getattr__)",
                "Confirm with `harness probe --live`." + hint,
            )
            continue
        msg = (
            f"cannot import name '{name}' from '{use['module']}' ({where})"
            if name
            else f"no module named '{use['module']}' in {where}"
        )
        ck._add(
            ERROR,
            "import-missing",
            use,
            what,
            msg,
            f"Import it from where {where} defines it now, or drop the use." + hint,
        )


def _unbound(ck: Checker, use: Json, what: str, where: str) -> None:
    """Uses of a name the failed guarded import left unbound: NameError when reached."""
    for site in use.get("unbound_uses") or []:
        ck._add(
            ERROR,
            "unbound-name",
            site,
            what,
            f"name '{site['name']}' is not defined: `from {use['module']} import "
            f"{use['name']}` (line {use['line']}) fails on {where} and the except branch "
            "binds nothing",
            f"Bind a fallback in the except branch (e.g. {site['name']} = None) and guard "
            f"this use, or import {use['name']} from where {where} defines it now.",
        )


def _fallback_shape(ck: Checker, use: Json, what: str) -> None:
    """A ``def`` fallback must take the calls written for the callee's function."""
    fb = use.get("fallback") or {}
    if fb.get("kind") != "def":
        return
    params = tuple(Parameter.from_dict(p) for p in fb.get("parameters") or ())
    for call in ck.scan.get("calls") or []:
        if call["file"] != use["file"] or ref_key(call["ref"]) != what:
            continue
        shape = call["shape"]
        got = bind(
            CallShape(
                shape["positional"],
                tuple(shape["keywords"]),
                shape["star"],
                shape["double_star"],
            ),
            params,
        )
        for p in got:
            ck._add(
                WARNING,
                "import-guarded",
                call,
                what,
                f"the fallback {use['local']}() (line {fb.get('line')}) runs instead of "
                f"{what}, and this call does not fit it: {use['local']}() {p.detail}",
                "Give the fallback the parameters of the function it stands in for.",
            )
