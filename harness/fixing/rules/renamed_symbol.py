"""A class or function renamed in place: ``from m import Old`` -> ``from m import New``.

The name's defining module (in the version the caller was written for) lost ``Old`` and gained
exactly one new name of the same shape (same kind, same parameters with the same kinds and
defaults, for classes the same public methods with the same parameters), no other name that
left has that shape too, the shape has something in it (``f()`` proves nothing), and the names
are related (a shared word, or a fixed typo). Two candidates, a new name of another kind, or
unrelated names: a person decides. The uses of ``Old`` in the file are renamed too (see
:mod:`harness.fixing.cst`).
"""

from __future__ import annotations

from harness.analysis.findings import Finding
from harness.fixing.model import Decision, Facts, Fix, ImportEdit, own_parameters
from harness.fixing.rules.base import Rule, import_line, imported_name, manual
from harness.fixing.shapes import distinctive, related, same_shape


def decide(f: Finding, facts: Facts) -> Decision | None:
    got = imported_name(f)
    if got is None:
        return None
    module, name = got
    old = facts.old_symbol(f.symbol)
    if old is None:
        return None
    home = old.module
    before, after = facts.old.modules.get(home), facts.new.modules.get(home)
    if before is None or after is None or name in after.names:
        return None  # the module went (a person), or the name is still there (not a rename)
    added = {n: s for n, s in after.defs.items() if n not in before.names}
    shaped = sorted(n for n, s in added.items() if same_shape(old, s))
    if shaped and not distinctive(old):
        return manual(
            f,
            f"{name} left {home}; {', '.join(shaped)} there has its shape, but a shape without "
            "parameters or methods proves nothing",
            old,
        )
    if len(shaped) > 1:
        return manual(
            f,
            f"{name} left {home}, and {len(shaped)} new names there have its shape: "
            f"{', '.join(shaped)}; which one replaces it is a choice",
            old,
        )
    if not shaped:
        params = [(p.name, p.kind) for p in own_parameters(old)]
        other = sorted(
            n
            for n, s in added.items()
            if s.kind != old.kind and [(p.name, p.kind) for p in own_parameters(s)] == params
        )
        if other:
            s = added[other[0]]
            return manual(
                f,
                f"{name} (a {old.kind}) left {home}; {other[0]} there is new with its "
                f"parameters but is a {s.kind}: another kind is not a rename",
                s,
            )
        return None
    new_name = shaped[0]
    new = after.defs[new_name]
    twins = sorted(
        n
        for n, s in before.defs.items()
        if n != name and n not in after.names and same_shape(s, new)
    )
    if twins:
        return manual(
            f,
            f"{name} and {', '.join(twins)} left {home} with the same shape; which of them "
            f"{new_name} replaces is a choice",
            new,
        )
    if not related(name, new_name):
        return manual(
            f,
            f"{name} left {home} and {new_name} there has its shape, but the names are "
            "unrelated: a shape alone is no proof of a rename",
            new,
        )
    via = new_name in after.exported.get(module, frozenset())
    new_module = module if via else home
    return Fix(
        f,
        RULE.kind,
        ImportEdit(import_line(f), module, name, new_module, new_name),
        f"{name} -> {new_name} ({new_module}; {new.file}:{new.line} in {facts.new.label}: "
        f"the only new {new.kind} of {home} with {name}'s shape)",
        new.dist,
        new.version,
        (f"{new_module}:{new_name}", facts.old_key(f.symbol)),
        f"{name} became {new_name} in {facts.new.label}",
        symbol=new,
    )


RULE = Rule("renamed-symbol", decide)
