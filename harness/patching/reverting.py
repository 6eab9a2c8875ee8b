"""Reverting a series on the target: every dist's revert planned first (any refusal: nothing
written), then written through the transactional probe; a Ctrl-C once the writes began waits
for them, and the command then says in one line what it left."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import HarnessError, Interrupted, NoSpace, NotWritable, PatchError
from harness.interrupts import DeferInterrupts
from harness.patching.library import SeriesLibrary
from harness.patching.manifest import NONE
from harness.patching.ops import DistReport, installed_versions, read_state
from harness.patching.plan import FileChange, pip_reinstalled, plan_revert, sha
from harness.patching.writing import no_space_error, write_files
from harness.targets.base import Target


def revert_patches(
    target: Target,
    root: Path | SeriesLibrary,
    *,
    force: bool = False,
    only: str | None = None,
    again: str = "",
    forget: bool = False,
) -> list[DistReport]:
    """Every dist's revert planned first (any refusal: nothing written), then written.

    A Ctrl-C while reading leaves nothing written; once the writes have begun they finish
    (as ``apply-patches``' do) and the command then says in one line what it left.
    """
    absent: list[DistReport] = []
    try:
        dists = SeriesLibrary.of(root).chosen(only)
        if only is None and len(dists) > 1:  # a series for a dist this target lacks: said
            have = installed_versions(target, dists)
            gone = f"is not installed on {target.label}"
            absent = [
                DistReport(d, None, [], None, [], note=f"{d} {gone}")
                for d in dists
                if have.get(d) is None
            ]
            dists = [d for d in dists if have.get(d) is not None]
        planned = [_plan_revert(target, dist, force, forget, again) for dist in dists]
    except KeyboardInterrupt:
        raise Interrupted(f"nothing written; see it with: harness patches{again}") from None
    out: list[DistReport] | None = None
    with DeferInterrupts() as ctrl_c:
        done: list[DistReport] = []
        try:
            for p in planned:
                done.append(_revert_one(target, p))
            out = done + absent
        except (NoSpace, NotWritable) as e:
            where = p.state.root if p.state is not None else None
            left = _reverted(target, p.dist, list(p.changes))
            raise no_space_error(target, where, left, again, e) from None
        except HarnessError:
            if not ctrl_c.asked:
                raise
    if ctrl_c.asked:
        left = reverted_line(out) if out is not None else _reverted_all(target, planned)
        raise Interrupted(f"{left}; see it with: harness patches{again}")
    assert out is not None
    return out


@dataclass(frozen=True)
class _Revert:
    """One dist's revert, planned: its state as read, and the files to restore."""

    dist: str
    probe: Any  # the first read (for its version and what it recovered)
    state: Any = None  # None: nothing to revert
    changes: tuple[FileChange, ...] = ()
    forgotten: tuple[str, ...] = ()  # pip's files again, dropped from the manifest (--forget)


def _plan_revert(target: Target, dist: str, force: bool, forget: bool, again: str) -> _Revert:
    probe = read_state(target, dist, [])
    files = sorted(probe.manifest.files)
    if not files:
        return _Revert(dist, probe)
    state = read_state(target, dist, files)
    changes, problems = plan_revert(
        state.manifest, state.live, state.backups, force=force, forget=forget
    )
    pips = pip_reinstalled(state.manifest, state.live)
    if problems:
        hint = "nothing was written"
        if pips and not forget:
            hint += (
                f"; the files pip installed again are its own: `harness revert-patches "
                f"--forget{again}` drops harness's record of them and writes none of them"
            )
        raise PatchError(f"{target.label}: not reverting {dist}: " + "; ".join(problems), hint)
    return _Revert(dist, probe, state, tuple(changes), tuple(pips) if forget else ())


def _revert_one(target: Target, p: _Revert) -> DistReport:
    if p.state is None:
        return DistReport(
            p.dist, p.probe.version, [], None, [], p.probe.recovered, note="nothing to revert"
        )
    written = write_files(target, p.dist, list(p.changes), NONE, "revert-patches")
    note = f"restored {len(written)} file(s) byte-identical"
    if p.forgotten:
        note += f"; forgot {len(p.forgotten)} file(s) pip installed again (left as pip's)"
    return DistReport(
        p.dist,
        p.state.version,
        [],
        None,
        [],
        p.probe.recovered or p.state.recovered,
        written,
        note=note,
    )


def reverted_line(reports: list[DistReport] | None) -> str:
    """What a revert run has left once its writes returned (``None``: none started)."""
    files = sum(len(r.written) for r in reports or [])
    if not files:
        return "nothing written"
    return f"the series is reverted ({files} file(s) restored byte-identical)"


def _reverted_all(target: Target, planned: list[_Revert]) -> str:
    """After a revert write failed following a Ctrl-C: each dist read back, said."""
    return "; ".join(_reverted(target, p.dist, list(p.changes)) for p in planned if p.changes)


def _reverted(target: Target, dist: str, changes: list[FileChange]) -> str:
    """After a revert met a full disk: read back (which rolls back a half-done one)."""
    try:
        live = read_state(target, dist, [c.path for c in changes]).live
    except HarnessError as e:
        return f"the revert was cut short and could not be read back ({e.message})"
    if all(live[c.path].sha256 == c.before_sha256 for c in changes):
        return f"nothing written: the {dist} series is still fully applied"
    if all(live[c.path].sha256 == (None if c.after is None else sha(c.after)) for c in changes):
        return f"the {dist} series is reverted"
    return f"the {dist} series is partly reverted"
