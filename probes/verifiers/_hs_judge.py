"""Pure decisions of the extraction check (``hidden_states.py``): which samples, and whether
one sample's captured states are right -- on tensors already in memory, no I/O.

Per sample and compared layer, in this order, each with its own words (``Finding``):

1. ``non-finite``: "NaN/inf at row r"
2. ``zeros``: "row r is all zeros (k rows)"
3. ``position``: rows are misplaced when a run of ``RUN`` (3) consecutive rows each *are*
   their neighbour's reference row in one direction -- less than half as far from it as from
   their own, and not within ``tol`` of their own: a shift (an off-by-one, a cached prefix
   misaligned) moves every row after it. A lone row is never named: on the H200's 24-layer
   DeepSeek-V3 shape, row 225 of hs_4 at layer 2 (an MoE token whose experts flipped under
   bf16: 0.257 from its own row, 0.154 from row 224, every other row 0.006 from its own) was
   named by the rule before (nearer a neighbour within ``hard``), and a rule for lone rows at
   the noise level named one row in 19 of 64 samples at layers 12-24, where neighbouring rows
   are alike within the noise. Both are the error bound's. A whole sample shifted where rows
   are that alike (0.21 apart at layer 2: under ``hard``, which the rule before needed) is named
4. ``layer``: with the reference states of the neighbouring layer ids at hand, a captured
   layer that matches another reference layer (within ``hard``) better than its own is
   named; one within ``tol`` of its own is right whatever its neighbours are
5. an absolute ceiling: a relative Frobenius error above ``hard`` fails (``values``). What
   passes here is judged afterwards against the output's own population of row errors
   (``_hs_floor.py``: the noise floor measured per layer; "drift" only for what all share)

Why both a bound and identities: bf16 noise grows with depth (0.028-0.048 measured at 8-24
layers against 0.05), and a false "failed" on a day-long run costs as much as a missed
fault; a misaligned sample is off by ~1.0 and nearest to *another* row or layer, which the
identity tests name whatever the noise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

TOLERANCE = 0.05
HARD = 0.25
#: consecutive rows a position finding needs: a shift moves every row after it
RUN = 3
#: the four counts of a report; a finding's ``check`` is counted under one of them
COUNTS = ("values", "ids", "lengths", "layers")
COUNTED_UNDER = {"non-finite": "values", "zeros": "values", "position": "values",
                 "layer": "values", "values": "values", "ids": "ids", "lengths": "lengths",
                 "layers": "layers", "profile": "layers"}  # fmt: skip


@dataclass(frozen=True)
class Finding:
    """One sample's verdict on one check: ``check`` (a key of COUNTED_UNDER) and ``why``."""

    check: str
    why: str


@dataclass(frozen=True)
class LayerVerdict:
    """``err``: relative Frobenius error (None when not reached); ``finding``: a failure;
    ``drift``: unused since the population rule (``_hs_floor.py``) says what drift is."""

    err: float | None
    finding: Finding | None = None
    drift: bool = False
    layer_checked: bool = False
    rows: tuple | None = None  # type: ignore[type-arg]  # (own, near) per row, on the CPU


def spread(total: int, want: int) -> list[int]:
    """``want`` indices over ``0..total-1``, evenly, first and last included (0: all)."""
    if want <= 0 or want >= total:
        return list(range(total))
    if want == 1:
        return [0]
    return sorted({round(i * (total - 1) / (want - 1)) for i in range(want)})


def plan_batches(lengths: list[int], budget: int) -> list[list[int]]:
    """Positions of ``lengths`` grouped into forward batches of padded size (count x longest)
    at most ``budget`` tokens, similar lengths together (longest first); 0: one per batch."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    out: list[list[int]] = []
    for i in order:
        cur = out[-1] if out else None
        if cur and budget > 0 and (len(cur) + 1) * lengths[cur[0]] <= budget:
            cur.append(i)
        else:
            out.append([i])
    return out


def layers_held(held: int, configured: list[int]) -> Finding | None:
    """The file holds one state per distinct configured layer id."""
    want = sorted(set(configured))
    if held == len(want):
        return None
    return Finding("layers", f"holds {held} layers, configured {len(want)} ({want})")


def duplicated(pair: tuple[int, int] | None, ids: list[int]) -> Finding | None:
    """``pair``: positions (earlier, later) of two bit-identical captured layers."""
    if pair is None:
        return None
    a, b = pair
    return Finding("layers", f"layer {ids[b]}'s states equal layer {ids[a]}'s (duplicated)")


def rows_match(n_ids: int, rows: list[int]) -> Finding | None:
    """Each captured layer has one row per input id."""
    if sorted(set(rows)) == [n_ids]:
        return None
    shown = rows[0] if len(set(rows)) == 1 else sorted(set(rows))
    return Finding("lengths", f"{shown} rows of states for {n_ids} ids")


def ids_match(got: list[int], want: list[int] | None, index: int) -> Finding | None:
    """The file's token ids are the prepared dataset's sample ``index``."""
    if want is None:
        return Finding("ids", f"no prepared sample {index}")
    if got == want:
        return None
    pairs = enumerate(zip(got, want, strict=False))
    first = next((t for t, (a, b) in pairs if a != b), min(len(got), len(want)))
    return Finding("ids", f"ids differ from prepared sample {index}'s from position {first} "
                          f"({len(got)} ids here, {len(want)} there)")  # fmt: skip


def row_dists(x: Any, r: Any) -> tuple[Any, Any, Any, float]:
    """Per row of float states ``x`` against reference ``r``: the relative error to its own
    reference row, to the one before (``prev``, inf at row 0) and after (``nxt``), and the
    sample's relative Frobenius error -- each difference computed once, for every test."""
    rn = r.norm(dim=-1)
    scale = rn.clamp_min(1e-12)
    diff = (x - r).norm(dim=-1)
    own = diff / scale
    prev, nxt = own.new_full(own.shape, float("inf")), own.new_full(own.shape, float("inf"))
    if x.shape[0] > 1:
        prev[1:] = (x[1:] - r[:-1]).norm(dim=-1) / scale[:-1]
        nxt[:-1] = (x[:-1] - r[1:]).norm(dim=-1) / scale[1:]
    err = float(diff.square().sum().sqrt() / rn.square().sum().sqrt().clamp_min(1e-12))
    return own, prev, nxt, err


