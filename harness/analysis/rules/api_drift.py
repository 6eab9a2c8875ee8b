"""API drift since the baseline, where the caller can notice it (``harness diff``'s changes)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from typing import TYPE_CHECKING

from harness.analysis.apidiff import Change, ChangeKind, compare_symbols, public_methods
from harness.analysis.findings import Category, Finding, Severity
from harness.analysis.uses import AttributeUse, CallUse, Site
from harness.models import SymbolKind, after_self

if TYPE_CHECKING:
    from harness.analysis.rules.base import Context
    from harness.analysis.scan import Callee
    from harness.models import Parameter


def api_drift(ctx: Context, erred: Set[str], said: Set[str] = frozenset()) -> list[Finding]:
    """Warn where the caller is hit by a used symbol's API moving since the baseline.

    A change counts only if some use could notice it: a parameter the caller passes (by
    name or position), a new required one, a changed return, or -- for classes the caller
    holds instances of -- a method added or removed (a new protocol step). Parameter changes
    are left out for a symbol in ``erred`` (an error already says how the call breaks), a
    return change for one in ``said`` (``return_kind`` says it at each use it changes).
    """
    if ctx.baseline is None:
        return []
    out: list[Finding] = []
    uses: dict[str, list[CallUse | AttributeUse]] = {}
    every_use: list[CallUse | AttributeUse] = [*ctx.scan.calls, *ctx.scan.attributes]
    for use in every_use:
        if use.ref.kind != "module":
            uses.setdefault(use.ref.key, []).append(use)
    firsts = sorted(uses.items(), key=lambda kv: (kv[1][0].file, kv[1][0].line))
    for key, sites in firsts:
        new = ctx.callee(key)
        old = ctx.base_callee(key)
        if new is None or old is None:
            continue
        every = compare_symbols(old.symbol, new.symbol)
        positions = {p.name: i for i, p in enumerate(old_params(old))}
        methods = _methods(old) | _methods(new)
        # about the symbol (returns, methods, kind): once, at the first use; about the
        # parameters: at every call they touch (the one passing a renamed parameter...)
        whole = [
            c
            for c in relevant_changes(every, sites, positions, methods)
            if not c.kind.about_parameter
            and not (c.kind == ChangeKind.RETURNS_CHANGED and key in said)
        ]
        first = min(sites, key=lambda u: (u.file, u.line))
        for site in sorted(sites, key=lambda u: (u.file, u.line)):
            own = [
                c
                for c in relevant_changes(every, [site], positions)
                if c.kind.about_parameter and key not in erred
            ]
            changes = (whole if site is first else []) + own
            if changes:
                out.append(_finding(ctx, site, key, new, old, changes))
    return out


def _finding(
    ctx: Context, site: Site, key: str, new: Callee, old: Callee, changes: list[Change]
) -> Finding:
    text = "; ".join(c.describe() for c in changes[:6])
    more = f" (+{len(changes) - 6} more)" if len(changes) > 6 else ""
    base_v = old.version or "baseline"
    return ctx.finding(
        Severity.WARNING,
        Category.DRIFT,
        site,
        key,
        f"{new.qualname} changed since {old.dist} {base_v}: {text}{more}",
        "Read the new API before the run (`harness diff`); the caller was written "
        f"for {old.dist} {base_v}.",
        new,
        tuple(changes),
    )


def relevant_changes(
    changes: Sequence[Change],
    sites: Sequence[Site],
    positions: Mapping[str, int] | None = None,
    methods: Set[str] | None = None,
) -> list[Change]:
    """Pure: keep the API changes that the caller's uses of a symbol can notice.

    ``positions`` (old parameter -> index, self/cls left out): a removed or re-kinded parameter
    matters to a call passing it by name or passing that many positionals; without them, any
    positional call might reach it. ``methods`` (the class's methods, properties left out): a
    method added or removed is a new protocol step only for an instance whose methods the
    caller calls (``self.scheduler.schedule()``), not one it only reads
    (``get_pp_group().is_first_rank``); without them, any use on an instance counts.
    """
    calls = [u for u in sites if isinstance(u, CallUse)]
    passed = {k for u in calls for k in u.keywords}
    max_pos = max((u.positional for u in calls), default=0)
    spread = any(u.star or u.double_star for u in calls)
    on_instance = any(
        isinstance(u, AttributeUse)
        and u.on == "instance"
        and (methods is None or u.attr in methods)
        for u in sites
    )
    keep: list[Change] = []
    for c in changes:
        if c.kind in (ChangeKind.PARAMETER_ADDED_REQUIRED, ChangeKind.PARAMETER_MADE_REQUIRED):
            # only a call of the symbol itself can miss it (not ``obj.method()`` on an
            # instance), and a caller that now passes it is already fixed
            if calls and c.name not in passed:
                keep.append(c)
        elif c.kind in (ChangeKind.PARAMETER_REMOVED, ChangeKind.PARAMETER_KIND_CHANGED):
            reach = max_pos > (positions or {}).get(c.name, -1) if positions else max_pos > 0
            if spread or c.name in passed or reach:
                keep.append(c)
        elif c.kind == ChangeKind.PARAMETER_MOVED:
            if spread or int(c.old or 0) < max_pos:
                keep.append(c)
        elif (
            (c.kind == ChangeKind.RETURNS_CHANGED and calls)
            or (c.kind in (ChangeKind.METHOD_ADDED, ChangeKind.METHOD_REMOVED) and on_instance)
            or c.kind == ChangeKind.KIND_CHANGED
        ):
            keep.append(c)
    return keep


def _methods(sym: Callee) -> set[str]:
    """The class's public methods by name (properties are read, not driven)."""
    return {n for n, m in public_methods(sym.symbol).items() if m.kind != SymbolKind.PROPERTY}


def old_params(sym: Callee) -> tuple[Parameter, ...]:
    """Parameters as a call passes them (``self``/``cls`` of methods left out)."""
    params = sym.symbol.parameters or ()
    if sym.kind in (SymbolKind.METHOD, SymbolKind.CLASSMETHOD):
        params = after_self(params)
    return params
