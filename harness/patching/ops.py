"""Patch commands, the reading half: read the target, plan (pure), report each patch's state.

Writing is :mod:`harness.patching.writing`.

Reads and writes both go through ``probes/patching/patchops.py`` on the target's own Python,
so local, venv and SSH targets behave identically and a dropped link cannot leave a
half-applied series.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import PatchError
from harness.patching.library import SeriesLibrary
from harness.patching.manifest import Backup, Manifest
from harness.patching.ownership import Ownership, foreign_hint, foreign_paths
from harness.patching.plan import CONFLICTS, LiveFile, PatchState, Plan, plan_apply, sha
from harness.patching.series import Series
from harness.probe_runner import run_probe
from harness.targets.base import Target


@dataclass(frozen=True)
class TargetState:
    """What patchops' read action returned for one dist."""

    dist: str
    version: str | None
    root: str
    live: dict[str, LiveFile]
    manifest: Manifest
    backups: dict[str, Backup | None]
    record: dict[str, str]
    actual: dict[str, str | None]
    recovered: dict[str, Any] | None
    lock: dict[str, Any] | None = None  # a live writer's holder record: files may be mid-swap
    owners: dict[str, str] = field(default_factory=dict)  # other dists' files among those read

    def ownership(self) -> Ownership:
        """What this dist owns here: its RECORD, and the files harness created for it."""
        return Ownership(self.dist, frozenset(self.record), self.owners, self.manifest.created())

    def missing(self) -> list[str]:
        """Installed files (pip's RECORD lists them, hashed) that are gone, not by harness."""
        return [
            path
            for path, got in sorted(self.actual.items())
            if got is None
            and self.record.get(path)
            and not (path in self.manifest.files and self.manifest.after_sha256(path) is None)
        ]

    def hand_edited(self) -> list[str]:
        """Installed files that match neither pip's RECORD nor what harness wrote."""
        out = []
        for path, got in sorted(self.actual.items()):
            want = self.record.get(path)
            if want and got and got != want and self.manifest.after_sha256(path) != got:
                out.append(path)
        return out


@dataclass(frozen=True)
class DistReport:
    dist: str
    installed: str | None
    series_versions: list[str]
    plan: Plan | None
    hand_edited: list[str]
    recovered: dict[str, Any] | None = None
    written: list[str] = field(default_factory=list)
    note: str | None = None
    root: str | None = None  # the target's site-packages
    lock: dict[str, Any] | None = None  # another harness is writing these files right now
    warnings: list[str] = field(default_factory=list)  # e.g. a gate on a misspelled dist
    series_dir: str | None = None  # the series folder planned here, as the user names it

    def to_dict(self) -> dict[str, Any]:
        return {
            "dist": self.dist,
            "installed": self.installed,
            "series_versions": self.series_versions,
            "plan": self.plan.to_dict() if self.plan else None,
            "hand_edited": self.hand_edited,
            "recovered": self.recovered,
            "written": self.written,
            "note": self.note,
            "lock": self.lock,
            "warnings": self.warnings,
            "series_dir": self.series_dir,
        }

    @property
    def series_version(self) -> str | None:
        """The version folder of the series planned here (None: nothing was planned)."""
        return self.plan.series_version if self.plan else None

    def states(self) -> tuple[PatchState, ...]:
        """Each patch's state here, in series order (none without a series)."""
        return self.plan.patches if self.plan else ()

    def leaves(self) -> dict[str, str | None]:
        """Each file the series would change -> its text after (None: deleted); {} without
        a series for the installed version."""
        return {c.path: c.after for c in self.plan.changes} if self.plan else {}

    def unclean(self) -> str | None:
        """Why the series does not apply cleanly here (its conflicts, else its refusals)."""
        if self.plan is None or self.plan.ok:
            return None
        bad = [p for p in self.states() if p.state == CONFLICTS]
        if bad:
            return ", ".join(f"{p.id} ({p.detail})" for p in bad)
        return "; ".join(self.plan.problems)


def installed_versions(target: Target, dists: list[str]) -> dict[str, str | None]:
    """Dist -> its installed version on the target (None: not installed), one probe."""
    from packaging.utils import canonicalize_name

    env = run_probe(target, "facts", {"dists": dists, "gpus": False})
    return {canonicalize_name(k): v for k, v in (env.data.get("dists") or {}).items()}


