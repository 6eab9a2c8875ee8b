"""Patch commands: read the target, plan (pure), write through the transactional probe.

Reads and writes both go through ``probes/patchops.py`` on the target's own Python, so local,
venv and SSH targets behave identically and a dropped link cannot leave a half-applied series.
"""

from __future__ import annotations

import getpass
import os
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import (
    HarnessError,
    Interrupted,
    PatchConflict,
    PatchError,
    StalePatch,
    TargetError,
    UsageError,
    VersionMismatch,
)
from harness.interrupts import DeferInterrupts
from harness.patching.ownership import Ownership, foreign_hint, foreign_paths
from harness.patching.plan import (
    STALE,
    FileChange,
    LiveFile,
    Outcome,
    Plan,
    interrupted_line,
    new_manifest,
    plan_apply,
    plan_revert,
    sha,
)
from harness.patching.series import (
    Series,
    dists_with_series,
    load_series,
    versions_with_series,
)
from harness.probing import run_probe
from harness.targets.base import Target


@dataclass(frozen=True)
class TargetState:
    """What patchops' read action returned for one dist."""

    dist: str
    version: str | None
    root: str
    live: dict[str, LiveFile]
    manifest: dict[str, Any]
    backups: dict[str, Any]
    record: dict[str, str]
    actual: dict[str, str | None]
    recovered: dict[str, Any] | None
    lock: dict[str, Any] | None = None  # a live writer's holder record: files may be mid-swap
    owners: dict[str, str] = field(default_factory=dict)  # other dists' files among those read

    def ownership(self) -> Ownership:
        """What this dist owns here: its RECORD, and the files harness created for it."""
        created = {
            p
            for p, e in (self.manifest.get("files") or {}).items()
            if "pristine_sha256" in e and e["pristine_sha256"] is None
        }
        return Ownership(self.dist, frozenset(self.record), self.owners, frozenset(created))

    def hand_edited(self) -> list[str]:
        """Installed files that match neither pip's RECORD nor what harness wrote."""
        ours = {p: e.get("after_sha256") for p, e in (self.manifest.get("files") or {}).items()}
        out = []
        for path, got in sorted(self.actual.items()):
            want = self.record.get(path)
            if want and got and got != want and ours.get(path) != got:
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
        }


def _installed_versions(target: Target, dists: list[str]) -> dict[str, str | None]:
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
        data.get("manifest") or {},
        data.get("backups") or {},
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


def _series_for(root: Path, dist: str, version: str | None) -> tuple[Series | None, list[str]]:
    versions = versions_with_series(root, dist)
    if version is None:
        return None, versions
    return load_series(root, dist, version), versions


def _dists(root: Path, only: str | None) -> list[str]:
    dists = dists_with_series(root)
    if only:
        return [only]
    if not dists:
        raise UsageError(
            f"no patch series under {root}",
            "create patches/<dist>/<version>/series.toml, or `harness make-patch`",
        )
    return dists


def status(
    target: Target,
    root: Path,
    *,
    only: str | None = None,
    force: bool = False,
    installed: dict[str, str | None] | None = None,
) -> list[DistReport]:
    """Per dist: installed version, the series for it, each patch's state, hand edits.

    ``installed`` (dist -> version, from facts already gathered) saves a probe round trip.
    """
    dists = _dists(root, only)
    wanted = dists + _required_dists(root, dists)
    if installed is None or any(d not in installed for d in wanted):
        installed = _installed_versions(target, wanted)
    out = []
    for dist in dists:
        version = installed.get(dist)
        series, versions = _series_for(root, dist, version)
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
            )
        )
    return out


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


def _required_dists(root: Path, dists: list[str]) -> list[str]:
    names: set[str] = set()
    for d in dists:
        for v in versions_with_series(root, d):
            s = load_series(root, d, v)
            for p in s.patches if s else ():
                names.update(n for n, _ in p.requires)
    return sorted(names)


def _holder(command: str) -> dict[str, Any]:
    try:
        user = getpass.getuser()
    except Exception:
        user = "?"
    return {
        "user": user,
        "host": socket.gethostname(),
        "command": command,
        "laptop_pid": os.getpid(),
    }


def _write(
    target: Target, dist: str, changes: list[FileChange], manifest: dict[str, Any], command: str
) -> list[str]:
    if not target.writable:
        raise TargetError(f"{target.label} is read-only", "patch a host, local or venv: target")
    payload = [
        {"path": c.path, "before_sha": c.before_sha256, "after_text": c.after, "mode": c.mode}
        for c in changes
    ]
    env = run_probe(
        target,
        "patchops",
        {
            "action": "write",
            "dist": dist,
            "changes": payload,
            "manifest": manifest,
            "lock_holder": _holder(command),
        },
    )
    return list(env.data.get("written") or [])


