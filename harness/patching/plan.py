"""Plan a patch series against the live files: per-patch state and every file's result. Pure.

Everything is computed in memory before anything is written, so a conflict in the third file
of the fifth patch means nothing at all changes on the target.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from harness.patching.diffs import ApplyResult, apply, is_applied, unified
from harness.patching.manifest import AppliedPatch, Backup, FileRecord, Manifest, Origin
from harness.patching.series import PatchSpec, Series, requirement_problem
from harness.patching.states import Status

APPLIED, APPLIES, CONFLICTS = Status.APPLIED, Status.APPLIES, Status.CONFLICTS
SKIPPED, BY_HAND, STALE = Status.SKIPPED, Status.BY_HAND, Status.STALE


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class LiveFile:
    """A file as read on the target."""

    path: str
    text: str | None  # None: missing (or not UTF-8, see ``binary``)
    sha256: str | None
    mode: int | None = None
    record_sha256: str | None = None  # what pip installed
    binary: bool = False


@dataclass(frozen=True)
class Conflict:
    """A hunk that does not match the live file: where, and the lines expected vs found."""

    file: str
    hunk: str  # its @@ header
    patch_line: int
    expected: str
    found: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "hunk": self.hunk,
            "patch_line": self.patch_line,
            "expected": self.expected,
            "found": self.found,
        }


@dataclass(frozen=True)
class PatchState:
    id: str
    why: str
    state: Status
    detail: str = ""
    conflicts: tuple[Conflict, ...] = ()
    offsets: tuple[str, ...] = ()  # "file: hunk at line N (offset +k)"
    #: STALE only: unified diff from the text that was applied to the series' text now
    #: (empty when an older harness applied it without recording the text).
    text_diff: str = ""
    missing: tuple[str, ...] = ()  # CONFLICTS: files it changes that are not there (deleted)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "why": self.why,
            "state": self.state.value,
            "detail": self.detail,
            "conflicts": [c.to_dict() for c in self.conflicts],
            "offsets": list(self.offsets),
            "text_diff": self.text_diff,
            "missing": list(self.missing),
        }


@dataclass(frozen=True)
class FileChange:
    path: str
    before: str | None
    after: str | None
    before_sha256: str | None
    mode: int | None
    record_sha256: str | None = None  # pip's RECORD hash when the change was planned

    def diff(self) -> str:
        return unified(self.path, self.before or "", self.after or "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "before_sha256": self.before_sha256,
            "after_sha256": sha(self.after) if self.after is not None else None,
            "diff": self.diff(),
        }


@dataclass(frozen=True)
class Plan:
    dist: str
    version: str | None
    series_version: str | None
    patches: tuple[PatchState, ...]
    changes: tuple[FileChange, ...]
    problems: tuple[str, ...] = ()  # refusals that are not conflicts (hand edits, paths)
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return not self.problems and all(p.state != CONFLICTS for p in self.patches)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dist": self.dist,
            "version": self.version,
            "series_version": self.series_version,
            "ok": self.ok,
            "patches": [p.to_dict() for p in self.patches],
            "changes": [c.to_dict() for c in self.changes],
            "problems": list(self.problems),
            "notes": list(self.notes),
        }


def _conflicts(r: ApplyResult) -> list[Conflict]:
    return [
        Conflict(r.path, h.hunk.header, h.hunk.patch_line, "".join(h.expected), "".join(h.found))
        for h in r.conflicts
    ]


def plan_apply(
    series: Series,
    live: dict[str, LiveFile],
    installed: dict[str, str | None],
    manifest: Manifest,
    *,
    force: bool = False,
) -> Plan:
    """What applying ``series`` would do to ``live`` files (every file of every patch)."""
    texts: dict[str, str | None] = {p: f.text for p, f in live.items()}
    states: list[PatchState] = []
    problems: list[str] = []
    for spec in series.patches:
        why_not = requirement_problem(spec, installed)
        if why_not:
            states.append(PatchState(spec.id, spec.why, SKIPPED, why_not))
            continue
        record = manifest.record_of(spec.id)
        if record is not None and all(
            manifest.after_sha256(fp.path) == live[fp.path].sha256 for fp in spec.files
        ):
            if same_change(record, spec):
                states.append(PatchState(spec.id, spec.why, APPLIED))
                continue
            states.append(stale_state(record, spec))
            problems.append(
                f"{spec.id} is applied from an older text of {spec.file.name}: the files hold "
                "the old change (revert-patches, then apply-patches)"
            )
            continue
        results = [apply(fp, texts.get(fp.path)) for fp in spec.files]
        conflicts = [c for r in results for c in _conflicts(r)]
        if conflicts:
            if all(is_applied(fp, texts.get(fp.path)) for fp in spec.files):
                states.append(
                    PatchState(spec.id, spec.why, BY_HAND, "the files already contain this change")
                )
                continue
            gone = _missing(spec, texts, live)
            rest = tuple(c for c in conflicts if c.file not in gone)
            words = [f"{', '.join(gone)} missing on the target"] if gone else []
            detail = "; ".join(words + [f"{len(rest)} hunk(s) do not match"] * bool(rest))
            states.append(PatchState(spec.id, spec.why, CONFLICTS, detail, rest, missing=gone))
            continue
        offsets = tuple(
            f"{r.path}: hunk {h.hunk.header} at line {h.applied_at} (offset {h.offset:+d})"
            for r in results
            for h in r.hunks
            if h.offset
        )
        for fp, r in zip(spec.files, results, strict=True):
            texts[r.path] = None if fp.deleted else r.new_text  # None: the file goes
        states.append(PatchState(spec.id, spec.why, APPLIES, "", (), offsets))
    changes = []
    for path, f in sorted(live.items()):
        after = texts.get(path)
        if after == f.text:
            continue
        if f.binary:
            problems.append(f"{path}: not UTF-8 text; harness patches text files only")
        pristine = f.record_sha256 is None or f.sha256 == f.record_sha256
        ours = manifest.after_sha256(path) == f.sha256
        if not pristine and not ours and not force:
            problems.append(
                f"{path}: differs from what pip installed (RECORD) and was not "
                "patched by harness: edited by hand? (--force to patch anyway)"
            )
        changes.append(FileChange(path, f.text, after, f.sha256, f.mode, f.record_sha256))
    return Plan(
        series.dist,
        installed.get(series.dist),
        series.version,
        tuple(states),
        tuple(changes),
        tuple(problems),
    )


def _missing(
    spec: PatchSpec, texts: Mapping[str, str | None], live: Mapping[str, LiveFile]
) -> tuple[str, ...]:
    """The files ``spec`` changes (not creates) that are not there: deleted by hand."""
    return tuple(
        fp.path
        for fp in spec.files
        if texts.get(fp.path) is None
        and not fp.new_file
        and not getattr(live.get(fp.path), "binary", False)
    )


def same_change(record: AppliedPatch, spec: PatchSpec) -> bool:
    """Pure: does the manifest's record of an applied patch describe ``spec``'s change?

    Compared by what the patch does when the manifest says (``content_sha256``), so an
    edited description is not a new patch; by the whole text for older manifests.
    """
    if record.content_sha256:
        return record.content_sha256 == spec.content_sha256
    return record.sha256 == spec.sha256


def stale_state(record: AppliedPatch, spec: PatchSpec) -> PatchState:
    """Pure: the STALE state of ``spec``, with the diff from the text that was applied."""
    old = record.text
    if isinstance(old, str):
        diff = "".join(
            line if line.endswith("\n") else line + "\n"
            for line in difflib.unified_diff(
                old.splitlines(keepends=True),
                spec.text.splitlines(keepends=True),
                f"applied/{spec.file.name}",
                f"series/{spec.file.name}",
            )
        )
        detail = f"{spec.file.name} changed since it was applied"
    else:
        diff = ""
        detail = (
            f"{spec.file.name} changed since it was applied (sha256 "
            f"{str(record.sha256)[:12]} then, {spec.sha256[:12]} now; the applied "
            "text was not recorded)"
        )
    return PatchState(spec.id, spec.why, STALE, detail, text_diff=diff)


def _first_record(pristine: str | None, record_sha256: str | None = None) -> FileRecord:
    """A file harness changes for the first time (``pristine`` None: it creates it)."""
    origin = Origin.INSTALLED if pristine is not None else Origin.CREATED
    return FileRecord(origin, pristine, None, None, record_sha256)


def new_manifest(plan: Plan, series: Series, old: Manifest) -> Manifest:
    """Pure: the manifest after ``plan`` is written (pristine shas kept from the first apply)."""
    files = dict(old.files)
    for c in plan.changes:
        forced = c.record_sha256 if c.record_sha256 not in (None, c.before_sha256) else None
        entry = files.get(c.path) or _first_record(c.before_sha256, forced)  # forced: RECORD then
        after = sha(c.after) if c.after is not None else None
        files[c.path] = replace(entry, after_sha256=after, mode=c.mode)
    by_id = {s.id: s for s in series.patches}
    now = [by_id[p.id] for p in plan.patches if p.state == APPLIES]
    return _manifest(old, plan.dist, plan.version, f"{series.dist}/{series.version}", files, now)


def adopted_manifest(
    old: Manifest,
    live: Mapping[str, LiveFile],
    bases: Mapping[str, str],
    spec: PatchSpec,
    dist: str,
    version: str,
) -> Manifest:
    """Pure: the manifest once ``make-patch`` records hand edits as ``spec`` applied.

    A file harness had patched keeps its pristine sha (its backup stays); a file it had not
    gets the base's (the wheel's file, which becomes its backup). Either way what is there
    now is what harness wrote.
    """
    files = dict(old.files)
    for path in bases:
        entry = files.get(path) or _first_record(sha(bases[path]))
        files[path] = replace(entry, after_sha256=live[path].sha256, mode=live[path].mode)
    return _manifest(old, dist, version, old.series or f"{dist}/{version}", files, [spec])


def _manifest(
    old: Manifest,
    dist: str,
    version: str | None,
    series: str,
    files: dict[str, FileRecord],
    now: list[PatchSpec],
) -> Manifest:
    """The manifest's envelope. A patch applied now is recorded with the text it was applied
    from, replacing any record of an earlier text (e.g. before a reinstall put the pristine
    file back): when the series' copy changes later, `patches` can say so and show how."""
    records = [AppliedPatch(s.id, s.sha256, s.content_sha256, s.text) for s in now]
    return old.with_files(files, records, dist=dist, version=version, series=series)


