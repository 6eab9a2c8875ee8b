"""The rows above the row bound on one output, counted per compared layer (issue 41): what the
pass rule's routing-flip bounds (``_hs_floor``: ``RUN_MAX``, ``FLIP_MAX``, ``FLIP_RATE``) are
calibrated from. ``hidden_states.py --census FILE`` writes it; the GPU bench
(bench/gpu/faults41.py) asks it of each model's real output and prints :func:`line`.

Per layer: rows compared, the floor and row bound, how many rows are above the bound, their runs
of adjacent rows by length, their sizes (max, p99; and the whole population's p99), how many are
*apart* (farther than the bound from both neighbours' reference rows: not a neighbour's row),
where they are (the first 20), and the first 20 runs row by row in order -- whether a run's
later rows stay below its first (the rule's "decaying") is read there.
"""

from __future__ import annotations

from _hs_floor import Floor, runs_of

SHOWN = 20


def _p99(values: list[float]) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def census(pop: dict, floors: list[Floor]) -> list[dict]:  # type: ignore[type-arg]
    """``pop``: layer -> sample name -> (own, near) row errors, as the rule judged them."""
    out = []
    by = {f.layer: f for f in floors}
    for k in sorted(pop):
        fl = by.get(k)
        if fl is None:
            continue
        hist: dict[int, int] = {}
        above: list[float] = []
        every: list[float] = []
        apart, decaying, longer = 0, 0, 0
        at: list[str] = []
        runs: list[dict] = []  # type: ignore[type-arg]
        for name, (own, near) in pop[k].items():
            every += own.tolist()
            for a, b in runs_of((own > fl.row_bound).tolist()):
                rows = [round(float(e), 4) for e in own[a : b + 1]]
                nears = [round(float(e), 4) for e in near[a : b + 1]]
                hist[len(rows)] = hist.get(len(rows), 0) + 1
                above += rows
                apart += sum(n > fl.row_bound for n in nears)
                if len(rows) > 1:
                    longer += 1
                    decaying += all(e <= rows[0] for e in rows[1:])
                at += [f"{name}:{t}" for t in range(a, b + 1)][: SHOWN - len(at)]
                if len(runs) < SHOWN:
                    runs.append({"sample": name, "first": a, "rows": rows, "near": nears})
        out.append({
            "layer": k, "rows": fl.rows, "samples": fl.samples, "floor": round(fl.floor, 5),
            "row_bound": round(fl.row_bound, 4), "above": len(above),
            "runs_by_length": {str(n): hist[n] for n in sorted(hist)},
            "longer_runs_decaying": decaying, "longer_runs": longer,
            "above_max": round(max(above, default=0.0), 4), "above_p99": round(_p99(above), 4),
            "row_p99": round(_p99(every), 5), "apart": apart, "at": at, "runs": runs,
        })  # fmt: skip
    return out


def line(layer: dict) -> str:  # type: ignore[type-arg]
    """One layer's census in words."""
    runs = ", ".join(f"{n}: {c}" for n, c in layer["runs_by_length"].items()) or "none"
    longer = (f"; {layer['longer_runs_decaying']} of {layer['longer_runs']} longer runs "
              "decaying" if layer["longer_runs"] else "")  # fmt: skip
    at = " ".join(layer["at"][:8]) + (" ..." if len(layer["at"]) > 8 else "")
    return (f"layer {layer['layer']}: {layer['rows']:,} rows of {layer['samples']} samples, floor "
            f"{layer['floor']:.4f} (row p99 {layer['row_p99']:.4f}), {layer['above']} above "
            f"{layer['row_bound']:.3f} in runs by length {{{runs}}}{longer}; max "
            f"{layer['above_max']:.3f} p99 {layer['above_p99']:.3f}; {layer['apart']} apart"
            + (f"; at {at}" if at else ""))  # fmt: skip