def apply_patches(
    target: Target,
    root: Path,
    *,
    dry_run: bool = False,
    force: bool = False,
    only: str | None = None,
    again: str = "",
) -> list[DistReport]:
    """All-or-nothing across every dist: any conflict or refusal means nothing is written.

    ``again``: the options that name this target and series on the command line
    (`` -t gpu``), for the commands that hints suggest.
    """
    try:
        reports = status(target, root, only=only, force=force)
    except KeyboardInterrupt:
        raise Interrupted(f"nothing written; see it with: harness patches{again}") from None
    blocked = [r for r in reports if r.plan is not None and not r.plan.ok]
    if dry_run:
        return reports
    for r in reports:
        if r.lock is not None:  # its half-swapped files would read as conflicts or hand edits
            raise PatchError(
                f"{target.label}: {r.root} is being patched by another harness: "
                f"{holder_text(r.lock)}; nothing was written",
                "wait for it to finish, then run `harness patches`",
            )
    stale = [
        (r.dist, p.id)
        for r in reports
        if r.plan is not None
        for p in r.plan.patches
        if p.state == STALE
    ]
    if stale:  # --force cannot help: the files hold the old change; the new text conflicts
        names = ", ".join(f"{d} {pid}" for d, pid in stale)
        raise StalePatch(
            f"nothing was written: {names} is applied from an older text of the patch "
            "(the patch file changed since it was applied)",
            f"`harness patches{again}` shows the change; to apply the new text run "
            f"`harness revert-patches{again}`, then `harness apply-patches{again}`",
        )
    if blocked:
        lines = []
        for r in blocked:
            assert r.plan is not None
            lines += list(r.plan.problems)
            for p in r.plan.patches:
                for c in p.conflicts:
                    lines.append(
                        f"{p.id}: {c['file']}: hunk {c['hunk']} (patch line "
                        f"{c['patch_line']}) does not match"
                    )
        hand = any(r.plan is not None and r.plan.problems for r in blocked)
        raise PatchConflict(
            "nothing was written: " + "; ".join(lines),
            "run `harness patches` for the expected vs found lines"
            + ("; --force patches files edited by hand" if hand else ""),
        )
    if only and reports and reports[0].plan is None:
        raise VersionMismatch(reports[0].note or "no series applies")
    # From here on a Ctrl-C waits for the writes: stopping between two dists (or while a
    # transaction is in flight) would leave the user not knowing what is applied.
    with DeferInterrupts() as ctrl_c:
        try:
            written_reports: list[DistReport] | None = _write_all(target, root, reports)
        except HarnessError:
            if not ctrl_c.asked:
                raise
            written_reports = None  # it failed after the Ctrl-C: read back what it left
    if ctrl_c.asked:
        if written_reports is not None:
            left = applied_line(written_reports)
        else:
            left = _settle(target, [r for r in reports if r.plan is not None and r.plan.changes])
        raise Interrupted(f"{left}; see it with: harness patches{again}")
    assert written_reports is not None
    return written_reports


def applied_line(reports: list[DistReport] | None) -> str:
    """What an apply run has left once its writes returned (``None``: none started)."""
    files = sum(len(r.written) for r in reports or [])
    if not files:
        return "nothing written"
    return f"the series is fully applied ({files} file(s) written)"


def _write_all(target: Target, root: Path, reports: list[DistReport]) -> list[DistReport]:
    written_reports = []
    for r in reports:
        if r.plan is None or not r.plan.changes:
            written_reports.append(r)
            continue
        series = load_series(root, r.dist, r.plan.series_version or "")
        assert series is not None
        state = read_state(target, r.dist, [c.path for c in r.plan.changes])
        manifest = new_manifest(r.plan, series, state.manifest)
        written = _write(target, r.dist, list(r.plan.changes), manifest, "apply-patches")
        written_reports.append(
            DistReport(
                r.dist, r.installed, r.series_versions, r.plan, r.hand_edited, r.recovered, written
            )
        )
    return written_reports


def _settle(target: Target, todo: list[DistReport]) -> str:
    """After a write failed following a Ctrl-C: read each dist back (which rolls back a
    transaction that died mid-swap) and say what is there."""
    outcomes = []
    for r in todo:
        assert r.plan is not None
        try:
            state = read_state(target, r.dist, [c.path for c in r.plan.changes])
        except HarnessError as e:
            return f"the writes were cut short and could not be read back ({e.message})"
        outcomes.append(
            Outcome(
                r.dist,
                applied=all(
                    state.live[c.path].sha256 == (None if c.after is None else sha(c.after))
                    for c in r.plan.changes
                ),
                untouched=all(state.live[c.path].sha256 == c.before_sha256 for c in r.plan.changes),
                rolled_back=bool(state.recovered and state.recovered.get("rolled_back")),
            )
        )
    return interrupted_line(outcomes)


def revert_patches(
    target: Target, root: Path, *, force: bool = False, only: str | None = None
) -> list[DistReport]:
    out = []
    for dist in _dists(root, only):
        probe = read_state(target, dist, [])
        files = sorted(probe.manifest.get("files") or {})
        if not files:
            out.append(
                DistReport(
                    dist, probe.version, [], None, [], probe.recovered, note="nothing to revert"
                )
            )
            continue
        state = read_state(target, dist, files)
        changes, problems = plan_revert(state.manifest, state.live, state.backups, force=force)
        if problems:
            raise PatchError(
                f"{target.label}: not reverting {dist}: " + "; ".join(problems),
                "nothing was written",
            )
        written = _write(target, dist, changes, {"files": {}}, "revert-patches")
        out.append(
            DistReport(
                dist,
                state.version,
                [],
                None,
                [],
                probe.recovered or state.recovered,
                written,
                note=f"restored {len(written)} file(s) byte-identical",
            )
        )
    return out


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
    "apply_patches",
    "file_modules",
    "read_state",
    "revert_patches",
    "sha",
    "status",
]
