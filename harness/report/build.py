"""Gather the review from the target: facts, patch series, check results, the step. I/O edge."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.report.model import Review, judge
from harness.targets.base import Target


def _stale(target: Target) -> list[dict[str, Any]]:
    """Processes holding /dev/nvidia* that ``harness run`` would refuse to start next to."""
    from harness.runs.commands import stale_gpu_holders

    try:
        return stale_gpu_holders(target)
    except HarnessError:
        return []  # a report still says what it can; the run's preflight will insist


def _step(
    target: Target, step: str | None, pipeline: Path | None, overrides: dict[str, str]
) -> dict[str, Any] | None:
    if step is None:
        return None
    from harness.runs.describe import describe_step

    try:
        return describe_step(target, step, pipeline, overrides)
    except HarnessError as exc:
        return {"name": step, "error": exc.message}


def _smoke_tested(
    target: Target, step: dict[str, Any], now: dict[str, Any], required: bool
) -> dict[str, Any]:
    """The step's newest green smoke run on this target, and what changed since."""
    from harness.runs import remote
    from harness.runs import smoke as smoke_mode

    try:
        runs = remote.list_runs(target, step.get("workdir")).runs
    except HarnessError:
        runs = ()
    green = [
        r
        for r in runs
        if r.record.step == step["name"] and r.record.smoke and r.state == "succeeded"
    ]
    out: dict[str, Any] = {"required": required, "last": None, "changes": []}
    if green:
        last = max(green, key=lambda r: r.record.created_at or 0.0)
        then = (last.record.smoke or {}).get("fingerprint") or {}
        out["last"] = {"id": last.id, "created_at": last.record.created_at}
        out["changes"] = smoke_mode.changes(then, smoke_mode.fingerprint(now))
    return out


def build_review(
    target: Target,
    patches: Path,
    *,
    callers: list[str] | None = None,
    step: str | None = None,
    pipeline: Path | None = None,
    overrides: dict[str, str] | None = None,
    stale: bool = True,
    require_smoke: bool = False,
    check_smoke: bool = True,
) -> Review:
    """The review; ``stale=False`` leaves GPU holders to ``harness run``'s own preflight.

    A step with a smoke mode also says whether its last green smoke run still vouches for
    the environment (``require_smoke``: a blocker when it does not)."""
    from packaging.utils import canonicalize_name

    from harness.patching.ops import _required_dists, status
    from harness.patching.series import dists_with_series
    from harness.reading.check import check
    from harness.reading.probe import gather_facts

    step_info = _step(target, step, pipeline, overrides or {})
    # a step that declares the callers it exercises is reviewed for those alone (none: facts
    # and GPU holders only); without a step, or undeclared, every dist with a series is
    declared = None if step_info is None else step_info.get("checks")
    series_dists = dists_with_series(patches)
    if declared is not None:
        wanted_callers = {str(canonicalize_name(c)) for c in declared}
        series_dists = [d for d in series_dists if str(canonicalize_name(d)) in wanted_callers]
    # one facts probe answers for the report and for the series' `requires` alike
    wanted = series_dists + _required_dists(patches, series_dists)
    facts = gather_facts(target, wanted).to_dict()
    holders = _stale(target) if stale else []
    known: dict[str, str | None] = {
        str(canonicalize_name(k)): v for k, v in (facts.get("dists") or {}).items()
    }
    dist_reports = status(target, patches, installed=known) if series_dists else []
    patch_reports = [r.to_dict() for r in dist_reports]
    installed = facts.get("dists") or {}
    names = callers or (
        list(declared)
        if declared is not None
        else [
            d
            for d in series_dists
            if installed.get(d) or any(r["dist"] == d and r["installed"] for r in patch_reports)
        ]
    )
    live: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    pending = any(
        p["state"] == "applies cleanly"
        for r in patch_reports
        if r.get("plan")
        for p in r["plan"]["patches"]
    )
    for caller in names[:1]:  # one caller per report: the one the series is for
        callees = list((declared or {}).get(caller) or []) or None
        live = check(target, caller, against=callees).to_dict()
        after = (
            check(target, caller, against=callees, with_patches=dist_reports).to_dict()
            if pending
            else live
        )
    if check_smoke and step_info is not None and step_info.get("smoke") is not None:
        step_info["smoke_tested"] = _smoke_tested(
            target, step_info, {"facts": facts, "patches": patch_reports}, require_smoke
        )
    reasons = judge(facts, holders, patch_reports, live, after, step_info)
    return Review(
        target.label,
        time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        facts,
        holders,
        patch_reports,
        live,
        after,
        step_info,
        reasons,
    )
