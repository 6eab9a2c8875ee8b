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

from harness.analysis.apidiff import Entry, diff_apis
from harness.analysis.checker import relevant_changes
from harness.errors import HarnessError, ProbeError, UsageError
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
    entries = diff_apis(left["symbols"], right["symbols"])
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


def _scan_caller(caller: str, dist: str, targets: list[Target]) -> tuple[Target, dict[str, Any]]:
    last: HarnessError | None = None
    for t in targets:
        try:
            env = run_probe(t, "callsites", {"caller": caller, "callees": [dist]}, cache=True)
            return t, env.data
        except ProbeError as exc:
            last = exc
    raise UsageError(
        f"{caller} is installed on neither side ({', '.join(t.label for t in targets)})",
        f"add it to a pypi: spec, e.g. --to pypi:{dist}==VER,{caller}==VER",
    ) from last


def _diff_used(dist: str, old: Target, new: Target, caller: str, start: float) -> DiffReport:
    scanned_on, scan = _scan_caller(caller, dist, [new, old])
    refs = sorted([k.split(":", 1)[0], k.split(":", 1)[1]] for k in scan["symbols"])
    uses: dict[str, list[dict[str, Any]]] = {}
    for kind in ("calls", "attributes", "imports"):
        for u in scan.get(kind) or []:
            ref = u.get("ref")
            if ref and ref[0] != "module":
                uses.setdefault(f"{ref[1]}:{ref[2]}", []).append(u)

    def lookup(t: Target) -> dict[str, Any]:
        if t is scanned_on:
            return dict(scan["symbols"])
        data: dict[str, Any] = run_probe(t, "callsites", {"refs": refs}, cache=True).data
        return dict(data["symbols"])

    left, right = _both(lookup, old, new)

    def found(side: dict[str, Any]) -> dict[str, Any]:
        return {k: v["symbol"] for k, v in side.items() if v.get("found") and v.get("symbol")}

    entries = []
    for e in diff_apis(found(left), found(right)):
        if e.status == "added":
            continue
        hits = uses.get(e.symbol, [])
        constructed = any("shape" in u for u in hits)
        changes = tuple(
            c
            for c in e.changes
            if c in relevant_changes(list(e.changes), hits)
            or (c.kind in ("method-added", "method-removed") and constructed)
        )
        if e.status == "changed" and not changes:
            continue
        entries.append(
            Entry(
                e.symbol,
                e.status,
                changes,
                e.moved_to,
                tuple(
                    _dedup(
                        [
                            {"file": u["file"], "line": u["line"], "source": u.get("source", "")}
                            for u in hits
                        ]
                    )
                ),
            )
        )
    versions = [
        next(
            (
                v["symbol"].get("version")
                for v in side.values()
                if v.get("found") and v.get("symbol")
            ),
            None,
        )
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


def _dedup(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[tuple[str, int]] = set()
    out = []
    for i in sorted(items, key=lambda d: (d["file"], d["line"])):
        if (i["file"], i["line"]) not in seen:
            seen.add((i["file"], i["line"]))
            out.append(i)
    return out
