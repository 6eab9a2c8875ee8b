"""``harness check``: every call from a caller dist that no longer binds to its callees.

One probe run on the target reads the caller's files and every callee symbol they use; the
baseline (the callee version the caller was written for) is read from PyPI wheels with the same
probe; binding and drift are pure (``harness.analysis``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.errors import TargetError
from harness.probe_runner import run_probe
from harness.reading.baseline import EarlyBaseline, baseline_pins, read_baseline
from harness.targets.base import Target

if TYPE_CHECKING:
    from harness.analysis.environ import EnvSet
    from harness.analysis.findings import CheckReport
    from harness.analysis.scan import Scan
    from harness.patching.library import SeriesLibrary
    from harness.patching.ops import DistReport
    from harness.patching.overlay import Overlay

    #: a patches/ folder's series and their state on the target (``harness patches``)
    SeriesState = tuple[SeriesLibrary, list[DistReport]]

#: What the check needs once the caller's probe answers: imported while it runs (~50 ms of
#: harness's start-up, on the other core, instead of before the probe starts).
_AFTER_THE_PROBE = ("harness.analysis.checker", "harness.analysis.scan")


def _import_meanwhile() -> None:
    """Import :data:`_AFTER_THE_PROBE` in a background thread while the probe runs (the main
    thread waits on its pipes); a failure there is left to the import that needs the module
    (it raises it again, in the main thread)."""
    import importlib

    def load() -> None:
        for name in _AFTER_THE_PROBE:
            try:
                importlib.import_module(name)
            except BaseException:  # raised again by the import that needs it
                return

    threading.Thread(target=load, name="harness-imports", daemon=True).start()


def series_overlay(target: Target, root: Path) -> Overlay:
    """What the series under ``root`` leave on ``target`` (``check --with-patches``)."""
    from harness.patching.ops import status
    from harness.patching.overlay import overlay

    return overlay(status(target, root))


def _absent_note(scan: Scan, target: Target) -> tuple[str, ...]:
    """Say which imported packages could not be checked, so silence is never mistaken for ok."""
    if not scan.absent:
        return ()
    names = ", ".join(scan.absent)
    what = "nothing was checked" if not scan.callees else "their uses were not checked"
    how = (
        "add them to the spec, e.g. pypi:CALLER==V,vllm==V"
        if target.kind == "pypi"
        else f"install them on {target.label} to check their uses"
    )
    return (f"{scan.caller.dist} imports {names}, not installed on {target.label}: {what} ({how})",)


def _nothing_hint(target: Target, caller: str, absent: tuple[str, ...]) -> str:
    """How to get something checked: a pypi: target names the callee; another installs it."""
    if target.kind == "pypi":
        return f"for a pypi: target name the callee too, e.g. -t pypi:{caller}==VER,vllm==VER"
    names = ", ".join(absent)
    return f"install what {caller} imports ({names}) on {target.label}, then check again"


def check(
    target: Target,
    caller: str,
    *,
    against: list[str] | None = None,
    baseline: list[str] | None = None,
    no_baseline: bool = False,
    with_patches: Path | Overlay | None = None,
    baseline_from: Path | None = None,
    fallback: Sequence[str] = (),
    series: SeriesState | None = None,
) -> CheckReport:
    """``fallback``: ``NAME==VER`` baselines for callees the caller pins no version of
    (``matrix``: the previous version listed); ``series``: the library and its state here
    when ``with_patches`` is an overlay already made from them (``matrix``)."""
    start = time.perf_counter()
    overrides: dict[str, str] = {}
    patch_notes: list[str] = []
    if with_patches is not None:  # a patches/ folder, or the texts its series leave here
        if isinstance(with_patches, Path):
            from harness.patching.library import SeriesLibrary
            from harness.patching.ops import status
            from harness.patching.overlay import overlay

            library = SeriesLibrary(with_patches)
            series = (library, status(target, library))
            with_patches = overlay(series[1])
        overrides, patch_notes = with_patches.texts(), list(with_patches.notes)
    args: dict[str, Any] = {"caller": caller, "callees": against or None}
    if overrides:
        args["overrides"] = overrides
    sets: list[EnvSet] = []
    if series is not None:  # what the series' gated-off patches set: does the callee refuse it?
        from harness.reading.carried import series_sets

        sets = series_sets(*series, caller)
        if sets:
            args["environ_names"] = sorted({s.name for s in sets})
    early = EarlyBaseline(baseline or [], baseline_from)
    try:
        return _check(
            target,
            caller,
            args,
            early,
            start,
            baseline,
            no_baseline,
            baseline_from,
            patch_notes,
            fallback,
            (series, sets),
        )
    finally:
        early.close()


def _check(
    target: Target,
    caller: str,
    args: dict[str, Any],
    early: EarlyBaseline,
    start: float,
    baseline: list[str] | None,
    no_baseline: bool,
    baseline_from: Path | None,
    patch_notes: list[str],
    fallback: Sequence[str] = (),
    carried: tuple[SeriesState | None, list[EnvSet]] = (None, []),
) -> CheckReport:
    env = run_probe(
        target,
        "callsites",
        args,
        cache=True,
        meanwhile=_import_meanwhile,
        early=None if no_baseline else early.start,
    )
    from harness.analysis.checker import Checker
    from harness.analysis.findings import CheckReport
    from harness.analysis.scan import Scan

    scan = Scan.from_dict(env.data)  # the edge: from here on, models
    if not scan.callees and scan.absent:
        raise TargetError(
            f"{target.label}: nothing to check: {caller} imports "
            f"{', '.join(scan.absent)}, none of them installed there",
            _nothing_hint(target, caller, tuple(scan.absent)),
        )
    scanned = time.perf_counter() - start
    versions = scan.versions()
    pins, notes = (
        ({}, [])
        if no_baseline
        else baseline_pins(scan.caller.requires, scan.callees, baseline or [])
    )
    if not no_baseline and fallback:
        extra, _ = baseline_pins([], scan.callees, fallback)
        pins = {**extra, **pins}
    base_symbols, base_fits, pins = read_baseline(scan, pins, early, baseline, baseline_from, notes)
    facts = None
    if carried[0] is not None:
        from harness.reading.carried import series_facts

        library, reports = carried[0]
        caller_at = (caller, scan.caller.version)
        facts = series_facts(target, library, reports, caller_at, carried[1], versions)
    findings = Checker(scan, versions, base_symbols, base_fits, series=facts).run()
    return CheckReport(
        target=target.label,
        caller=scan.caller.dist,
        caller_version=scan.caller.version,
        callees=versions,
        baseline=dict(pins),
        findings=tuple(findings),
        stats={
            "files": len(scan.caller.files),
            "imports": len(scan.imports),
            "calls": len(scan.calls),
            "attributes": len(scan.attributes),
            "symbols": len(scan.symbols),
            "seconds": round(time.perf_counter() - start, 3),
            "scan_seconds": round(scanned, 3),
            "cached": env.cached,
        },
        notes=tuple(patch_notes) + tuple(notes) + _absent_note(scan, target) + tuple(env.warnings),
    )
