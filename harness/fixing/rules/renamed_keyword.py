"""A keyword the callee renamed: ``f(old=v)`` -> ``f(new=v)``.

Certain when the diff's rename detection (:func:`harness.analysis.apidiff.compare_symbols`:
one removed and one added parameter at the same position, of the same kind) pairs them and the
default did not change. Position is weak evidence on its own, so the names must be related
(``timeout`` -> ``timeout_s``) or both typed alike, the type must not change, and a name must
not flip polarity (``disable_x`` -> ``enable_x``); otherwise: a person.
"""

from __future__ import annotations

from harness.analysis.apidiff import ChangeKind, compare_symbols, normalize_annotation
from harness.analysis.findings import Finding
from harness.fixing.model import Decision, Facts, Fix, parameter
from harness.fixing.rules.base import Rule, keyword_edit, manual, unexpected_keyword
from harness.fixing.shapes import flipped, related, same_default
from harness.models import Parameter


def decide(f: Finding, facts: Facts) -> Decision | None:
    kw = unexpected_keyword(f)
    old, new = facts.old_symbol(f.symbol), facts.new.symbols.get(f.symbol)
    if kw is None or old is None or new is None:
        return None
    renamed = [
        c
        for c in compare_symbols(old, new, members=False)
        if c.kind == ChangeKind.PARAMETER_RENAMED and c.old == kw
    ]
    if not renamed or renamed[0].new is None:
        return None
    to = renamed[0].new
    was, now = parameter(old, kw), parameter(new, to)
    if was is None or now is None:
        return None
    why_not = _doubt(kw, to, was, now)
    if why_not is not None:
        return manual(f, f"'{kw}' seems to have become '{to}', but {why_not}", new)
    return Fix(
        f,
        RULE.kind,
        keyword_edit(f, kw, to),
        f"{new.qualname}(): '{kw}' -> '{to}' (renamed in {facts.new.label}, "
        f"{new.file}:{new.line}; same position, kind and default)",
        new.dist,
        new.version,
        context=f"'{kw}' became '{to}' in {facts.new.label}",
    )


def _doubt(kw: str, to: str, was: Parameter, now: Parameter) -> str | None:
    """Why the pairing by position is not proof enough, or None."""
    if was.kind != now.kind or not same_default(was.default, now.default):
        return f"its default changed ({was.default} -> {now.default}): the meaning may have too"
    if flipped(kw, to):
        return "the names say the meaning flipped"
    typed = was.annotation is not None and now.annotation is not None
    if typed and normalize_annotation(was.annotation) != normalize_annotation(now.annotation):
        return f"its type changed ({was.annotation} -> {now.annotation})"
    if not related(kw, to) and not typed:
        return "the names are unrelated and nothing else (a type) says they are one parameter"
    return None


RULE = Rule("renamed-keyword", decide)
