"""Writing a series to the target: all-or-nothing, through the transactional probe.

Everything is read and planned first (:mod:`harness.patching.ops`); any conflict or refusal
means nothing is written. A Ctrl-C before the writes leaves nothing written; once they have
begun they finish (stopping between two dists would leave a half-applied series) and the
command then says in one line what it left.
"""

from __future__ import annotations

import getpass
import os
import socket
from pathlib import Path
from typing import Any

from harness.errors import (
    HarnessError,
    Interrupted,
    NoSpace,
    NotWritable,
    PatchConflict,
    PatchError,
    StalePatch,
    TargetError,
    VersionMismatch,
)
from harness.interrupts import DeferInterrupts
from harness.patching.library import SeriesLibrary
from harness.patching.manifest import Manifest
from harness.patching.ops import DistReport, holder_text, read_state, status
from harness.patching.plan import (
    STALE,
    FileChange,
    new_manifest,
    sha,
)
from harness.patching.states import Outcome, interrupted_line
from harness.probe_runner import run_probe
from harness.targets.base import Target


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


def write_files(
    target: Target,
    dist: str,
    changes: list[FileChange],
    manifest: Manifest,
    command: str,
    originals: dict[str, str] | None = None,
) -> list[str]:
    """One patchops transaction: the files, their backups and the manifest, or nothing.

    ``originals``: the pristine text to back up for a file harness has not patched yet,
    where the live file is not it (make-patch adopting hand edits).
    """
    if not target.writable:
        raise TargetError(f"{target.label} is read-only", "patch a host, local or venv: target")
    payload: list[dict[str, Any]] = [
        {"path": c.path, "before_sha": c.before_sha256, "after_text": c.after, "mode": c.mode}
        for c in changes
    ]
    for item in payload:
        if originals and item["path"] in originals:
            item["original_text"] = originals[item["path"]]
    env = run_probe(
        target,
        "patchops",
        {
            "action": "write",
            "dist": dist,
            "changes": payload,
            "manifest": manifest.to_json(),
            "lock_holder": _holder(command),
        },
    )
    return list(env.data.get("written") or [])


def apply_patches(
    target: Target,
    root: Path | SeriesLibrary,
    *,
    dry_run: bool = False,
    force: bool = False,
    only: str | None = None,
    again: str = "",
    check_only: bool = False,
) -> list[DistReport]:
    """All-or-nothing across every dist: any conflict or refusal means nothing is written.

    ``again``: the options that name this target and series on the command line
    (`` -t gpu``), for the commands that hints suggest. ``check_only``: every refusal is
    raised as it would be, and nothing is written -- the prepare phase across hosts.
    """
    library = SeriesLibrary.of(root)
    try:
        reports = status(target, library, only=only, force=force)
    except KeyboardInterrupt:
        raise Interrupted(f"nothing written; see it with: harness patches{again}") from None
    if dry_run:
        return reports
    refuse_unsafe(target, reports, again)
    if only and reports and reports[0].plan is None:
        raise VersionMismatch(reports[0].note or "no series applies")
    if check_only:
        return reports
    # From here on a Ctrl-C waits for the writes: stopping between two dists (or while a
    # transaction is in flight) would leave the user not knowing what is applied.
    with DeferInterrupts() as ctrl_c:
        try:
            written_reports: list[DistReport] | None = _write_all(target, library, reports)
        except (NoSpace, NotWritable) as e:
            todo = [r for r in reports if r.plan is not None and r.plan.changes]
            raise no_space_error(target, todo[0].root, _settle(target, todo), again, e) from None
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


def refuse_unsafe(target: Target, reports: list[DistReport], again: str = "") -> None:
    """Raise when any dist cannot be written as planned: another harness is patching it, a
    patch is applied from an older text, or a hunk conflicts / a file is missing or edited by
    hand (``--force`` aside) -- so that nothing is written."""
    blocked = [r for r in reports if r.plan is not None and not r.plan.ok]
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
                lines += [f"{p.id}: {f} is missing on the target" for f in p.missing]
                for c in p.conflicts:
                    lines.append(
                        f"{p.id}: {c.file}: hunk {c.hunk} (patch line {c.patch_line}) "
                        "does not match"
                    )
        hand = any(r.plan is not None and r.plan.problems for r in blocked)
        gone = any(p.missing for r in blocked if r.plan is not None for p in r.plan.patches)
        raise PatchConflict(
            "nothing was written: " + "; ".join(lines),
            "run `harness patches` for the expected vs found lines"
            + ("; --force patches files edited by hand" if hand else "")
            + (
                "; put a missing file back with pip install --force-reinstall --no-deps "
                f"{blocked[0].dist}=={blocked[0].installed}"
                if gone
                else ""
            ),
        )


def no_space_error(
    target: Target, where: str | None, left: str, again: str = "", e: Exception | None = None
) -> PatchError:
    """A write that met a full disk (or a read-only one, no permission: ``e``): where, and
    what it left (read back, rolled back)."""
    if isinstance(e, NotWritable):
        return PatchError(
            f"{target.label}: cannot write {e.path or where} ({e.reason}): {left}",
            f"{e.hint}; see the state with: harness patches{again}",
        )
    disk = f" that holds {where}" if where else ""
    return PatchError(
        f"{target.label}: no space left on the disk{disk}: {left}",
        f"free space there (df -h {where or '...'}), then run the command again; "
        f"see the state with: harness patches{again}",
    )


def applied_line(reports: list[DistReport] | None) -> str:
    """What an apply run has left once its writes returned (``None``: none started)."""
    files = sum(len(r.written) for r in reports or [])
    if not files:
        return "nothing written"
    return f"the series is fully applied ({files} file(s) written)"


def _write_all(
    target: Target, library: SeriesLibrary, reports: list[DistReport]
) -> list[DistReport]:
    written_reports = []
    for r in reports:
        if r.plan is None or not r.plan.changes:
            written_reports.append(r)
            continue
        series = library.series_for(r.dist, r.plan.series_version or "")
        assert series is not None
        state = read_state(target, r.dist, [c.path for c in r.plan.changes])
        manifest = new_manifest(r.plan, series, state.manifest)
        written = write_files(target, r.dist, list(r.plan.changes), manifest, "apply-patches")
        written_reports.append(
            DistReport(
                r.dist,
                r.installed,
                r.series_versions,
                r.plan,
                r.hand_edited,
                r.recovered,
                written,
                warnings=r.warnings,
                series_dir=r.series_dir,
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


__all__ = ["applied_line", "apply_patches", "no_space_error", "write_files"]