def rel_err(x: Any, r: Any) -> float:
    x, r = x.float(), r.float()
    return float((x - r).norm() / r.norm().clamp_min(1e-12))


def non_finite(x) -> Finding | None:  # type: ignore[no-untyped-def]
    bad = (~x.isfinite()).any(dim=-1).nonzero()
    return Finding("non-finite", f"NaN/inf at row {int(bad[0])}") if len(bad) else None


def zeros(x) -> Finding | None:  # type: ignore[no-untyped-def]
    bad = (x == 0).all(dim=-1).nonzero()
    if not len(bad):
        return None
    many = f"{len(bad)} rows" if len(bad) > 1 else "the only one"
    return Finding("zeros", f"row {int(bad[0])} is all zeros ({many})")


def position(x, r, tol: float = TOLERANCE, run: int = RUN) -> Finding | None:  # type: ignore[no-untyped-def]
    """The first row of the first run of ``run`` consecutive rows that each are their
    neighbour's reference row in one direction (t-1, or t+1): less than half as far from it as
    from their own, and not within ``tol`` of their own. A lone row is never named."""
    if x.shape[0] < 2:
        return None
    own, prev, nxt, _ = row_dists(x.float(), r.float())
    return _position(own, prev, nxt, tol, run)


def _position(own, prev, nxt, tol: float, run: int) -> Finding | None:  # type: ignore[no-untyped-def]
    n = own.shape[0]
    if n < 2:
        return None
    need = min(run, n - 1)
    off = own > tol
    for near, step in ((prev * 2 < own) & off, -1), ((nxt * 2 < own) & off, 1):
        flags = near.tolist()
        count = 0
        for t, hit in enumerate(flags):
            count = count + 1 if hit else 0
            if count >= need:
                first = t - count + 1
                return Finding("position", f"row {first} is nearest reference row {first + step}")
    return None


def layer_identity(  # type: ignore[no-untyped-def]
    x,
    k: int,
    refs: dict[int, Any],
    tol: float = TOLERANCE,
    hard: float = HARD,
    own: float | None = None,
) -> Finding | None:
    """``refs``: layer id -> reference states at hand (``k`` and some others: at least one of
    ``k-1``, ``k+1`` for the test to mean anything). Named only when the states match another
    layer (within ``hard``) better than their own: states far from every layer (another
    sample's) are the error bound's. ``own``: the error to layer ``k``, when known."""
    own = rel_err(x, refs[k]) if own is None else own
    if own <= tol:
        return None
    errs = {j: rel_err(x, r) for j, r in refs.items() if j != k}
    near = min(errs, key=lambda j: errs[j], default=None)
    if near is None or errs[near] >= own or errs[near] > hard:
        return None  # nearer no layer, or far from every one: the error bound's
    return Finding("layer", f"layer {k}'s states are nearest reference layer {near}")


def judge_layer(
    x: Any, k: int, refs: dict[int, Any], tol: float = TOLERANCE, hard: float = HARD
) -> LayerVerdict:
    """One sample's captured layer ``k`` (``x``, [n, hidden]) against ``refs[k]``; the
    verdict carries the per-row errors (own, nearer neighbour's) for the population's rule."""
    for test in (non_finite, zeros):
        found = test(x)
        if found is not None:
            return LayerVerdict(None, found)
    x = x.float()
    own, prev, nxt, err = row_dists(x, refs[k].float())
    rows = (own.cpu(), prev.minimum(nxt).cpu())
    found = _position(own, prev, nxt, tol, RUN)
    if found is not None:
        return LayerVerdict(err, found, rows=rows)
    checked = any(j in refs for j in (k - 1, k + 1))
    found = layer_identity(x, k, refs, tol, hard, own=err)
    if found is not None:
        return LayerVerdict(err, found, layer_checked=checked, rows=rows)
    if err > hard:
        why = f"relative error {err:.3f} at layer {k} (hard bound {hard})"
        return LayerVerdict(err, Finding("values", why), layer_checked=checked, rows=rows)
    return LayerVerdict(err, None, layer_checked=checked, rows=rows)
