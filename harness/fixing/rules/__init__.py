"""The fix kinds, asked in order; the first that answers decides. One module per kind.

An import that fails is a move before it is a rename (the same name elsewhere is stronger
evidence than a new name of the same shape); an unexpected keyword is a rename before it is
a drop. A finding no rule answers is left to a person (:func:`decide`).
"""

from __future__ import annotations

from harness.analysis.findings import Category, Finding
from harness.fixing.model import Decision, Facts
from harness.fixing.rules import (
    dropped_keyword,
    moved_import,
    renamed_keyword,
    renamed_symbol,
    shifted_argument,
)
from harness.fixing.rules.base import Rule, imported_name, manual
from harness.models import Symbol

RULES: tuple[Rule, ...] = (
    moved_import.RULE,
    renamed_symbol.RULE,
    renamed_keyword.RULE,
    dropped_keyword.RULE,
    shifted_argument.RULE,
)


def decide(f: Finding, facts: Facts, rules: tuple[Rule, ...] = RULES) -> Decision:
    """The first rule's answer, else "needs a person" with what the callee looks like now."""
    for rule in rules:
        got = rule.decide(f, facts)
        if got is not None:
            return got
    return manual(f, _why_manual(f, facts), _callee(f, facts))


def _callee(f: Finding, facts: Facts) -> Symbol | None:
    return facts.new.symbols.get(f.symbol) or (
        facts.old_symbol(f.symbol) if imported_name(f) else None
    )


def _why_manual(f: Finding, facts: Facts) -> str:
    if imported_name(f):
        old = facts.old_symbol(f.symbol)
        if old is None:
            return f"{f.symbol} is not in {facts.old.label} either: nothing to compare with"
        return (
            f"{f.symbol} ({old.kind} at {old.file}:{old.line} in {facts.old.label}) is "
            f"defined nowhere in {facts.new.label} under that name, and no new name of its "
            "shape replaced it: removed, or changed beyond a rename"
        )
    return _MANUAL_WHY.get(f.category, "no mechanical fix is known for this kind of break")


#: Why a person decides, for the categories no fix kind answered.
_MANUAL_WHY: dict[Category, str] = {
    Category.MISSING_REQUIRED_ARG: "a new required argument: its value is a decision",
    Category.UNEXPECTED_KWARG: "the keyword is gone and no rename or proof of a safe drop exists",
    Category.TOO_MANY_POSITIONAL: "the positional parameters changed",
    Category.POSITIONAL_ONLY_AS_KEYWORD: "a parameter became positional-only",
    Category.OVERRIDE_INCOMPATIBLE: "a protocol change: the override must follow the new base",
    Category.MISSING_ATTRIBUTE: "the attribute is gone: its replacement is a decision",
}