def plan_revert(
    manifest: Manifest,
    live: dict[str, LiveFile],
    backups: Mapping[str, Backup | None],
    *,
    force: bool = False,
    forget: bool = False,
) -> tuple[list[FileChange], list[str]]:
    """Pure: restore every file harness changed, byte-identical, or say why not.
    ``forget``: a file pip installed again since (:func:`pip_reinstalled`) is left as it is."""
    changes: list[FileChange] = []
    problems: list[str] = []
    pips = set(pip_reinstalled(manifest, live))
    for path, entry in sorted(manifest.files.items()):
        f = live.get(path)
        if f is None:
            problems.append(f"{path}: not readable on the target")
            continue
        if path in pips and (forget or not force):
            continue
        if f.sha256 != entry.after_sha256 and not force:
            gone = f.sha256 is None and not f.binary  # deleted by hand: said so
            problems.append(
                f"{path}: missing (deleted by hand?); --force restores the original"
                if gone
                else f"{path}: changed since harness patched it (reinstalled or edited?)"
                "; refusing to clobber it (--force restores the original anyway)"
            )
            continue
        if entry.origin is Origin.CREATED:  # a /dev/null patch: reverting deletes it
            changes.append(FileChange(path, f.text, None, f.sha256, entry.mode))
            continue
        b = backups.get(path)
        if b is None or b.sha256 != entry.pristine_sha256:
            problems.append(f"{path}: the backup is missing or does not match the manifest")
            continue
        # apply --force patched a hand-edited file and nothing was installed since: its
        # original *is* that hand-edited file, which the backup holds
        forced = (
            entry.forced_record_sha256 is not None and entry.forced_record_sha256 == f.record_sha256
        )
        if f.record_sha256 and b.sha256 != f.record_sha256 and not forced:
            problems.append(f"{path}: the backup does not match pip's RECORD")
            continue
        changes.append(FileChange(path, f.text, b.text, f.sha256, entry.mode))
    if pips and not (forget or force):
        problems.append(
            f"{', '.join(sorted(pips))}: pip's own again (installed since harness patched "
            "them): nothing of harness's is left there to restore"
        )
    return changes, problems


def pip_reinstalled(manifest: Manifest, live: Mapping[str, LiveFile]) -> list[str]:
    """Pure: files harness patched that pip installed again since (no longer what harness
    wrote, exactly what RECORD says): pip's files now, not harness's."""
    return [
        p
        for p, e in sorted(manifest.files.items())
        if (f := live.get(p))
        and f.sha256 not in (None, e.after_sha256)
        and f.record_sha256 == f.sha256
    ]
