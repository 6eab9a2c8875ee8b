"""Defaults the caller relies on: a call that omits a parameter whose default changed.

``CacheConfig(block_size=..., gpu_memory_utilization=...)`` gets ``enable_prefix_caching``'s
default -- ``None`` in vLLM 0.11, ``True`` since 0.16 -- without saying so. We warn at every
such call, old -> new, and add what ``__post_init__``/validators resolve the new default to when
they assign literals (the class's own, or a container's that receives the object as
``keyword=``, like ``VllmConfig(scheduler_config=SchedulerConfig(...))``).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from harness.analysis.apidiff import Change, ChangeKind
from harness.analysis.findings import Category, Finding, Severity
from harness.models import (
    POSITIONAL_ONLY,
    POSITIONAL_OR_KEYWORD,
    VAR_KEYWORD,
    VAR_POSITIONAL,
    SymbolKind,
)

if TYPE_CHECKING:
    from harness.analysis.facts import Resolution
    from harness.analysis.rules.base import Context
    from harness.analysis.uses import CallUse
    from harness.models import Parameter


def _same(a: str, b: str) -> bool:
    try:
        return ast.dump(ast.parse(a, mode="eval")) == ast.dump(ast.parse(b, mode="eval"))
    except SyntaxError:
        return a.replace(" ", "") == b.replace(" ", "")


def changed_defaults(
    site: CallUse, old: tuple[Parameter, ...], new: tuple[Parameter, ...]
) -> list[tuple[Parameter, Parameter]]:
    """Pure: (old, new) parameters this call leaves to a default that changed."""
    if site.double_star:
        return []  # the omitted ones may be in the dict
    positional = [p.name for p in new if p.kind in (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD)]
    given = set(site.keywords) | set(positional[: site.positional])
    before = {p.name: p for p in old}
    out = []
    for p in new:
        if p.name in given or p.kind in (VAR_POSITIONAL, VAR_KEYWORD) or p.default is None:
            continue
        if site.star and p.kind in (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD):
            continue
        q = before.get(p.name)
        if q is None or q.default is None or _same(q.default, p.default):
            continue
        out.append((q, p))
    return out


def _resolved(items: tuple[Resolution, ...], target: str, owner: str, file: str | None) -> str:
    hits = [r for r in items if r.target == target]
    if not hits:
        return ""
    values = " or ".join(dict.fromkeys(r.value for r in hits))
    lines = ", ".join(str(r.line) for r in hits[:4])
    return f", which {owner}.{hits[0].method} then sets to {values} ({file}:{lines})"


def defaults_drift(ctx: Context) -> list[Finding]:
    """Calls that leave a parameter to a default that changed since the baseline."""
    if ctx.baseline is None:
        return []
    out: list[Finding] = []
    for site in ctx.scan.calls:
        new, old = ctx.callee(site.symbol), ctx.base_callee(site.symbol)
        if new is None or old is None or new.kind != old.kind:
            continue
        if new.kind not in (
            SymbolKind.CLASS,
            SymbolKind.FUNCTION,
            SymbolKind.METHOD,
            SymbolKind.CLASSMETHOD,
            SymbolKind.STATICMETHOD,
        ):
            continue
        found = changed_defaults(
            site, old.parameters(bound=site.on_instance), new.parameters(bound=site.on_instance)
        )
        if not found:
            continue
        container = ctx.callee(site.passed_to.symbol) if site.passed_to else None
        parts = []
        for q, p in found:
            text = f"{p.name}: {q.default} -> {p.default}"
            text += _resolved(new.resolutions, p.name, new.qualname, new.file)
            if container is not None and site.passed_to is not None:
                text += _resolved(
                    container.resolutions,
                    f"{site.passed_to.keyword}.{p.name}",
                    container.qualname,
                    container.file,
                )
            parts.append(text)
        name = new.qualname
        old_v = f"{old.dist} {old.version}"
        f = ctx.finding(
            Severity.WARNING,
            Category.DRIFT,
            site,
            site.symbol,
            f"{name}() leaves {', '.join(p.name for _, p in found)} to defaults that changed "
            f"since {old_v} ({ctx.version_of(site.symbol.split(':')[0])}): {'; '.join(parts)}",
            f"Pass {', '.join(f'{p.name}={q.default}' for q, p in found)} to keep the "
            f"behaviour the caller was written for, or confirm the new default is wanted.",
            new,
            tuple(
                Change(ChangeKind.PARAMETER_DEFAULT_CHANGED, p.name, q.default, p.default, text=t)
                for (q, p), t in zip(found, parts, strict=True)
            ),
        )
        out.append(f)
    return out
