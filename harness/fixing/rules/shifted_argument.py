"""Positional arguments that slid into another parameter: name them, or drop the gone ones.

From the first argument that slid on, every positional is rewritten the way the version the
caller was written for bound it: ``f(q, k, cos, sin, position_ids)`` ->
``f(q, k, cos, sin)`` when ``position_ids`` is gone, ``scaled(x, 2.0)`` ->
``scaled(x, scale=2.0)`` when ``scale`` only moved. A gone parameter is dropped only under
the proof ``dropped-keyword`` asks for (the old version never read it, or the call passes its
old default); a parameter that is positional-only now, or a new ``**kwargs`` that would take
the name silently, leaves it to a person.
"""

from __future__ import annotations

from harness.analysis.findings import Category, Finding
from harness.fixing.model import ArgumentsEdit, Decision, Facts, Fix, own_parameters, parameter
from harness.fixing.rules.base import Rule, manual
from harness.models import KEYWORD_ONLY, POSITIONAL_OR_KEYWORD, VAR_KEYWORD


def decide(f: Finding, facts: Facts) -> Decision | None:
    if f.category != Category.ARGUMENT_SHIFTED or f.argument is None or not f.keywords:
        return None
    old, new = facts.old_symbol(f.symbol), facts.new.symbols.get(f.symbol)
    if old is None or new is None:
        return None
    takes_any = any(p.kind == VAR_KEYWORD for p in own_parameters(new))
    reads = facts.old_reads(f.symbol)
    names: list[str | None] = []
    only_if: list[str | None] = []
    said: list[str] = []
    for name in f.keywords:
        now, was = parameter(new, name), parameter(old, name)
        if now is not None and now.kind in (POSITIONAL_OR_KEYWORD, KEYWORD_ONLY):
            names.append(name)
            only_if.append(None)
            said.append("by name")
            continue
        if now is not None:
            return manual(f, f"'{name}' is {now.kind.value} in {facts.new.label} now", new)
        if takes_any:
            return manual(
                f,
                f"'{name}' is gone from {new.qualname} and its **kwargs would take it by "
                "name: where the value goes now is a decision",
                new,
            )
        if reads is not None and name not in reads:
            names.append(None)
            only_if.append(None)
            said.append(f"dropped ({facts.old.label} never read it)")
        elif was is not None and was.default is not None:
            names.append(None)
            only_if.append(was.default)
            said.append(f"dropped if it is {facts.old.label}'s default {was.default}")
        else:
            read = "read it" if reads is not None else "may read it"
            return manual(
                f,
                f"'{name}' was removed from {new.qualname}, and {facts.old.label}'s "
                f"{old.qualname} {read} ({old.file}:{old.line}): where its value goes now "
                "is a decision",
                new,
            )
    func = new.qualname.split(".")[-1]
    return Fix(
        f,
        RULE.kind,
        ArgumentsEdit(f.line, func, f.argument, tuple(names), tuple(only_if)),
        f"{new.qualname}(): from argument {f.argument + 1} on, "
        + "; ".join(f"{k}: {s}" for k, s in zip(f.keywords, said, strict=True))
        + f" (bound as {facts.old.label} bound it)",
        new.dist,
        new.version,
    )


RULE = Rule("shifted-argument", decide)
