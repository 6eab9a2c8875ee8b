"""What a caller's subclass inherits that changed where no signature did.

Relative to the baseline (the version the caller was written for): a method the callee base
class (its MRO) gained, which the subclass does not define -- it now runs the base's default
(vLLM 0.31's ``ExampleHiddenStatesConnector.get_finished_count`` returns 1); and a method the
subclass overrides that the base no longer has -- the callee no longer calls the override
(``prefer_cross_layer_blocks`` left vLLM's connector base in 0.29). Warnings: the code still
imports and binds; what it does changed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.analysis.findings import Category, Finding, Severity
from harness.analysis.rules.base import Produced, Rule
from harness.analysis.uses import Site

if TYPE_CHECKING:
    from harness.analysis.rules.base import Context, Earlier


def _public(name: str) -> bool:
    return not (name.startswith("__") and name.endswith("__"))


def check(ctx: Context, _: Earlier) -> Produced:
    out: list[Finding] = []
    for sub in ctx.scan.subclasses:
        own = {m.name: m for m in sub.methods}
        seen: set[str] = set()
        for base in sub.bases:
            got, old = ctx.callee(base.key), ctx.base_callee(base.key)
            if got is None or old is None or not old.mro_members:
                continue
            was, now = set(old.mro_members), set(got.mro_members)
            site = Site(sub.file, sub.line, sub.source, sub.scope)
            ver = f"{old.dist} {old.version}" if old.version else "the baseline"
            since = f"since {ver}"
            for name in sorted(now - was - set(own) - seen):
                head = got.heads.get(name)
                if head is None or not _public(name):
                    continue  # an attribute, not a method, or not one the subclass can see
                seen.add(name)
                out.append(
                    ctx.finding(
                        Severity.WARNING,
                        Category.BASE_METHOD_ADDED,
                        site,
                        f"{base.key}.{name}",
                        f"{base.qualname} gained {name}() {since} ({head.at}); {sub.name} "
                        f"does not define it, so it runs the default: {head.head}",
                        f"Check that {head.owner.rpartition('.')[2]}.{name}'s default fits "
                        f"{sub.name}, or define {sub.name}.{name}.",
                        got,
                    )
                )
            for name in sorted(set(got.heads) & set(old.heads) - set(own) - seen):
                head, was_head = got.heads[name], old.heads[name]
                if head.owner == was_head.owner or not _public(name):
                    continue
                seen.add(name)
                out.append(
                    ctx.finding(
                        Severity.WARNING,
                        Category.BASE_METHOD_ADDED,
                        site,
                        f"{base.key}.{name}",
                        f"{head.owner.rpartition('.')[2]} defines {name}() {since} "
                        f"({head.at}); {sub.name} does not, so it runs {head.head!r}, "
                        f"not {was_head.owner.rpartition('.')[2]}'s {was_head.head!r}",
                        f"Check that the new default fits {sub.name}, or define {sub.name}.{name}.",
                        got,
                    )
                )
            if got.mro_complete is False:
                continue  # a base we cannot read may still define it
            for name in sorted((set(own) & was) - now - seen):
                meth = own[name]
                if not _public(name):
                    continue
                seen.add(name)
                out.append(
                    ctx.finding(
                        Severity.WARNING,
                        Category.OVERRIDE_ORPHANED,
                        Site(sub.file, meth.line, sub.source, sub.scope),
                        f"{base.key}.{name}",
                        f"{sub.name}.{name} overrides a method {base.qualname} no longer has "
                        f"(it had it in {ver}): {got.dist} {got.version} never calls it",
                        f"Find what replaced {base.qualname}.{name} and move the override "
                        "there, or drop it.",
                        got,
                    )
                )
    return Produced(tuple(out))


RULE = Rule(
    "inherited",
    frozenset({Category.BASE_METHOD_ADDED, Category.OVERRIDE_ORPHANED}),
    check,
)
