"""Names missing on modules and on known classes and instances -- never on classes we cannot
fully see (open classes take any name; unreadable bases make it ``unverifiable``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.analysis.facts import Opaque
from harness.analysis.findings import Category, Finding, Severity
from harness.analysis.rules.reached import (
    REACHED,
    REMOVAL_ONLY,
    others_may_have,
    reached_finding,
    removed,
)
from harness.models import SymbolKind

if TYPE_CHECKING:
    from harness.analysis.rules.base import Context
    from harness.analysis.scan import Callee, Lookup
    from harness.analysis.uses import AttributeUse, Site


def attribute_findings(ctx: Context) -> list[Finding]:
    """Each ``x.name`` the caller reads on a module, class or instance that lacks it."""
    out: list[Finding] = []
    seen: set[tuple[str, int, str]] = set()
    for use in ctx.scan.attributes:
        mark = (use.file, use.line, use.attr)
        if mark in seen:
            continue
        seen.add(mark)
        if use.on == "module":
            key = f"{use.ref.module}:{use.attr}"
            entry = ctx.lookup(key)
            if not entry.found:
                out += missing(ctx, use, key, entry)
            continue
        key = use.ref.key
        cls = ctx.callee(key)
        if cls is None:
            continue
        if use.attr in cls.mro_members or use.attr.startswith("__"):
            continue
        if use.on != "class" and cls.constructor is not None and cls.constructor.raises:
            continue  # ``model: AutoModel``: no object is one; from_pretrained makes another
        if use.stored or (use.also and others_may_have(ctx, use)):
            continue  # the callee stores the name on objects; another callee base has it
        if use.on in REMOVAL_ONLY and not removed(ctx, use):
            continue  # the object may be more than the class: only a removal counts
        why = opaque_for(cls, on_class=use.on == "class")
        items = bool(why) and all(w.why == "items" for w in why) and called(ctx, use)
        if why and not items:
            out += opaque(ctx, use, f"{key}.{use.attr}", cls, use.on == "class")
            continue
        if use.on in REACHED:  # through the caller's own class: say which way
            out.append(reached_finding(ctx, use, cls))
            continue
        name = cls.qualname
        on = "object" if use.on in ("instance", "narrowed") else "class"
        note = f"; its __getattr__ serves only its items ({why[0].name})" if items else ""
        f = ctx.finding(
            Severity.ERROR,
            Category.MISSING_ATTRIBUTE,
            use,
            f"{key}.{use.attr}",
            f"'{name}' {on} has no attribute '{use.attr}' ({ctx.version_of(use.ref.module)})"
            + note,
            f"{name} and its bases define no '{use.attr}' any more; find its "
            "replacement with `harness diff`.",
            cls,
            attribute=use.attr,
        )
        out.append(f)
    return out


def missing(ctx: Context, use: Site, key: str, entry: Lookup) -> list[Finding]:
    """``module:qual`` is not there: an error, or unverifiable where it may be made at run
    time (a module ``__getattr__``, a class whose bases we cannot read)."""
    module, _, qual = key.partition(":")
    attr = qual.split(".")[-1]
    owner = ctx.callee(f"{module}:{qual.rpartition('.')[0]}") if "." in qual else None
    if owner is not None and qual.rpartition(".")[2] in owner.mro_members:
        return []  # a member we know from a published or stdlib base (BaseModel.model_validate)
    if owner is not None and owner.kind == SymbolKind.CLASS and opaque_for(owner, on_class=True):
        return opaque(ctx, use, key, owner, True)
    sugg = entry.suggestions
    hint = f" Did you mean {', '.join(sugg)}?" if sugg else ""
    if entry.dynamic:
        f = ctx.finding(
            Severity.WARNING,
            Category.UNVERIFIABLE,
            use,
            key,
            f"{key} is not defined statically in {ctx.version_of(module)}"
            + (f" ({entry.opaque})" if entry.opaque else ""),
            "Confirm with `harness probe --live`." + hint,
            attribute=attr,
        )
        return [f]
    f = ctx.finding(
        Severity.ERROR,
        Category.MISSING_ATTRIBUTE,
        use,
        key,
        f"{key} does not exist in {ctx.version_of(module)}",
        f"Find where {attr} went (`harness diff`) and use that." + hint,
        attribute=attr,
    )
    return [f]


def opaque(ctx: Context, use: Site, symbol: str, cls: Callee, on_class: bool) -> list[Finding]:
    """A name not found on a class whose attributes we cannot all see: never an error.

    Classes that make attributes at run time (``__getattr__``, ``setattr`` over kwargs)
    take any name: nothing to say. A base outside the import path (``torch.nn.Module``
    when torch is not on a pypi: target) may define it: say so, naming what is missing.
    """
    why = opaque_for(cls, on_class=on_class)
    if not why or any(w.why in ("getattr", "open", "items") for w in why):
        return []
    attr = symbol.rsplit(".", 1)[-1]
    bases = ", ".join(dict.fromkeys(w.name for w in why))
    gone = sorted({w.missing for w in why if w.missing})
    where = (
        f"{', '.join(gone)} {'is' if len(gone) == 1 else 'are'} not installed here"
        if gone
        else "it cannot be read statically"
    )
    f = ctx.finding(
        Severity.WARNING,
        Category.UNVERIFIABLE,
        use,
        symbol,
        f"'{cls.qualname}' and the bases we can read define no '{attr}'; it may come "
        f"from {bases} ({where})",
        "Install the missing dists on the target (for pypi:, add them to the spec) or "
        "confirm with `harness probe --live`.",
        cls,
        attribute=attr,
    )
    return [f]


def opaque_for(cls: Callee, *, on_class: bool) -> list[Opaque]:
    """Pure: why ``cls``'s member list may be incomplete for this kind of access. Attributes
    made on instances at run time (``setattr(self, ...)``, ``__getattr__``) do not appear on
    the class itself, so for ``Cls.name`` only unreadable bases count."""
    why = list(cls.mro_opaque)
    if not why and cls.mro_complete is False:
        why = [Opaque("base", "?", "")]  # an older payload
    return [w for w in why if w.why == "base"] if on_class else why


def called(ctx: Context, use: AttributeUse) -> bool:
    """Pure: is ``obj.name`` called where it is read (``obj.name(...)``)? A class whose
    ``__getattr__`` serves only its items (``self[name]``: a column, a label's value) lends
    data, not methods: a name it lacks that the caller calls is a method that is gone."""
    member = f"{use.ref.key}.{use.attr}"
    return any(
        c.file == use.file and c.line == use.line and c.ref.key == member for c in ctx.scan.calls
    )
