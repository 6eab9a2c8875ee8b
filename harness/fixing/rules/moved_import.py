"""A name that left its module: ``from OLD import name`` -> ``from NEW import name``.

Certain when the installed callee defines that name in exactly one other module, as the same
kind of thing, with a compatible signature (:func:`~harness.fixing.shapes.incompatibility`).
Two definitions, another kind, or an incompatible signature: a person chooses.
"""

from __future__ import annotations

from harness.analysis.findings import Finding
from harness.fixing.model import Decision, Facts, Fix, ImportEdit, location_of
from harness.fixing.rules.base import Rule, import_line, imported_name, manual
from harness.fixing.shapes import incompatibility


def decide(f: Finding, facts: Facts) -> Decision | None:
    got = imported_name(f)
    if got is None:
        return None
    module, name = got
    old = facts.old_symbol(f.symbol)
    if old is None:
        return None  # not in the version it was written for either: nothing to compare
    elsewhere = [s for s in facts.new.defined.get(name, ()) if s.module != module]
    if not elsewhere:
        return None  # gone from everywhere: maybe renamed (the next rule), else a person
    same_kind = [s for s in elsewhere if s.kind == old.kind]
    if not same_kind:
        other = elsewhere[0]
        return manual(
            f,
            f"{name} is a {other.kind} in {other.module} now (was a {old.kind} in "
            f"{old.module}, {location_of(old)}): another kind is not a move",
            other,
        )
    if len(same_kind) > 1:
        where = ", ".join(f"{s.module} ({s.file}:{s.line})" for s in same_kind)
        return manual(
            f,
            f"{name} is defined in {len(same_kind)} modules of {facts.new.label}: {where}; "
            "which one the caller means is a choice",
            old,
        )
    new = same_kind[0]
    why_not = incompatibility(old, new)
    if why_not is not None:
        return manual(f, f"{name} moved to {new.module}, but {why_not}", new)
    return Fix(
        f,
        RULE.kind,
        ImportEdit(import_line(f), module, name, new.module, name),
        f"{name}: {module} -> {new.module} (defined at {new.file}:{new.line} in "
        f"{facts.new.label}; the same {new.kind}, compatible signature)",
        new.dist,
        new.version,
        (f"{new.module}:{name}", facts.old_key(f.symbol)),
        f"{name} moved to {new.module}",
        symbol=new,
    )


RULE = Rule("moved-import", decide)
