"""``harness check``: every call from a caller dist that no longer binds to its callees.

One probe run on the target reads the caller's files and every callee symbol they use; the
baseline (the callee version the caller was written for) is read from PyPI wheels with the same
probe; binding and drift are pure (``harness.analysis``).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from harness.analysis.check import Checker
from harness.analysis.findings import CheckReport
from harness.errors import TargetError, UsageError
from harness.probing import run_probe
from harness.targets.base import Target


def baseline_pins(
    requires: list[str], callees: dict[str, Any], override: list[str]
) -> tuple[dict[str, str], list[str]]:
    """Pure: callee dist -> baseline version, from ``--baseline`` or the caller's metadata.

    Only exact pins (``vllm==0.11.0``, extras markers allowed) are used: a range does not say
    which version the caller was written for. Returns (pins, notes explaining gaps).
    """
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    names = {canonicalize_name(info.get("dist") or top): top for top, info in callees.items()}
    pins: dict[str, str] = {}
    notes: list[str] = []
    for text in override:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            raise UsageError(
                f"--baseline {text!r} is not NAME==VERSION", "e.g. --baseline vllm==0.11.0"
            ) from None
        spec = list(req.specifier)
        if len(spec) != 1 or spec[0].operator != "==":
            raise UsageError(
                f"--baseline {text!r} must pin one version", "e.g. --baseline vllm==0.11.0"
            )
        pins[canonicalize_name(req.name)] = spec[0].version
    for text in requires:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        name = canonicalize_name(req.name)
        if name not in names or name in pins:
            continue
        spec = list(req.specifier)
        if len(spec) == 1 and spec[0].operator in ("==", "==="):
            pins[name] = spec[0].version
        elif spec:
            notes.append(
                f"{req.name}: the caller declares {req.specifier}, not one version; "
                f"pass --baseline {req.name}==VER for drift"
            )
    return {n: v for n, v in pins.items() if n in names}, notes


def used_refs(scan: dict[str, Any]) -> list[list[str]]:
    return sorted([k.split(":", 1)[0], k.split(":", 1)[1]] for k in scan.get("symbols") or {})


def series_note(dist: str, plan: Any) -> str:
    """Pure: which patches ``--with-patches`` checked with, and why the others were left out."""
    from harness.patching.plan import APPLIED, APPLIES, BY_HAND

    used = [p.id for p in plan.patches if p.state in (APPLIED, APPLIES, BY_HAND)]
    left = [
        f"{p.id} ({p.state}: {p.detail})" if p.detail else f"{p.id} ({p.state})"
        for p in plan.patches
        if p.state not in (APPLIED, APPLIES, BY_HAND)
    ]
    text = f"--with-patches: {dist} {plan.series_version} series: with {', '.join(used) or 'none'}"
    return text + (f"; without {', '.join(left)}" if left else "")


def behaviour_refs(scan: dict[str, Any], field: str) -> list[str]:
    """The symbols the installed scan read ``field`` of (return paths, resolutions): the
    baseline reads the same."""
    return sorted(
        k for k, got in (scan.get("symbols") or {}).items() if field in (got.get("symbol") or {})
    )


def baseline_args(scan: dict[str, Any]) -> dict[str, Any]:
    """Pure: what the baseline probe reads -- the used symbols, and the files of the classes a
    patched-in method fits now (to see whether they fitted it in the baseline)."""
    # resolutions are read from the installed version only (what the new default becomes)
    args: dict[str, Any] = {
        "refs": used_refs(scan),
        "returns_for": behaviour_refs(scan, "return_paths"),
    }
    fits = []
    for key, got in sorted((scan.get("fits") or {}).items()):
        files = sorted({c["file"] for c in got.get("near") or []})
        if files:
            fits.append({"attrs": key.split(","), "files": files})
    if fits:
        args["fits"] = fits
    return args


def patched_texts(reports: list[Any]) -> tuple[dict[str, str], list[str]]:
    """Pure: absolute path -> text of every file the series would change (``harness patches``'
    DistReports), and notes for what could not be overlaid."""
    overrides: dict[str, str] = {}
    notes: list[str] = []
    for r in reports:
        if r.plan is None:
            notes.append(f"--with-patches: {r.note}")
            continue
        if not r.plan.ok:
            notes.append(
                f"--with-patches: the {r.dist} series does not apply cleanly; "
                "checked without the conflicting patches"
            )
        notes.append(series_note(r.dist, r.plan))
        for c in r.plan.changes:
            if c.after is not None and r.root:
                overrides[f"{r.root}/{c.path}"] = c.after
    return overrides, notes


def _absent_note(scan: dict[str, Any], label: str) -> tuple[str, ...]:
    """Say which imported packages could not be checked, so silence is never mistaken for ok."""
    absent = scan.get("absent") or []
    if not absent:
        return ()
    names = ", ".join(absent)
    what = "nothing was checked" if not scan.get("callees") else "their uses were not checked"
    return (
        f"{scan['caller']['dist']} imports {names}, not installed on {label}: {what} "
        "(for a pypi: target, add them to the spec, e.g. pypi:CALLER==V,vllm==V)",
    )


def check(
    target: Target,
    caller: str,
    *,
    against: list[str] | None = None,
    baseline: list[str] | None = None,
    no_baseline: bool = False,
    with_patches: Path | list[Any] | None = None,
    baseline_from: Path | None = None,
) -> CheckReport:
    start = time.perf_counter()
    overrides: dict[str, str] = {}
    patch_notes: list[str] = []
    if with_patches is not None:  # a patches/ folder, or its already-read DistReports
        if isinstance(with_patches, Path):
            from harness.patching.ops import status

            with_patches = status(target, with_patches)
        overrides, patch_notes = patched_texts(with_patches)
    args: dict[str, Any] = {"caller": caller, "callees": against or None}
    if overrides:
        args["overrides"] = overrides
    env = run_probe(target, "callsites", args, cache=True)
    scan = env.data
    if not scan.get("callees") and scan.get("absent"):
        raise TargetError(
            f"{target.label}: nothing to check: {caller} imports "
            f"{', '.join(scan['absent'])}, none of them installed there",
            f"for a pypi: target name the callee too, e.g. -t pypi:{caller}==VER,vllm==VER",
        )
    scanned = time.perf_counter() - start
    versions = {top: info.get("version") for top, info in (scan.get("callees") or {}).items()}
    pins, notes = (
        ({}, [])
        if no_baseline
        else baseline_pins(
            scan["caller"].get("requires") or [], scan.get("callees") or {}, baseline or []
        )
    )
    base_symbols: dict[str, Any] | None = None
    base_fits: dict[str, Any] | None = None
    installed = {
        info.get("dist", top).lower(): info.get("version")
        for top, info in (scan.get("callees") or {}).items()
    }
    current = {n for n, v in pins.items() if installed.get(n) == v}
    pins = {n: v for n, v in pins.items() if installed.get(n) != v}
    if current:  # the target has the very version the caller was written for: it is the baseline
        tops = {
            top
            for top, info in (scan.get("callees") or {}).items()
            if info.get("dist", top).lower() in current
        }
        base_symbols = {
            k: v
            for k, v in (scan.get("symbols") or {}).items()
            if k.split(":")[0].split(".")[0] in tops
        }
        base_fits = dict(scan.get("fits") or {})
    if pins:
        from harness.targets.pypi import PypiTarget

        spec = ",".join(f"{n}=={v}" for n, v in sorted(pins.items()))
        try:
            with PypiTarget(spec, wheelhouse=baseline_from) as bt:
                base_env = run_probe(bt, "callsites", baseline_args(scan), cache=True)
            base_symbols = {**(base_symbols or {}), **base_env.data["symbols"]}
            base_fits = {**(base_fits or {}), **(base_env.data.get("fits") or {})}
        except TargetError as exc:
            if baseline:  # asked for by name: its failure is the answer
                raise
            # the errors stand on their own; only the drift against the baseline is lost
            notes.append(
                f"drift not checked: the baseline {spec} could not be read ({exc.message}); "
                "give its wheel with --baseline-from DIR, or run where pip reaches an index"
            )
            pins = {}
    findings = Checker(scan, versions, base_symbols, base_fits).run()
    return CheckReport(
        target=target.label,
        caller=scan["caller"]["dist"],
        caller_version=scan["caller"].get("version"),
        callees=versions,
        baseline=dict(pins),
        findings=tuple(findings),
        stats={
            "files": len(scan["caller"].get("files") or {}),
            "imports": len(scan.get("imports") or []),
            "calls": len(scan.get("calls") or []),
            "attributes": len(scan.get("attributes") or []),
            "symbols": len(scan.get("symbols") or {}),
            "seconds": round(time.perf_counter() - start, 3),
            "scan_seconds": round(scanned, 3),
            "cached": env.cached,
        },
        notes=tuple(patch_notes)
        + tuple(notes)
        + _absent_note(scan, target.label)
        + tuple(env.warnings),
    )
