"""Cheap per-layer statistics of every captured layer of every sample, judged against the
population (issue 41): what the values comparison cannot afford on every sample -- a forward
pass to the highest layer -- read from the files alone, while they load.

Per sample, per held layer j (``profile``; j in file order, 0 the lowest):

* **norm profile**: the median over rows of log ||x_t|| at layer j, less layer 0's -- how much
  the stream grows from the lowest captured layer, which the values compare on every sample;
* **layer order**: the share of rows whose norm grows from layer j-1 to j;
* **identity with the layer below**: the median over rows of cos(x_t at j, x_t at j-1) -- a
  token's stream keeps its direction layer to layer; another token's, sample's or model's does
  not.

Each statistic is judged per layer against the samples' population (``judge``): a sample
further from the median than ``Z`` (8) robust deviations (1.4826 x the median absolute
deviation), and than a minimum (``PROFILE_MIN`` 0.10 in log norm ~ 1.1x, ``ORDER_MIN`` 0.5,
``COS_MIN`` 0.10), fails under the ``layers`` count, with the numbers. What every sample shares
is not seen here: the values on the spread compare every layer with the reference.
Why 8: on the CPU Llama of tests/support/faultdata.py clean samples reach 5 deviations (norm
profiles of 8-token samples vary); 8 leaves room, and misses a lone layer scaled by 0.85 there.
"""

from __future__ import annotations

import math

from _hs_judge import Finding

Z = 8.0
PROFILE_MIN = 0.10
ORDER_MIN = 0.5
COS_MIN = 0.10


def profile(layers: list) -> list[tuple[float, float, float]]:  # type: ignore[type-arg]
    """(log-norm rise over layer 0, share of rows growing, median cosine with the layer below)
    per held layer ([n, hidden] each, in file order); layer 0's are (0, nan, nan)."""
    wide = [x.float() for x in layers]  # once each: a float copy is most of the cost
    norms = [x.norm(dim=-1).clamp_min(1e-12) for x in wide]
    if not norms or norms[0].numel() == 0:
        return []
    base = float(norms[0].log().median())
    out = [(0.0, math.nan, math.nan)]
    for j in range(1, len(layers)):
        cos = (wide[j - 1] * wide[j]).sum(-1) / (norms[j - 1] * norms[j])
        out.append((float(norms[j].log().median()) - base,
                    float((norms[j] > norms[j - 1]).float().mean()),
                    float(cos.median())))  # fmt: skip
    return out


def _centre(values: list[float]) -> tuple[float, float]:
    v = sorted(values)
    med = v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2
    dev = sorted(abs(x - med) for x in v)
    mad = dev[len(dev) // 2] if len(dev) % 2 else (dev[len(dev) // 2 - 1] + dev[len(dev) // 2]) / 2
    return med, 1.4826 * mad


def judge(stats: dict[str, list], ids: list[int]) -> dict[str, Finding]:  # type: ignore[type-arg]
    """``stats``: sample name -> its ``profile``; ``ids``: the layer ids in file order."""
    found: dict[str, Finding] = {}
    if len(stats) < 4:  # no population to speak of
        return found
    for j in range(1, len(ids)):
        have = {n: p[j] for n, p in stats.items() if len(p) > j}
        a, b = ids[j - 1], ids[j]
        for slot, floor, say in ((0, PROFILE_MIN, _norm_words), (1, ORDER_MIN, _order_words),
                                 (2, COS_MIN, _cos_words)):  # fmt: skip
            vals = {n: v[slot] for n, v in have.items() if v[slot] == v[slot]}
            if len(vals) < 4:
                continue
            med, dev = _centre(list(vals.values()))
            bound = max(floor, Z * dev)
            for name, v in vals.items():
                off = v - med if slot != 2 else med - v  # a cosine is suspect only when lower
                if name not in found and (abs(off) if slot != 2 else off) > bound:
                    found[name] = Finding("profile", say(a, b, ids[0], v, med, bound))
    return found


def _norm_words(a: int, b: int, low: int, v: float, med: float, bound: float) -> str:
    return (f"norm profile: layer {b}'s median row norm is {math.exp(v):.2f}x layer {low}'s "
            f"here, {math.exp(med):.2f}x in the population "
            f"(bound x/{math.exp(bound):.2f})")  # fmt: skip


def _order_words(a: int, b: int, low: int, v: float, med: float, bound: float) -> str:
    return (f"layer order: {v:.0%} of rows grow in norm from layer {a} to {b} here, {med:.0%} "
            f"in the population (bound +/-{bound:.0%})")  # fmt: skip


def _cos_words(a: int, b: int, low: int, v: float, med: float, bound: float) -> str:
    return (f"layer {b}'s rows are not layer {a}'s continued: median cosine {v:.2f} here, "
            f"{med:.2f} in the population (bound {med - bound:.2f})")  # fmt: skip
