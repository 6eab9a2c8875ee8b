"""Literals that changed in the callee code a caller's subclass inherits or overrides.

Relative to the baseline: the subclassed class's own methods (the base's version of an
override, the methods that drive it), the module functions they call and the module constants
they read -- strings, numbers, constant subscripts. vLLM 0.29's example hidden-states
connector kept every signature and changed its layout (``'NHD' -> 'LBNHC'``,
``kv_cache.shape[1] -> kv_cache.shape[2]``), under hs-connectors' FP8 subclass. A warning: what
the code means may have moved; nothing raises.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.analysis.findings import Category, Finding, Severity
from harness.analysis.literals import changed
from harness.analysis.rules.base import Produced, Rule
from harness.analysis.uses import Site

if TYPE_CHECKING:
    from harness.analysis.rules.base import Context, Earlier


def check(ctx: Context, _: Earlier) -> Produced:
    out: list[Finding] = []
    said: set[tuple[str, str]] = set()  # one finding per changed function, whoever subclasses
    for sub in ctx.scan.subclasses:
        for base in sub.bases:
            got, old = ctx.callee(base.key), ctx.base_callee(base.key)
            if got is None or old is None or got.literals is None or old.literals is None:
                continue
            ver = f"{old.dist} {old.version}" if old.version else "the baseline"
            for c in changed(old.literals, got.literals):
                if (base.key, c.name) in said:
                    continue
                said.add((base.key, c.name))
                out.append(
                    ctx.finding(
                        Severity.WARNING,
                        Category.LITERAL_CHANGED,
                        Site(sub.file, sub.line, sub.source, sub.scope),
                        f"{base.module}:{c.name}",
                        f"{c.name} ({c.at}), which {sub.name} inherits from or drives through "
                        f"{base.qualname}, changed its literals since {ver}: "
                        + "; ".join(c.changes),
                        f"Check that {sub.name} still fits what {c.name} now assumes.",
                        got,
                    )
                )
    return Produced(tuple(out))


RULE = Rule("literals", frozenset({Category.LITERAL_CHANGED}), check)
