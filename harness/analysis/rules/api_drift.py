"""API drift since the baseline, where the caller can notice it (``harness diff``'s changes)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.analysis.apidiff import Change, compare_symbols
from harness.analysis.findings import ERROR, WARNING
from harness.analysis.uses import ref_key

if TYPE_CHECKING:
    from harness.analysis.check import Checker

Json = dict[str, Any]


def run(ck: Checker) -> None:
    """Warn where the caller is hit by a used symbol's API moving since the baseline.

    A change counts only if some use could notice it: a parameter the caller passes (by
    name or position), a new required one, a changed return, or -- for classes the caller
    holds instances of -- a method added or removed (a new protocol step).
    """
    if ck.baseline is None:
        return
    uses: dict[str, list[Json]] = {}
    for kind in ("calls", "attributes"):
        for use in ck.scan.get(kind) or []:
            if use["ref"][0] != "module":
                uses.setdefault(ref_key(use["ref"]), []).append(use)
    erred = {f.symbol for f in ck.findings if f.severity == ERROR}
    firsts = sorted(uses.items(), key=lambda kv: (kv[1][0]["file"], kv[1][0]["line"]))
    for key, sites in firsts:
        new = ck._sym(key)
        old_entry = ck.baseline.get(key) or {}
        old = old_entry.get("symbol") if old_entry.get("found") else None
        if new is None or old is None:
            continue
        every = compare_symbols(old, new)
        positions = {p["name"]: i for i, p in enumerate(old_params(old))}
        # about the symbol (returns, methods, kind): once, at the first use; about the
        # parameters: at every call they touch (the one passing a renamed parameter...)
        whole = [
            c
            for c in relevant_changes(every, sites, positions)
            if not c.kind.startswith("parameter")
        ]
        first = min(sites, key=lambda u: (u["file"], u["line"]))
        for site in sorted(sites, key=lambda u: (u["file"], u["line"])):
            own = [
                c
                for c in relevant_changes(every, [site], positions)
                if c.kind.startswith("parameter") and key not in erred
            ]
            changes = (whole if site is first else []) + own
            if changes:
                _emit(ck, site, key, new, old, changes)


def _emit(ck: Checker, site: Json, key: str, new: Json, old: Json, changes: list[Change]) -> None:
    text = "; ".join(c.describe() for c in changes[:6])
    more = f" (+{len(changes) - 6} more)" if len(changes) > 6 else ""
    base_v = old.get("version") or "baseline"
    ck._add(
        WARNING,
        "drift",
        site,
        key,
        f"{new['qualname']} changed since {old.get('dist')} {base_v}: {text}{more}",
        "Read the new API before the run (`harness diff`); the caller was written "
        f"for {old.get('dist')} {base_v}.",
        new,
        tuple(c.to_dict() for c in changes),
    )


def relevant_changes(
    changes: list[Change], sites: list[Json], positions: dict[str, int] | None = None
) -> list[Change]:
    """Pure: keep the API changes that the caller's uses of a symbol can notice.

    ``positions`` (old parameter -> index, self/cls left out): a removed or re-kinded parameter
    matters to a call passing it by name or passing that many positionals; without them, any
    positional call might reach it.
    """
    calls = [u for u in sites if "shape" in u]
    passed = {k for u in calls for k in u["shape"]["keywords"]}
    max_pos = max((u["shape"]["positional"] for u in calls), default=0)
    spread = any(u["shape"]["star"] or u["shape"]["double_star"] for u in calls)
    on_instance = any(u.get("on") == "instance" for u in sites)
    keep: list[Change] = []
    for c in changes:
        if c.kind in ("parameter-added-required", "parameter-made-required"):
            if c.name not in passed:  # a caller that now passes it is already fixed
                keep.append(c)
        elif c.kind in ("parameter-removed", "parameter-kind-changed"):
            reach = max_pos > (positions or {}).get(c.name, -1) if positions else max_pos > 0
            if spread or c.name in passed or reach:
                keep.append(c)
        elif c.kind == "parameter-moved":
            if spread or int(c.old or 0) < max_pos:
                keep.append(c)
        elif (
            (c.kind == "returns-changed" and calls)
            or (c.kind in ("method-added", "method-removed") and on_instance)
            or c.kind in ("kind-changed", "symbol-removed")
        ):
            keep.append(c)
    return keep


def old_params(sym: Json) -> list[Json]:
    """Parameters as a call passes them (``self``/``cls`` of methods left out)."""
    params = list(sym.get("parameters") or [])
    if sym.get("kind") in ("method", "classmethod") and params:
        params = params[1:]
    return params
