"""``harness matrix``: one caller against many versions of a callee, one ``check`` each.

Each version V of CALLEE is checked as ``harness check CALLER -t pypi:CALLER==CV,CALLEE==V
--against CALLEE [--with-patches]`` would (:func:`harness.reading.check.check`), several
versions at once, as many as memory allows. The versions come from ``--versions``: a list
(``0.11.0,0.16.0``), a range of released versions on the index (``0.11..0.26``: from 0.11
through every 0.26.x), or ``all`` released ones. Parsing, choosing and summing up are pure.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.version import InvalidVersion, Version

from harness.analysis.findings import Category
from harness.errors import HarnessError, UsageError

if TYPE_CHECKING:
    from harness.patching.library import SeriesLibrary

#: What one version's check may take (a pypi: target's probes over vLLM's sources, and a
#: lazy fetch): the bound on how many run at once is MemAvailable / this.
JOB_BYTES = 1_500_000_000


@dataclass(frozen=True)
class VersionSpec:
    """``--versions``: an explicit list, a ``LOW..HIGH`` range, or ``all``."""

    listed: tuple[str, ...] = ()
    low: str | None = None
    high: str | None = None
    every: bool = False

    @property
    def needs_index(self) -> bool:
        return not self.listed


def parse_versions(text: str) -> VersionSpec:
    """Pure: ``0.11.0,0.16.0`` | ``0.11..0.26`` | ``0.11..`` | ``..0.26`` | ``all``."""
    text = text.strip()
    if text == "all":
        return VersionSpec(every=True)
    if ".." in text:
        low, _, high = text.partition("..")
        for v in (low, high):
            if v and not _valid(v):
                raise UsageError(f"--versions {text}: {v!r} is not a version", _HINT)
        if not (low or high):
            raise UsageError(f"--versions {text}: give at least one end", _HINT)
        return VersionSpec(low=low or None, high=high or None)
    listed = tuple(v.strip() for v in text.split(",") if v.strip())
    bad = [v for v in listed if not _valid(v)]
    if bad or not listed:
        raise UsageError(f"--versions {text}: {', '.join(bad) or 'no'} version(s)", _HINT)
    return VersionSpec(listed=listed)


_HINT = "e.g. --versions 0.11.0,0.16.0, --versions 0.11..0.26 or --versions all"


def _valid(v: str) -> bool:
    try:
        Version(v)
    except InvalidVersion:
        return False
    return True


def select(spec: VersionSpec, available: Sequence[str]) -> list[str]:
    """Pure: the versions ``spec`` means among those on the index, oldest first.

    A range and ``all`` take released versions only (no pre- or dev releases); a range's
    high end includes its patch releases (``..0.26`` takes 0.26.1)."""
    if spec.listed:
        return sorted(spec.listed, key=Version)
    out = []
    for text in available:
        try:
            v = Version(text)
        except InvalidVersion:
            continue
        if v.is_prerelease or v.is_devrelease:
            continue
        if spec.low is not None and v < Version(spec.low):
            continue
        if spec.high is not None and not _at_most(v, Version(spec.high)):
            continue
        out.append(text)
    return sorted(set(out), key=Version)


def _at_most(v: Version, high: Version) -> bool:
    return v <= high or v.release[: len(high.release)] == high.release


@dataclass(frozen=True)
class Row:
    """One callee version: its check's errors and drift warnings, the series' patch states."""

    version: str
    errors: int = 0
    drift: int = 0
    warnings: int = 0
    patches: dict[str, list[str]] = field(default_factory=dict)  # apply|skip|conflict -> ids
    failed: str | None = None  # the version could not be checked: why
    notes: tuple[str, ...] = ()
    #: with a series: whether its ``[verified]`` records a GPU run on this version; else None
    gpu_verified: bool | None = None
    #: a line per kind of change no signature shows (:func:`kind_notes`)
    kinds: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "errors": self.errors,
            "drift": self.drift,
            "warnings": self.warnings,
            "patches": self.patches,
            "failed": self.failed,
            "notes": list(self.notes),
            "gpu_verified": self.gpu_verified,
            "kinds": list(self.kinds),
        }


@dataclass(frozen=True)
class Matrix:
    caller: str
    callee: str
    rows: tuple[Row, ...]
    with_patches: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "caller": self.caller,
            "callee": self.callee,
            "with_patches": self.with_patches,
            "versions": [r.to_dict() for r in self.rows],
        }


def row_from(version: str, report: Any, dists: Sequence[Any]) -> Row:
    """Pure: a check report (and ``harness patches``' DistReports) -> one row."""
    from harness.analysis.findings import Category, Severity
    from harness.patching.states import Status

    patches: dict[str, list[str]] = {"apply": [], "skip": [], "conflict": []}
    for d in dists:
        for p in d.plan.patches if d.plan is not None else ():
            word = "apply" if p.state.usable else "skip" if p.state is Status.SKIPPED else None
            patches[word or "conflict"].append(p.id)
    findings = report.findings
    return Row(
        version=version,
        errors=len(report.errors),
        drift=sum(1 for f in findings if f.category == Category.DRIFT),
        warnings=sum(1 for f in findings if f.severity == Severity.WARNING),
        patches={k: v for k, v in patches.items() if v},
        notes=tuple(report.notes),
        kinds=kind_notes(findings),
    )


#: The kinds of change no signature shows: one line each in a row's note.
_KINDS = {
    Category.BASE_METHOD_ADDED: "base gained (not overridden)",
    Category.OVERRIDE_ORPHANED: "overrides the base no longer has",
    Category.LITERAL_CHANGED: "literals changed in",
    Category.ENV_REFUSED: "refuses",
    Category.PATCHED_FILE_DELETED: "patches a file the release deleted",
}


def kind_notes(findings: Sequence[Any]) -> tuple[str, ...]:
    """Pure: a line per kind of change no signature shows, naming what changed (a method
    once, whichever subclass inherits it)."""
    out = []
    for cat, words in _KINDS.items():
        names: list[str] = []
        seen: set[str] = set()
        for f in findings:
            if f.category != cat:
                continue
            if cat == Category.ENV_REFUSED:
                name, key = f.source.strip(), f.source.strip()
            elif cat == Category.PATCHED_FILE_DELETED:
                name = key = f.symbol
            else:
                name = f.symbol.rpartition(":")[2]
                key = name.rpartition(".")[2]
            if key not in seen:
                seen.add(key)
                names.append(name)
        if names:
            out.append(f"{words}: {', '.join(names)}")
    return tuple(out)


def jobs_for(count: int, asked: int | None = None) -> int:
    """How many versions to check at once: ``asked``, else bounded by CPUs and free memory."""
    if asked:
        return max(1, min(asked, count))
    free = _available_memory()
    by_memory = max(1, free // JOB_BYTES) if free else 2
    return max(1, min(count, os.cpu_count() or 1, by_memory))


def _available_memory() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def matrix(
    caller: str,
    callee: str,
    versions: str,
    *,
    with_patches: Path | None = None,
    jobs: int | None = None,
    available: Callable[[str], list[str]] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> Matrix:
    """Check ``caller`` (``NAME==VERSION``) against each version of ``callee``.

    ``on_progress(done, total)``: once the versions are chosen (0), then as each is checked.

    Raises:
        UsageError: a bad ``--versions``, an unpinned caller, no version selected.
    """
    from harness.patching.library import SeriesLibrary
    from harness.targets.pypi import PypiTarget, parse_spec

    pins = parse_spec(caller)
    if len(pins) != 1 or not pins[0].version:
        raise UsageError(
            f"matrix {caller}: give the caller as NAME==VERSION",
            "e.g. harness matrix speculators==0.3.0 --against vllm ...",
        )
    spec = parse_versions(versions)
    chosen = select(spec, (available or index_versions)(callee) if spec.needs_index else ())
    if not chosen:
        raise UsageError(f"--versions {versions}: no released {callee} version on the index in it")
    pin = pins[0]
    library = None if with_patches is None else SeriesLibrary(with_patches)  # read once
    series = None if library is None else _series(library, pin.name, pin.version)
    progress = on_progress or (lambda done, total: None)
    progress(0, len(chosen))
    PypiTarget(caller).probe_paths()  # fetched once, before the versions share it
    with ThreadPoolExecutor(jobs_for(len(chosen), jobs)) as pool:
        # a caller that pins no version of the callee: each row against the one before it
        before = [None, *chosen[:-1]]
        futures = [
            pool.submit(_one, pin, callee, v, library, b)
            for v, b in zip(chosen, before, strict=True)
        ]
        for done, _ in enumerate(as_completed(futures), 1):
            progress(done, len(chosen))
        rows = [f.result() for f in futures]
    if with_patches is not None:  # the GPU runs the series' own [verified] records
        rows = [
            replace(r, gpu_verified=series is not None and series.verified_on(callee, r.version))
            for r in rows
        ]
    return Matrix(pins[0].name, callee, tuple(rows), with_patches is not None)


def _series(library: SeriesLibrary, dist: str, version: str | None) -> Any:
    """The caller's series in ``library`` (its folder spelled either way), or None."""
    from packaging.utils import canonicalize_name

    for folder in library.dists():
        if canonicalize_name(folder) == canonicalize_name(dist):
            return library.series_for(folder, version)
    return None


def _one(
    pin: Any, callee: str, version: str, library: SeriesLibrary | None, before: str | None = None
) -> Row:
    from harness.reading.check import check
    from harness.targets.pypi import PypiTarget

    try:
        with PypiTarget(f"{pin.requirement},{callee}=={version}") as target:
            dists: list[Any] = []
            leaves = None
            if library is not None:
                from harness.patching.ops import status
                from harness.patching.overlay import overlay

                dists = status(target, library)
                leaves = overlay(dists) if dists else None
            fallback = [f"{callee}=={before}"] if before else []
            report = check(
                target,
                pin.name,
                against=[callee],
                with_patches=leaves,
                fallback=fallback,
                series=None if library is None else (library, dists),
            )
        return row_from(version, report, dists)
    except HarnessError as exc:
        return Row(version, failed=exc.message)


def index_versions(name: str) -> list[str]:
    """The versions of ``name`` with a wheel on the index (pip's finder, this machine's tags
    and the Linux ones harness reads by)."""
    from harness.targets.pipindex import PipIndex, PipUnavailable
    from harness.targets.pypi import LINUX_TAGS

    index = PipIndex(["--only-binary=:all:", "--retries", "1", "--timeout", "15"])
    try:
        return index.versions(name, LINUX_TAGS)
    except PipUnavailable as exc:
        raise UsageError(
            f"--versions: the index's {name} versions cannot be listed here ({exc})",
            "list them: --versions 0.11.0,0.16.0",
        ) from None
    finally:
        index.close()
