"""What every fix rule is: a kind and a pure decision, plus the helpers they share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from harness.analysis.findings import Category, Finding
from harness.fixing.model import Decision, Facts, KeywordEdit, Manual, location_of, signature_of
from harness.models import Symbol


@dataclass(frozen=True)
class Rule:
    """``decide`` returns a Fix, a Manual (this rule's evidence says: not certain), or None
    (not this rule's kind of break: the next rule is asked)."""

    kind: str
    decide: Callable[[Finding, Facts], Decision | None]


#: The errors a failed ``from module import name`` makes: the import itself, or the uses of
#: a name a guarded one left unbound (their edit is at the import's line).
IMPORT_BREAKS = frozenset({Category.IMPORT_MISSING, Category.UNBOUND_NAME})


def import_line(f: Finding) -> int:
    """The line of the import statement an import break's edit changes."""
    return f.origin_line if f.origin_line is not None else f.line


def imported_name(f: Finding) -> tuple[str, str] | None:
    """(module, name) of a ``from module import name`` that fails -- unguarded, or guarded
    with a name used where nothing binds it (``unbound-name``) -- else None."""
    name = f.imported
    if f.category not in IMPORT_BREAKS or not name or "." in name:
        return None
    return f.symbol.partition(":")[0], name


def unexpected_keyword(f: Finding) -> str | None:
    """The keyword of an ``unexpected-kwarg`` finding (one per finding, as CPython says it)."""
    if f.category != Category.UNEXPECTED_KWARG or not f.keywords:
        return None
    return f.keywords[0]


def keyword_edit(
    f: Finding, keyword: str, new: str | None, only_if: str | None = None
) -> KeywordEdit:
    """The edit of a call's keyword -- where the call gets it from a dict spread with ``**``,
    of that dict's key, at the line that puts it there."""
    if f.origin_line is not None:
        return KeywordEdit(f.origin_line, keyword, new, only_if, in_dict=True)
    return KeywordEdit(f.line, keyword, new, only_if)


def manual(f: Finding, reason: str, sym: Symbol | None) -> Manual:
    return Manual(
        f,
        reason,
        signature_of(sym) if sym else f.signature,
        location_of(sym)
        if sym
        else (f"{f.callee_file}:{f.callee_line}" if f.callee_file else None),
    )
