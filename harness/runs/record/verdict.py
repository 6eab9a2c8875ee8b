"""An output check's verdict in words (pure): each check with its own count, the drift that
passed, what failed and why, what the check read that this run did not write.

``run``, ``runs``, ``logs``, ``--json`` and ``report`` say a verified run in these words
(:func:`describe`, through :func:`harness.runs.record.lifecycle.state_label`)."""

from __future__ import annotations

from typing import Any

from harness.runs.record.verification import (
    PLURAL,
    SHOWN,
    Count,
    Outcome,
    Verification,
    int_or_none,
)


def counts(v: Verification) -> str:
    """``48/48`` (passed) or ``24/48`` (the failures out of those checked); ``""`` unknown."""
    if v.checked is None:
        return ""
    done = v.checked - len(v.failed) if v.passed else len(v.failed)
    of = f"{v.checked}" + (f" of {v.total}" if v.total and v.total != v.checked else "")
    return f"{done}/{of}"


def summary(checks: tuple[Count, ...]) -> str:
    """Each check with its own count: ``values 256/256 at layer 2 (max rel. err. 0.0076);
    ids: not checked (no --prepared); lengths 256/256; layers 256/256``."""
    parts = []
    for c in checks:
        if c.skipped:
            parts.append(f"{c.name}: not checked ({c.skipped})")
            continue
        n = f"{c.passed:,}/{c.compared:,}"
        if c.chosen_by == "spread":
            head = (
                f"{c.name} compared on {c.compared:,} of {c.of:,} {PLURAL}, spread evenly "
                f"(first and last included): {n}"
            )
        else:
            head = f"{c.name} {n}" + (f" of {c.of:,}" if c.of != c.compared else "")
        if c.layers and c.every_layer_on:
            head += (
                f" at layer {c.layers[0]}, at layers {', '.join(map(str, c.layers))} on "
                f"{c.every_layer_on:,} of them spread evenly"
            )
        elif c.layers:
            head += f" at layer{'s' if len(c.layers) > 1 else ''} " + ", ".join(map(str, c.layers))
        if c.max_rel_err is not None and c.layers and c.compared:
            fp8 = f"; {c.fp8:,} stored as FP8, dequantized with their scales" if c.fp8 else ""
            head += f" (max rel. err. {c.max_rel_err:.4f}{fp8})"
        parts.append(head + (f"; rule: {c.rule}" if c.rule else ""))
    return "; ".join(parts)


def drift_words(drift: dict[str, Any] | None) -> str:
    """``drift above 0.05 on 3 samples, max 0.061 at layer 7, every row and layer
    identified``: samples that passed between the tolerance and the hard bound."""
    if not drift:
        return ""
    n = int_or_none(drift.get("samples")) or 0
    if "floor" in drift:  # the population rule: what every sample shares
        return (
            f"drift shared by every sample: median row error {drift['floor']} at layer "
            f"{drift.get('layer')} over {int_or_none(drift.get('rows')) or 0:,} rows of {n:,} "
            f"samples (above {drift.get('above')}), no row or sample outside it"
        )
    return (
        f"drift above {drift.get('above')} on {n:,} sample{'s' if n != 1 else ''}, "
        f"max {drift.get('max')} at layer {drift.get('layer')}, "
        f"{drift.get('identified') or 'every row'} identified"
    )


def _failures(v: Verification) -> str:
    """``3 samples wrong (data_5 position: row 17 is nearest reference row 18; …)``."""
    many = v.failed_count if v.failed_count is not None else len(v.failed)
    shown = [f"{f.sample} {f.check}: {f.why}" if f.check else f.sample for f in v.failures[:SHOWN]]
    more = "; …" if len(v.failures) > SHOWN else ""
    unit = v.unit[:-1] if many == 1 and v.unit.endswith("s") else v.unit
    return f"{many:,} {unit} wrong ({'; '.join(shown)}{more})"


def kept_words(v: Verification) -> str:
    """``64 of 64 files predate this run (kept from an earlier one)``: what the check read that
    the step did not write (a step that resumes skips what exists); empty when none."""
    if not v.kept or not v.kept[0]:
        return ""
    n, of = v.kept
    return (
        f"{n:,} of {of:,} file{'s' if of != 1 else ''} predate this run (kept from an earlier one)"
    )


def describe(v: Verification) -> str:
    """The verdict's words, with what the check read that this run did not write."""
    said = _describe(v)
    kept = kept_words(v)
    return f"{said}; {kept}" if kept and v.outcome in (Outcome.PASSED, Outcome.FAILED) else said


def _describe(v: Verification) -> str:
    """``verified: values 256/256 at layer 2 (...); ids 256/256; ...`` (a per-check report),
    ``verified 48/48`` (one count), ``failed verification: ...`` with what failed and why."""
    if v.outcome == Outcome.PASSED:
        if v.checks:
            drift = drift_words(v.drift)
            return f"verified: {summary(v.checks)}" + (f"; {drift}" if drift else "")
        shown = counts(v)
        return "verified" + (f" {shown}" if shown else "") + (f" ({v.detail})" if v.detail else "")
    if v.outcome == Outcome.FAILED:
        if v.checks:
            return f"failed verification: {_failures(v)}; {summary(v.checks)}"
        names = ", ".join(v.failed[:SHOWN]) + (", …" if len(v.failed) > SHOWN else "")
        what = f"{counts(v)} {v.unit} differ" if v.checked is not None else "output differs"
        return (
            f"failed verification: {what}"
            + (f" ({names})" if names else "")
            + (f"; {v.detail}" if v.detail else "")
        )
    if v.outcome == Outcome.EMPTY:
        if v.checks:
            return f"failed verification: the check compared nothing ({summary(v.checks)})"
        of = f" of {v.total:,}" if v.total else ""
        return f"failed verification: the check compared nothing (0{of} {v.unit})"
    if v.outcome == Outcome.REFUSED:
        return f"failed verification: {v.refused}"
    if v.outcome == Outcome.TIMED_OUT:
        return f"failed verification: the check timed out after {v.timeout or 0:.0f} s"
    if v.exit_code == 1 and v.signal is None and (v.checks or v.checked is not None):
        return "failed verification: the check exited 1 naming no failure; see the log"
    how = f"signal {v.signal}" if v.signal is not None else f"exit {v.exit_code}"
    return f"failed verification: the check crashed ({how}); see the log"
