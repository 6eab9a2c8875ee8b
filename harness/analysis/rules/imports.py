"""Imports that fail on the installed callee -- and the names a guarded one leaves unbound.

``from lib.x import f`` raises ImportError when ``f`` is gone (an error). Guarded by
``try/except ImportError`` it is info -- unless the handler binds nothing: then every use not
itself guarded is a NameError (``unbound-name``); a ``def`` fallback must fit the calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.analysis.bind import bind
from harness.analysis.findings import Category, Severity

if TYPE_CHECKING:
    from harness.analysis.checker import Checker
    from harness.analysis.uses import ImportUse


def run(ck: Checker) -> None:
    for use in ck.scan.imports:
        if use.ok:
            if use.deprecated:  # served by a module __getattr__ that warns
                _deprecated(ck, use)
            continue
        name = use.name
        what = f"{use.module}:{name}" if name else use.module
        where = ck.version_of(use.module)
        hint = f" Did you mean {', '.join(use.suggestions)}?" if use.suggestions else ""
        if name:
            ck.failed_imports.add((use.file, f"{use.module}:{name}"))
        if use.guarded:
            ck.add(
                Severity.INFO,
                Category.IMPORT_GUARDED,
                use,
                what,
                f"{what} does not exist in {where}; the import is guarded, so the "
                "fallback branch runs",
                "Check the fallback still does what you need." + hint,
            )
            _unbound(ck, use, what, where)
            _fallback_shape(ck, use, what)
            continue
        if use.dynamic:
            ck.add(
                Severity.WARNING,
                Category.UNVERIFIABLE,
                use,
                what,
                f"{what} is not defined statically in {where} "
                f"({use.opaque or 'the module has a __getattr__'})",
                "Confirm with `harness probe --live`." + hint,
            )
            continue
        msg = (
            f"cannot import name '{name}' from '{use.module}' ({where})"
            if name
            else f"no module named '{use.module}' in {where}"
        )
        ck.add(
            Severity.ERROR,
            Category.IMPORT_MISSING,
            use,
            what,
            msg,
            f"Import it from where {where} defines it now, or drop the use." + hint,
        )


def _deprecated(ck: Checker, use: ImportUse) -> None:
    what = f"{use.module}:{use.name}"
    module, _, name = use.now.partition(":")
    ck.add(
        Severity.INFO,
        Category.DEPRECATED,
        use,
        what,
        f"{what} is served by {use.module}.__getattr__ with a deprecation warning "
        f"({use.deprecated}); it is {use.now} now",
        f"Import it from where it lives: from {module} import {name}"
        + (f" as {use.name}" if name != use.name else "")
        + ".",
    )


def _unbound(ck: Checker, use: ImportUse, what: str, where: str) -> None:
    """Uses of a name the failed guarded import left unbound: NameError when reached."""
    for site in use.unbound_uses:
        ck.add(
            Severity.ERROR,
            Category.UNBOUND_NAME,
            site,
            what,
            f"name '{site.name}' is not defined: `from {use.module} import "
            f"{use.name}` (line {use.line}) fails on {where} and the except branch "
            "binds nothing",
            f"Bind a fallback in the except branch (e.g. {site.name} = None) and guard "
            f"this use, or import {use.name} from where {where} defines it now.",
        )


def _fallback_shape(ck: Checker, use: ImportUse, what: str) -> None:
    """A ``def`` fallback must take the calls written for the callee's function."""
    fb = use.fallback
    if fb is None or fb.kind != "def":
        return
    for call in ck.scan.calls:
        if call.file != use.file or call.symbol != what:
            continue
        for p in bind(call.shape, fb.parameters):
            ck.add(
                Severity.WARNING,
                Category.IMPORT_GUARDED,
                call,
                what,
                f"the fallback {use.local}() (line {fb.line}) runs instead of "
                f"{what}, and this call does not fit it: {use.local}() {p.detail}",
                "Give the fallback the parameters of the function it stands in for.",
            )
