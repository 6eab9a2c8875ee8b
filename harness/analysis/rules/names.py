"""Names that are not there: the one rule saying ``missing-attribute`` and ``unverifiable``.

A name is looked up wherever the caller reaches for it -- an import the callee serves only at
run time, a call of a name the callee does not define, an attribute read on a module, class or
instance, an attribute a function installed on a known class reads -- and judged the same way:
an error where we see the whole owner, unverifiable where part of it is made at run time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.analysis.findings import Category, Finding, Severity
from harness.analysis.rules.attributes import attribute_findings, missing
from harness.analysis.rules.base import Produced, Rule
from harness.analysis.rules.imports import hint_for
from harness.analysis.rules.installs import exact

if TYPE_CHECKING:
    from harness.analysis.rules.base import Context, Earlier, FailedImports


def check(ctx: Context, earlier: Earlier) -> Produced:
    return Produced(
        (
            *dynamic_imports(ctx),
            *unknown_callees(ctx, earlier.failed_imports),
            *attribute_findings(ctx),
            *exact(ctx),
        )
    )


def dynamic_imports(ctx: Context) -> list[Finding]:
    """Unguarded imports of names a module ``__getattr__`` may serve: not provably missing."""
    out: list[Finding] = []
    for use in ctx.scan.imports:
        if use.ok or use.guarded or not use.dynamic:
            continue
        what = f"{use.module}:{use.name}" if use.name else use.module
        out.append(
            ctx.finding(
                Severity.WARNING,
                Category.UNVERIFIABLE,
                use,
                what,
                f"{what} is not defined statically in {ctx.version_of(use.module)} "
                f"({use.opaque or 'the module has a __getattr__'})",
                "Confirm with `harness probe --live`." + hint_for(use),
                imported=use.name,
            )
        )
    return out


def unknown_callees(ctx: Context, failed: FailedImports) -> list[Finding]:
    """Calls of a name the callee does not define -- unless a failed import already said so."""
    out: list[Finding] = []
    for use in ctx.scan.calls:
        key = use.symbol
        entry = ctx.lookup(key)
        if entry.symbol is not None or use.on_instance:
            continue  # bound by the calls rule; on an instance: reported as an attribute
        if failed.covers(use.file, key) or entry.found:
            continue  # the failed import says it; a module or stub-only name: nothing to bind
        out += missing(ctx, use, key, entry)
    return out


RULE = Rule(
    "names",
    frozenset({Category.MISSING_ATTRIBUTE, Category.UNVERIFIABLE}),
    check,
    after=("imports",),
)
