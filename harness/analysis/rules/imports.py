"""Imports that fail on the installed callee -- and the names a guarded one leaves unbound.

``from lib.x import f`` raises ImportError when ``f`` is gone (an error). Guarded by
``try/except ImportError`` it is info -- unless the handler binds nothing: then every use not
itself guarded is a NameError (``unbound-name``); a ``def`` fallback must fit the calls. An
import under a version test the release checked decides against it never runs: nothing to say.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.analysis.bind import bind
from harness.analysis.findings import Category, Finding, Severity
from harness.analysis.gates import dead_branch
from harness.analysis.rules.base import FailedImports, Produced, Rule

if TYPE_CHECKING:
    from harness.analysis.rules.base import Context, Earlier
    from harness.analysis.uses import ImportUse


def check(ctx: Context, _: Earlier) -> Produced:
    out: list[Finding] = []
    failed: set[tuple[str, str]] = set()
    seen: set[tuple[str, int, str]] = set()
    for use in ctx.scan.imports:
        if not use.ok and use.gates and dead_branch(use.gates, ctx.versions):
            if use.name:  # its uses are no one's business either: the branch never binds it
                failed.add((use.file, f"{use.module}:{use.name}"))
            continue  # under a version test that the release checked decides against it
        if use.ok:
            if use.deprecated:  # served by a module __getattr__ that warns
                out.append(_deprecated(ctx, use))
            continue
        name = use.name
        what = f"{use.module}:{name}" if name else use.module
        where = ctx.version_of(use.module)
        if name:
            failed.add((use.file, f"{use.module}:{name}"))
        if use.fallback_of is not None:
            out.append(_dead_fallback(ctx, use, what, where))
            continue
        if use.guarded:
            out.append(
                ctx.finding(
                    Severity.INFO,
                    Category.IMPORT_GUARDED,
                    use,
                    what,
                    f"{what} does not exist in {where}; the import is guarded, so the "
                    "fallback branch runs",
                    "Check the fallback still does what you need." + hint_for(use),
                    imported=name,
                )
            )
            out += _unbound(ctx, use, what, where, seen)
            out += _fallback_shape(ctx, use, what)
            continue
        if use.dynamic:
            continue  # not defined statically: the names rule says unverifiable
        msg = (
            f"cannot import name '{name}' from '{use.module}' ({where})"
            if name
            else f"no module named '{use.module}' in {where}"
        )
        if use.passed_over:
            msg += f" -- {use.passed_over}"
        was = ctx.base_callee(what) if name else None
        if was is not None:  # where the release the caller was written for defined it
            msg += f"; {was.dist} {was.version or '(baseline)'} defined it at {was.file}:"
            msg += str(was.symbol.line)
        fix = f"Import it from where {where} defines it now, or drop the use."
        if use.narrow_guard is not None:  # the module is there: ImportError, not its subclass
            msg += (
                f"; the `except ModuleNotFoundError` of line {use.narrow_guard} does not catch "
                "it: a name missing from a module that is there raises ImportError"
            )
            fix = f"Import it from where {where} defines it now, or catch ImportError there."
        out.append(
            ctx.finding(
                Severity.ERROR,
                Category.IMPORT_MISSING,
                use,
                what,
                msg,
                fix + hint_for(use),
                imported=name,
            )
        )
    return Produced(tuple(out), FailedImports(frozenset(failed)))


def hint_for(use: ImportUse) -> str:
    """The "Did you mean" tail of a failed import's fix (empty without suggestions)."""
    return f" Did you mean {', '.join(use.suggestions)}?" if use.suggestions else ""


def _dead_fallback(ctx: Context, use: ImportUse, what: str, where: str) -> Finding:
    """The ``except ImportError`` fallback of imports that all bind: it never runs."""
    return ctx.finding(
        Severity.INFO,
        Category.IMPORT_GUARDED,
        use,
        what,
        f"{what} does not exist in {where}, but the import is the except ImportError fallback "
        f"of line {use.fallback_of}, whose imports bind on {where}: it does not run",
        "Nothing to do while the first import binds.",
        imported=use.name,
    )


def _deprecated(ctx: Context, use: ImportUse) -> Finding:
    what = f"{use.module}:{use.name}"
    module, _, name = use.now.partition(":")
    return ctx.finding(
        Severity.INFO,
        Category.DEPRECATED,
        use,
        what,
        f"{what} is served by {use.module}.__getattr__ with a deprecation warning "
        f"({use.deprecated}); it is {use.now} now",
        f"Import it from where it lives: from {module} import {name}"
        + (f" as {use.name}" if name != use.name else "")
        + ".",
        imported=use.name,
    )


def _unbound(
    ctx: Context, use: ImportUse, what: str, where: str, seen: set[tuple[str, int, str]]
) -> list[Finding]:
    """Uses of the names the failed guarded import left unbound -- its own, and those the rest
    of the ``try`` body would have bound -- each a NameError when reached. A use is said once,
    by the first import that fails (a later one in the same ``try`` never ran)."""
    out: list[Finding] = []
    for site in use.unbound_uses:
        key = (site.file, site.line, site.name)
        if key in seen:
            continue
        seen.add(key)
        out.append(
            ctx.finding(
                Severity.ERROR,
                Category.UNBOUND_NAME,
                site,
                what,
                unbound_message(site.name, use, where, site.via),
                f"Bind a fallback in the except branch (e.g. {site.name} = None) and guard "
                f"this use, or import {use.name} from where {where} defines it now"
                + (f" (then line {site.via} binds it)." if site.via is not None else "."),
                imported=use.name,
                origin_line=use.line,
            )
        )
    return out


def unbound_message(name: str, use: ImportUse, where: str, via: int | None) -> str:
    """CPython's words for the NameError, and why: the import fails, and the line that would
    have bound the name (``via``, when it is a later one of the ``try``) never runs."""
    failed = f"`from {use.module} import {use.name}` (line {use.line}) fails on {where}"
    if via is None:
        return f"name '{name}' is not defined: {failed} and the except branch binds nothing"
    skipped = "the same statement" if via == use.line else f"line {via}"
    return (
        f"name '{name}' is not defined: {failed} before {skipped} binds it, and the except "
        "branch binds nothing"
    )


def _fallback_shape(ctx: Context, use: ImportUse, what: str) -> list[Finding]:
    """A ``def`` fallback must take the calls written for the callee's function."""
    fb = use.fallback
    if fb is None or fb.kind != "def":
        return []
    out: list[Finding] = []
    for call in ctx.scan.calls:
        if call.file != use.file or call.symbol != what:
            continue
        for p in bind(call.shape, fb.parameters):
            out.append(
                ctx.finding(
                    Severity.WARNING,
                    Category.IMPORT_GUARDED,
                    call,
                    what,
                    f"the fallback {use.local}() (line {fb.line}) runs instead of "
                    f"{what}, and this call does not fit it: {use.local}() {p.detail}",
                    "Give the fallback the parameters of the function it stands in for.",
                    imported=use.name,
                )
            )
    return out


RULE = Rule(
    "imports",
    frozenset(
        {
            Category.IMPORT_MISSING,
            Category.IMPORT_GUARDED,
            Category.UNBOUND_NAME,
            Category.DEPRECATED,
        }
    ),
    check,
)
