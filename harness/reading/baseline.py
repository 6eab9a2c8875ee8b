"""The baseline of ``harness check``: the callee version the caller was written for, its pins
(``--baseline`` or the caller's metadata), the probe's arguments, and its read from PyPI wheels
with the same probe -- started early, while the caller's scan still runs."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.errors import TargetError, UsageError
from harness.probe_runner import run_probe

if TYPE_CHECKING:
    from harness.analysis.facts import Fits
    from harness.analysis.scan import Lookup, Scan
    from harness.targets.started import Started


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


class EarlyBaseline:
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


def read_baseline(
    scan: Scan,
    pins: dict[str, str],
    early: EarlyBaseline,
    baseline: list[str] | None,
    baseline_from: Path | None,
    notes: list[str],
) -> tuple[dict[str, Lookup] | None, dict[str, Fits] | None, dict[str, str]]:
    """The baseline's symbols and fits, and the pins read from PyPI wheels: a callee whose
    installed version is the pinned one is its own baseline. A baseline that cannot be read
    is a note (drift not checked) -- unless it was asked for by name (``baseline``)."""
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
        from harness.analysis.scan import fits_from, lookups_from
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
    return base_symbols, base_fits, pins
