"""``harness diff``: how a dist's API moved between two targets (two versions).

Both sides are read by probes on their own targets, concurrently; the comparison is pure
(``harness.analysis.apidiff``). With ``--used-by CALLER`` only what the caller touches is
compared, each change listed with the caller sites it hits.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from harness.analysis.apidiff import ChangeKind, Entry, EntryStatus, diff_apis, public_methods
from harness.analysis.rules.api_drift import relevant_changes
from harness.analysis.scan import Lookup, Scan, lookups_from
from harness.analysis.uses import AttributeUse, Site
from harness.errors import HarnessError, ProbeError, UsageError
from harness.models import Symbol, SymbolKind
from harness.probe_runner import run_probe
from harness.targets.base import Target


@dataclass(frozen=True)
class DiffReport:
    dist: str
    source: str  # the --from target's label
    dest: str  # the --to target's label
    old_version: str | None
    new_version: str | None
    entries: tuple[Entry, ...]
    used_by: str | None = None
    stats: dict[str, Any] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        out = {"added": 0, "removed": 0, "moved": 0, "changed": 0, "breaking": 0}
        for e in self.entries:
            out[e.status] += 1
            out["breaking"] += int(e.breaking)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "dist": self.dist,
            "from": self.source,
            "to": self.dest,
            "from_version": self.old_version,
            "to_version": self.new_version,
            "used_by": self.used_by,
            "counts": self.counts(),
            "entries": [e.to_dict() for e in self.entries],
            "stats": self.stats,
        }


def _both(fn: Any, a: Target, b: Target) -> tuple[Any, Any]:
    """Run the same probe on both targets at once (they are separate processes/links)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        fa, fb = pool.submit(fn, a), pool.submit(fn, b)
        return fa.result(), fb.result()


def diff(dist: str, old: Target, new: Target, *, used_by: str | None = None) -> DiffReport:
    start = time.perf_counter()
    if used_by:
        return _diff_used(dist, old, new, used_by, start)
    left, right = _both(lambda t: run_probe(t, "api", {"dist": dist}, cache=True).data, old, new)
    entries = diff_apis(_symbols(left["symbols"]), _symbols(right["symbols"]))
    return DiffReport(
        dist,
        old.label,
        new.label,
        left.get("version"),
        right.get("version"),
        tuple(entries),
        None,
        {
            "symbols_from": len(left["symbols"]),
            "symbols_to": len(right["symbols"]),
            "seconds": round(time.perf_counter() - start, 3),
        },
    )


def _symbols(raw: dict[str, Any]) -> dict[str, Symbol]:
    """The api probe's ``module:qualname`` -> symbol map, as models (the edge)."""
    return {k: Symbol.from_dict(v) for k, v in raw.items()}


def _scan_caller(caller: str, dist: str, targets: list[Target]) -> tuple[Target, Scan]:
    last: HarnessError | None = None
    for t in targets:
        try:
            env = run_probe(t, "callsites", {"caller": caller, "callees": [dist]}, cache=True)
            return t, Scan.from_dict(env.data)
        except ProbeError as exc:
            last = exc
    raise UsageError(
        f"{caller} is installed on neither side ({', '.join(t.label for t in targets)})",
        f"add it to a pypi: spec, e.g. --to pypi:{dist}==VER,{caller}==VER",
    ) from last


def _diff_used(dist: str, old: Target, new: Target, caller: str, start: float) -> DiffReport:
    scanned_on, scan = _scan_caller(caller, dist, [new, old])
    refs = sorted([k.split(":", 1)[0], k.split(":", 1)[1]] for k in scan.symbols)
    uses: dict[str, list[Site]] = {}
    every: list[Any] = [*scan.calls, *scan.attributes, *scan.imports]
    for u in every:
        ref = u.ref
        if ref is not None and ref.kind != "module":
            uses.setdefault(ref.key, []).append(u)

    def lookup(t: Target) -> dict[str, Lookup]:
        if t is scanned_on:
            return dict(scan.symbols)
        data: dict[str, Any] = run_probe(t, "callsites", {"refs": refs}, cache=True).data
        return lookups_from(data["symbols"])

    left, right = _both(lookup, old, new)

    def found(side: dict[str, Lookup]) -> dict[str, Symbol]:
        return {k: v.symbol.symbol for k, v in side.items() if v.symbol is not None}

    entries = []
    old_syms, new_syms = found(left), found(right)
    for e in diff_apis(old_syms, new_syms):
        if e.status == EntryStatus.ADDED:
            continue
        hits = uses.get(e.symbol, [])
        # a method added or removed matters where the caller drives an instance by calling
        # its methods (as `check` decides), or uses that very method -- not where it only
        # constructs the class
        driven = _methods(old_syms.get(e.symbol)) | _methods(new_syms.get(e.symbol))
        used = {u.attr for u in hits if isinstance(u, AttributeUse)}
        relevant = relevant_changes(list(e.changes), hits, methods=driven or None)
        changes = tuple(
            c
            for c in e.changes
            if c in relevant or (c.kind == ChangeKind.METHOD_REMOVED and c.name in used)
        )
        if e.status == EntryStatus.CHANGED and not changes:
            continue
        sites = _dedup([{"file": u.file, "line": u.line, "source": u.source} for u in hits])
        entries.append(Entry(e.symbol, e.status, changes, e.moved_to, tuple(sites)))
    versions = [
        next((v.symbol.version for v in side.values() if v.symbol is not None), None)
        for side in (left, right)
    ]
    return DiffReport(
        dist,
        old.label,
        new.label,
        versions[0],
        versions[1],
        tuple(entries),
        caller,
        {"refs": len(refs), "seconds": round(time.perf_counter() - start, 3)},
    )


def _methods(sym: Symbol | None) -> set[str]:
    """A class's public methods by name (properties are read, not driven)."""
    if sym is None or sym.kind != SymbolKind.CLASS:
        return set()
    return {n for n, m in public_methods(sym).items() if m.kind != SymbolKind.PROPERTY}


def _dedup(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[tuple[str, int]] = set()
    out = []
    for i in sorted(items, key=lambda d: (d["file"], d["line"])):
        if (i["file"], i["line"]) not in seen:
            seen.add((i["file"], i["line"]))
            out.append(i)
    return out