def read_state(target: Target, dist: str, files: list[str]) -> TargetState:
    data = run_probe(target, "patchops", {"action": "read", "dist": dist, "files": files}).data
    live = {}
    for path, info in (data.get("files") or {}).items():
        if "error" in info:
            raise PatchError(
                f"{target.label}: {info['error']}",
                "patch paths must stay inside the dist's own files",
            )
        exists = info.get("exists", False)
        text = info.get("text") if exists else None
        live[path] = LiveFile(
            path,
            text,
            info.get("sha256"),
            info.get("mode"),
            data["record"].get(path),
            binary=exists and text is None,
        )
    return TargetState(
        dist,
        data.get("version"),
        data["root"],
        live,
        Manifest.from_json(data.get("manifest")),
        {p: Backup.from_json(b) for p, b in (data.get("backups") or {}).items()},
        data.get("record") or {},
        data.get("actual") or {},
        data.get("recovered"),
        data.get("lock"),
        dict(data.get("owners") or {}),
    )


def holder_text(lock: dict[str, Any]) -> str:
    return (
        f"{lock.get('user', '?')}@{lock.get('host', '?')} pid {lock.get('pid', '?')} "
        f"({lock.get('command', '?')}) since {lock.get('since', '?')}"
    )


def status(
    target: Target,
    root: Path | SeriesLibrary,
    *,
    only: str | None = None,
    force: bool = False,
    installed: dict[str, str | None] | None = None,
) -> list[DistReport]:
    """Per dist: installed version, the series for it, each patch's state, hand edits.

    ``root``: the patches folder, or the command's :class:`SeriesLibrary` (each series read
    once). ``installed`` (dist -> version, from facts already gathered) saves a probe round
    trip.
    """
    from harness.patching.gates import flag_skips, misspelled

    library = SeriesLibrary.of(root)
    dists = library.chosen(only)
    required = library.required_dists(dists)
    wanted = dists + required
    if installed is None or any(d not in installed for d in wanted):
        installed = installed_versions(target, wanted)
    typos = misspelled(target, required, library.dists(), installed)
    out = []
    for dist in dists:
        version = installed.get(dist)
        versions = library.versions(dist)
        series = library.series_for(dist, version)
        if version is None:
            out.append(
                DistReport(
                    dist,
                    None,
                    versions,
                    None,
                    [],
                    note=f"{dist} is not installed on {target.label}",
                )
            )
            continue
        if series is None:
            out.append(
                DistReport(
                    dist,
                    version,
                    versions,
                    None,
                    [],
                    note=f"no series for {dist} {version}; series exist for: "
                    f"{', '.join(versions) or 'none'}",
                )
            )
            continue
        files = sorted({fp.path for p in series.patches for fp in p.files})
        state = read_state(target, dist, files)
        refuse_foreign(target, series, state)
        plan = plan_apply(series, state.live, installed, state.manifest, force=force)
        plan, warnings = flag_skips(plan, series, typos, target.label)
        note = (
            f"being patched right now by {holder_text(state.lock)}: what follows may be mid-change"
            if state.lock is not None
            else None
        )
        out.append(
            DistReport(
                dist,
                version,
                versions,
                plan,
                state.hand_edited(),
                state.recovered,
                note=note,
                root=state.root,
                lock=state.lock,
                warnings=warnings,
                series_dir=shown_dir(series.folder),
            )
        )
    return out


def shown_dir(folder: Path) -> str:
    """A series folder as the user names it: relative to the cwd when under it."""
    try:
        return str(folder.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(folder)


def refuse_foreign(target: Target, series: Series, state: TargetState) -> None:
    """Before anything is planned or written: the series may touch only its own dist.

    Raises:
        PatchError: naming each patch file:line and path it may not write, and the way out.
    """
    own = state.ownership()
    exists = {p: f.text is not None or f.binary for p, f in state.live.items()}
    bad = foreign_paths(series, own, exists)
    if bad:
        raise PatchError(
            f"{target.label}: refusing the {series.dist} {series.version} series, nothing was "
            "written: " + "; ".join(bad),
            foreign_hint(series, own),
        )


def file_modules(paths: list[str]) -> list[str]:
    out = []
    for p in paths:
        if p.endswith(".py"):
            mod = p[:-3].replace("/", ".")
            out.append(mod[: -len(".__init__")] if mod.endswith(".__init__") else mod)
    return out


__all__ = [
    "DistReport",
    "TargetState",
    "file_modules",
    "read_state",
    "sha",
    "status",
]
