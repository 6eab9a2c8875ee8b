"""``harness check``: every call from a caller dist that no longer binds to its callees.

One probe run on the target reads the caller's files and every callee symbol they use; the
baseline (the callee version the caller was written for) is read from PyPI wheels with the same
probe; binding and drift are pure (``harness.analysis``).
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.errors import TargetError, UsageError
from harness.probe_runner import run_probe
from harness.targets.base import Target

if TYPE_CHECKING:
    from harness.analysis.environ import EnvSet
    from harness.analysis.facts import Fits
    from harness.analysis.findings import CheckReport
    from harness.analysis.scan import Lookup, Scan
    from harness.patching.library import SeriesLibrary
    from harness.patching.ops import DistReport
    from harness.patching.overlay import Overlay
    from harness.targets.started import Started

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


#: A requirement's name (what packaging would read, if it reads the line at all).
_HEAD = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
#: ``NAME==1.2.3``, at most an ``extra == "x"`` marker: read without packaging (~25 ms of
#: every check, warm ones too, for the usual metadata); any other shape goes to packaging.
_EXACT = re.compile(
    r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(===?)\s*(\d+(?:\.\d+)*)\s*"
    r"(?:;\s*extra\s*==\s*(['\"])[A-Za-z0-9._-]+\4\s*)?"
)


def baseline_pins(
    requires: Sequence[str], callees: Mapping[str, Any], override: Sequence[str]
) -> tuple[dict[str, str], list[str]]:
    """Pure: callee dist -> baseline version, from ``--baseline`` or the caller's metadata.

    Only exact pins (``vllm==0.11.0``, extras markers allowed) are used: a range does not say
    which version the caller was written for. Returns (pins, notes explaining gaps).
    """
    from harness.targets.pypi import normalize  # packaging's canonicalize_name

    names = {normalize(info.get("dist") or top): top for top, info in callees.items()}
    pins: dict[str, str] = {}
    notes: list[str] = []
    for text in override:
        from packaging.requirements import InvalidRequirement, Requirement

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
        pins[normalize(req.name)] = spec[0].version
    for text in requires:
        head = _HEAD.match(text)
        if head is None or normalize(head.group(1)) not in names:
            continue  # not a callee's (or not a requirement): packaging would skip it too
        exact = _EXACT.fullmatch(text)
        if exact is not None:  # NAME==1.2.3 [; extra == "x"]: as packaging reads it
            pins.setdefault(normalize(exact.group(1)), exact.group(3))
            continue
        from packaging.requirements import InvalidRequirement, Requirement

        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        name = normalize(req.name)
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


def used_refs(scan: Scan) -> list[list[str]]:
    return sorted([k.split(":", 1)[0], k.split(":", 1)[1]] for k in scan.symbols)


def behaviour_refs(scan: Scan) -> list[str]:
    """The symbols the installed scan read the return paths of: the baseline reads the
    same."""
    return sorted(
        k
        for k, got in scan.symbols.items()
        if got.callee is not None and got.callee.return_paths is not None
    )


def baseline_args(scan: Scan) -> dict[str, Any]:
    """Pure: what the baseline probe reads -- the used symbols, and the files of the classes a
    patched-in method fits now (to see whether they fitted it in the baseline)."""
    # resolutions are read from the installed version only (what the new default becomes)
    args: dict[str, Any] = {
        "refs": used_refs(scan),
        "returns_for": behaviour_refs(scan),
    }
    viewed = sorted(
        k for k, got in scan.symbols.items() if got.callee is not None and got.callee.views
    )
    if viewed:  # the keys the baseline's dict views held
        args["views_for"] = viewed
    overridden = sorted(
        {f"{b.key}.{m.name}" for s in scan.subclasses for b in s.bases for m in s.methods}
    )
    if overridden:  # how the baseline's base called the methods the caller overrides
        args["overrides_for"] = overridden
    based = sorted({b.key for s in scan.subclasses for b in s.bases})
    if based:  # the methods the caller's classes inherited then, and whose default they ran
        args["subclassed_for"] = based
    mixed = sorted({b.key for s in scan.subclasses if s.others for b in s.bases})
    if mixed:  # what the base did to subclasses in the version the caller was written for
        args["hierarchy_for"] = mixed
    fits = []
    for key, got in sorted(scan.fits.items()):
        files = sorted({c.file for c in got.near})
        if files:
            fits.append({"attrs": key.split(","), "files": files})
    if fits:
        args["fits"] = fits
    return args


def _unread(pins: dict[str, str], callees: Mapping[str, Any]) -> dict[str, str]:
    """Pure: the pins whose version is not the one installed (those a baseline reads)."""
    installed = {
        info.get("dist", top).lower(): info.get("version") for top, info in callees.items()
    }
    return {n: v for n, v in pins.items() if installed.get(n) != v}


def _spec(pins: dict[str, str]) -> str:
    return ",".join(f"{n}=={v}" for n, v in sorted(pins.items()))


class _EarlyBaseline:
    """The baseline's probe, started from what the caller's scan says early (what the caller
    requires and imports): it loads and reads the callee modules the caller imports while the
    scan runs on, and takes its arguments once the scan answered. Whatever fails here is done
    again after the scan, and reported there, as before (:mod:`harness.targets.started`)."""

    def __init__(self, override: Sequence[str], wheelhouse: Path | None) -> None:
        self.override, self.wheelhouse = override, wheelhouse
        self.spec: str | None = None
        self.started: Started | None = None
        self.targets = contextlib.ExitStack()

    def start(self, early: dict[str, Any]) -> None:
        """(In the thread that read the early word.)"""
        from harness.probe_runner import start_probe
        from harness.targets.registry import open_kind

        pins, _ = baseline_pins(early["caller"]["requires"], early["callees"], self.override)
        pins = _unread(pins, early["callees"])
        if pins:
            bt = self.targets.enter_context(
                open_kind("pypi", _spec(pins), wheelhouse=self.wheelhouse)
            )
            self.started = start_probe(bt, "callsites", {"prefetch": early.get("imports") or []})
            self.spec = _spec(pins)

    def take(self, spec: str) -> Started | None:
        """The process started for ``spec``, if that is the one (else it is ended)."""
        got, self.started = self.started, None
        if got is not None and spec != self.spec:
            got.cancel()
            return None
        return got

    def close(self) -> None:
        if self.started is not None:
            self.started.cancel()
            self.started = None
        self.targets.close()


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
    early = _EarlyBaseline(baseline or [], baseline_from)
    try:
        return _check(target, caller, args, early, start, baseline, no_baseline, baseline_from,
                      patch_notes, fallback, (series, sets))  # fmt: skip
    finally:
        early.close()


def _check(
    target: Target,
    caller: str,
    args: dict[str, Any],
    early: _EarlyBaseline,
    start: float,
    baseline: list[str] | None,
    no_baseline: bool,
    baseline_from: Path | None,
    patch_notes: list[str],
    fallback: Sequence[str] = (),
    carried: tuple[SeriesState | None, list[EnvSet]] = (None, []),
) -> CheckReport:
    env = run_probe(target, "callsites", args, cache=True, meanwhile=_import_meanwhile,
                    early=None if no_baseline else early.start)  # fmt: skip
    from harness.analysis.checker import Checker
    from harness.analysis.findings import CheckReport
    from harness.analysis.scan import Scan, fits_from, lookups_from

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
    base_symbols: dict[str, Lookup] | None = None
    base_fits: dict[str, Fits] | None = None
    unread = _unread(pins, scan.callees)
    current, pins = set(pins) - set(unread), unread
    if current:  # the target has the very version the caller was written for: it is the baseline
        tops = {
            top for top, info in scan.callees.items() if info.get("dist", top).lower() in current
        }
        base_symbols = {
            k: v for k, v in scan.symbols.items() if k.split(":")[0].split(".")[0] in tops
        }
        base_fits = dict(scan.fits)
    if pins:
        from harness.targets.registry import open_kind

        spec = _spec(pins)
        try:
            with open_kind("pypi", spec, wheelhouse=baseline_from) as bt:
                ready = early.take(spec)  # started while the scan ran, if it could be
                base_env = run_probe(
                    bt, "callsites", baseline_args(scan), cache=True, started=ready
                )
            base_symbols = {**(base_symbols or {}), **lookups_from(base_env.data["symbols"])}
            base_fits = {**(base_fits or {}), **fits_from(base_env.data.get("fits"))}
        except TargetError as exc:
            if baseline:  # asked for by name: its failure is the answer
                raise
            # the errors stand on their own; only the drift against the baseline is lost
            notes.append(
                f"drift not checked: the baseline {spec} could not be read ({exc.message}); "
                "give its wheel with --baseline-from DIR, or run where pip reaches an index"
            )
            pins = {}
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
