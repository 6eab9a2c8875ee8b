"""A keyword the callee dropped: ``f(x, gone=v)`` -> ``f(x)``, only when that provably
changes nothing the caller relied on.

The diff must say ``gone`` was removed (not renamed), the new signature must take no
``**kwargs``, and one of two proofs must hold:

* the version the caller was written for never read ``gone`` in its body (the ``locate``
  probe's ``reads``) -- the value was dead there already;
* the call passes exactly the old default -- under the old API the call meant the same with
  and without it (checked on the very text the edit changes).

Otherwise where the value goes now is a design decision: a person.
"""

from __future__ import annotations

from harness.analysis.apidiff import ChangeKind, compare_symbols
from harness.analysis.findings import Finding
from harness.fixing.model import Decision, Facts, Fix, own_parameters, parameter
from harness.fixing.rules.base import Rule, keyword_edit, manual, unexpected_keyword
from harness.models import VAR_KEYWORD


def decide(f: Finding, facts: Facts) -> Decision | None:
    kw = unexpected_keyword(f)
    old, new = facts.old_symbol(f.symbol), facts.new.symbols.get(f.symbol)
    if kw is None or old is None or new is None:
        return None
    removed = any(
        c.kind == ChangeKind.PARAMETER_REMOVED and c.name == kw
        for c in compare_symbols(old, new, members=False)
    )
    was = parameter(old, kw)
    if not removed or was is None or any(p.kind == VAR_KEYWORD for p in own_parameters(new)):
        return None
    reads = facts.old_reads(f.symbol)
    where = f"{old.file}:{old.line}"
    if reads is not None and kw not in reads:
        return Fix(
            f,
            RULE.kind,
            keyword_edit(f, kw, None),
            f"{new.qualname}(): drop '{kw}' (removed in {facts.new.label}; "
            f"{facts.old.label} never read it, {where})",
            new.dist,
            new.version,
        )
    read = "read it" if reads is not None else "may read it"
    if was.default is not None:
        return Fix(
            f,
            RULE.kind,
            keyword_edit(f, kw, None, only_if=was.default),
            f"{new.qualname}(): drop '{kw}={was.default}' (removed in {facts.new.label}; "
            f"the call passes {facts.old.label}'s default, {where})",
            new.dist,
            new.version,
            context=f"'{kw}' is gone from {new.qualname} in {facts.new.label} and "
            f"{facts.old.label} {read} ({where})",
        )
    return manual(
        f,
        f"'{kw}' was removed from {new.qualname}, and {facts.old.label}'s {old.qualname} "
        f"{read} ({where}): where its value goes now is a decision",
        new,
    )


RULE = Rule("dropped-keyword", decide)
