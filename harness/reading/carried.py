"""What the patch series say about the release a check reads (``check --with-patches``,
``matrix --with-patches``): the facts :mod:`harness.analysis.carried` names.

- the values a caller's series sets in the environment in patches gated off here (read from
  the patches' added lines; the callsites probe then reads whether the callee refuses them);
- the files a series changes that the release deleted: the nearest earlier series of a dist
  that has none for its installed version (what one would carry forward), and any patch of an
  exact series that conflicts for a missing file;
- the caller's other series in this project, with the pipeline files that name them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from harness.analysis.carried import DeletedFile, SeriesFacts
from harness.analysis.environ import EnvSet
from harness.patching.ops import read_state, shown_dir
from harness.patching.states import Status

if TYPE_CHECKING:
    from harness.patching.library import SeriesLibrary
    from harness.patching.ops import DistReport
    from harness.patching.series import PatchSpec
    from harness.targets.base import Target

#: an added line setting a variable: ``os.environ["NAME"] = "v"`` or ``.setdefault("NAME", "v")``
_SETS = (
    re.compile(r"""environ\[\s*["']([A-Za-z_]\w*)["']\s*\]\s*=\s*["']([^"']*)["']"""),
    re.compile(r"""environ\.setdefault\(\s*["']([A-Za-z_]\w*)["']\s*,\s*["']([^"']*)["']"""),
)


def gate_text(p: PatchSpec) -> str:
    return ", ".join(f"{d} {spec}" for d, spec in p.requires)


def patch_sets(p: PatchSpec, shown: str, gate: str) -> list[EnvSet]:
    """Pure: each variable the patch's added lines set to a literal."""
    out = []
    for i, line in enumerate(p.text.splitlines(), 1):
        if not line.startswith("+") or line.startswith("+++"):
            continue
        for rx in _SETS:
            m = rx.search(line)
            if m:
                out.append(EnvSet(m.group(1), m.group(2), shown, i, line[1:].strip(), p.id, gate))
    return out


def series_sets(library: SeriesLibrary, reports: Sequence[DistReport], caller: str) -> list[EnvSet]:
    """The caller's series' patches gated off here, and what they set (their gate said)."""
    out: list[EnvSet] = []
    for r in reports:
        if canonicalize_name(r.dist) != canonicalize_name(caller) or r.plan is None:
            continue
        series = library.series_for(r.dist, r.plan.series_version)
        skipped = {p.id for p in r.plan.patches if p.state is Status.SKIPPED}
        for p in series.patches if series else ():
            if p.id in skipped:
                out += patch_sets(p, _shown(library, p.file), gate_text(p))
    return out


def _shown(library: SeriesLibrary, file: Path) -> str:
    try:
        return str(file.resolve().relative_to(library.root.resolve().parent))
    except (ValueError, OSError):
        return str(file)


def gated_off(p: PatchSpec, versions: Mapping[str, str | None]) -> bool:
    """Pure: does the patch's gate leave these versions out? (unknown: no)"""
    for dist, spec in p.requires:
        have = versions.get(canonicalize_name(dist))
        try:
            if have is not None and Version(have) not in SpecifierSet(spec):
                return True
        except (InvalidSpecifier, InvalidVersion):
            continue
    return False


def carried_from(versions: Sequence[str], installed: str) -> str | None:
    """Pure: the nearest series version below ``installed`` (the one carried forward)."""
    try:
        below = [v for v in versions if Version(v) < Version(installed)]
        return max(below, key=Version) if below else None
    except InvalidVersion:
        return None


def deleted_files(
    target: Target,
    library: SeriesLibrary,
    reports: Sequence[DistReport],
    versions: Mapping[str, str | None],
) -> list[DeletedFile]:
    """Files a carried (or exact) series changes that the installed release does not have."""
    out: list[DeletedFile] = []
    for r in reports:
        if r.installed is None:
            continue
        if r.plan is not None:  # the exact series: the planner saw the missing files
            series = library.series_for(r.dist, r.plan.series_version)
            specs = {p.id: p for p in series.patches} if series else {}
            for st in r.plan.patches:
                spec = specs.get(st.id)
                if spec is not None:
                    out += [_deleted(library, r, spec, path, versions) for path in st.missing]
            continue
        old = carried_from(r.series_versions, r.installed)
        series = library.series_for(r.dist, old) if old else None
        if series is None:
            continue
        files = sorted({fp.path for p in series.patches for fp in p.files if not fp.new_file})
        live = read_state(target, r.dist, files).live
        for p in series.patches:
            for fp in p.files:
                got = live.get(fp.path)
                if not fp.new_file and got is not None and got.text is None and not got.binary:
                    out.append(_deleted(library, r, p, fp.path, versions))
    return out


def _deleted(
    library: SeriesLibrary,
    r: DistReport,
    p: PatchSpec,
    path: str,
    versions: Mapping[str, str | None],
) -> DeletedFile:
    line = next((fp.patch_line for fp in p.files if fp.path == path), 1)
    return DeletedFile(
        r.dist,
        r.installed or "",
        shown_dir(p.file.parent),
        p.id,
        _shown(library, p.file),
        line,
        path,
        gate_text(p),
        gated_off(p, versions),
    )


def elsewhere(library: SeriesLibrary, caller: str, version: str | None) -> list[str]:
    """The caller's other series here, each with the pipeline files naming ``dist==v``."""
    folder = next(
        (d for d in library.dists() if canonicalize_name(d) == canonicalize_name(caller)), None
    )
    if folder is None:
        return []
    home = library.root.resolve().parent
    pipelines = sorted(home.glob("pipelines/*.toml")) + sorted(home.glob("pipeline.toml"))
    out = []
    for v in library.versions(folder):
        if v == version:
            continue
        named = [
            str(f.relative_to(home))
            for f in pipelines
            if re.search(rf"\b{re.escape(caller)}=={re.escape(v)}\b", f.read_text(errors="replace"))
        ]
        where = shown_dir(library.root / folder / v)
        out.append(
            f"{caller} {v}'s series ({where})" + (f", run by {', '.join(named)}" if named else "")
        )
    return out


def series_facts(
    target: Target,
    library: SeriesLibrary,
    reports: Sequence[DistReport],
    caller: tuple[str, str | None],
    sets: Sequence[EnvSet],
    versions: Mapping[str, str | None],
) -> SeriesFacts:
    """Everything the rules read of the series, once the scan said the versions."""
    known: dict[str, str | None] = {str(canonicalize_name(k)): v for k, v in versions.items()}
    known.update({str(canonicalize_name(r.dist)): r.installed for r in reports})
    return SeriesFacts(
        tuple(deleted_files(target, library, reports, known)),
        tuple(sets),
        tuple(elsewhere(library, *caller)) if sets else (),
    )
