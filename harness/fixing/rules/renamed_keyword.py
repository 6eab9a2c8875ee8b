"""A keyword the callee renamed: ``f(old=v)`` -> ``f(new=v)``.

Certain when the diff's rename detection (:func:`harness.analysis.apidiff.compare_symbols`:
one removed and one added parameter at the same position, of the same kind) pairs them and the
default did not change; a changed default means the meaning may have changed: a person.
"""

from __future__ import annotations

from harness.analysis.apidiff import compare_symbols
from harness.analysis.findings import Finding
from harness.fixing.model import Decision, Facts, Fix, KeywordEdit, parameter
from harness.fixing.rules.base import Rule, manual, unexpected_keyword
from harness.fixing.shapes import same_default


def decide(f: Finding, facts: Facts) -> Decision | None:
    kw = unexpected_keyword(f)
    old, new = facts.old_symbol(f.symbol), facts.new.symbols.get(f.symbol)
    if kw is None or old is None or new is None:
        return None
    renamed = [
        c
        for c in compare_symbols(old.to_dict(), new.to_dict(), members=False)
        if c.kind == "parameter-renamed" and c.old == kw
    ]
    if not renamed or renamed[0].new is None:
        return None
    to = renamed[0].new
    was, now = parameter(old, kw), parameter(new, to)
    if was is None or now is None:
        return None
    if was.kind != now.kind or not same_default(was.default, now.default):
        return manual(
            f,
            f"'{kw}' became '{to}', but its default changed ({was.default} -> {now.default}): "
            "the meaning may have changed",
            new,
        )
    return Fix(
        f,
        RULE.kind,
        KeywordEdit(f.line, kw, to),
        f"{new.qualname}(): '{kw}' -> '{to}' (renamed in {facts.new.label}, "
        f"{new.file}:{new.line}; same position, kind and default)",
        new.dist,
        new.version,
        context=f"'{kw}' became '{to}' in {facts.new.label}",
    )


RULE = Rule("renamed-keyword", decide)
