"""A callee member the caller reaches through its own class, gone from the release installed.

Two ways the callsites probe's receiver-type inference (``probes/callsites/_receivers.py``)
reads a name on a callee object the source never spells as one: ``self.name`` (or
``super().name``) in a caller class deriving from a callee class, which the caller's own chain
does not define (``inherited``); and a name a caller wrapper's ``__getattr__`` hands to the callee
object it wraps (``forwarded``). The object may be more than its class at run time (a subclass
of the wrapped model, a mixin), so only a removal is a break: the baseline's class had the name
and the installed one has it nowhere in its bases. Called by the names rule, which alone says
``missing-attribute``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.analysis.findings import Category, Finding, Severity

if TYPE_CHECKING:
    from harness.analysis.rules.base import Context
    from harness.analysis.scan import Callee
    from harness.analysis.uses import AttributeUse

#: How a use reaches its object when only a removal since the baseline proves a break.
REMOVAL_ONLY = frozenset({"narrowed", "inherited", "forwarded"})
#: Of those, the ways through the caller's own class (this module's words).
REACHED = frozenset({"inherited", "forwarded"})


def removed(ctx: Context, use: AttributeUse) -> bool:
    """Pure: did the baseline's class have ``use.attr`` (in its bases included)? With no
    baseline of the callee read, a use the probe found closed (no subclass of the caller's
    class defines the name) stands on the installed class alone. A name the callee stores on
    objects it is handed is never gone."""
    if use.stored:
        return False
    was = ctx.base_callee(use.ref.key)
    if was is not None:
        others = (ctx.base_callee(f"{m}:{q}") for m, q in use.also)
        return any(use.attr in c.mro_members for c in (was, *others) if c is not None)
    return use.closed and not has_baseline(ctx, use.ref.module)


def others_may_have(ctx: Context, use: AttributeUse) -> bool:
    """Pure: may another callee base of the caller's class (``use.also``) give the object
    the name -- it has it, or its members cannot all be read?"""
    for module, qual in use.also:
        other = ctx.callee(f"{module}:{qual}")
        if other is None or use.attr in other.mro_members:
            return True
        if other.mro_opaque or other.mro_complete is False:
            return True
    return False


def has_baseline(ctx: Context, module: str) -> bool:
    """Pure: was a baseline of ``module``'s dist read (any of its symbols)?"""
    top = module.split(".")[0]
    return any(k.split(".")[0].split(":")[0] == top for k in ctx.baseline or ())


def reached_finding(ctx: Context, use: AttributeUse, cls: Callee) -> Finding:
    """The error for a removed member read through the caller's own class: what the caller
    read it through, the callee class and release, and where the baseline defined it."""
    key = use.ref.key
    name = cls.qualname
    now = ctx.version_of(use.ref.module)
    was = ctx.base_callee(key)
    member = ctx.base_callee(f"{key}.{use.attr}")
    base_v = f"{was.dist} {was.version}" if was is not None and was.version else "the baseline"
    where = f" at {member.file}:{member.symbol.line}" if member and member.file else ""
    at = f" ({cls.file}:{cls.symbol.line})" if cls.file else ""
    if use.on == "inherited" and was is None:  # closed: no baseline needed (``removed``)
        return ctx.finding(
            Severity.ERROR,
            Category.MISSING_ATTRIBUTE,
            use,
            f"{key}.{use.attr}",
            f"'{name}' object has no attribute '{use.attr}' ({now}): {use.via} reads it "
            f"through its base {name}{at}, which defines it nowhere in its bases, and no "
            f"subclass of {use.via} in the caller defines it",
            f"{name} no longer has '{use.attr}' in {now}; find its replacement with "
            "`harness diff` and use that.",
            cls,
            attribute=use.attr,
        )
    if use.on == "inherited":
        how = f"{use.via or 'the caller class'} inherits it from {name}"
    else:
        how = f"{use.via or 'the wrapper'} hands it to the wrapped {name}"
    return ctx.finding(
        Severity.ERROR,
        Category.MISSING_ATTRIBUTE,
        use,
        f"{key}.{use.attr}",
        f"'{name}' object has no attribute '{use.attr}' ({now}): {how}, which defined it in "
        f"{base_v}{where}",
        f"{name}{at} and its bases define no '{use.attr}' in {now}; find its replacement "
        "with `harness diff` and call that.",
        cls,
        attribute=use.attr,
    )
