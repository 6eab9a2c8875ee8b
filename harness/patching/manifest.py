"""The patch manifest: what harness applied to one dist on a target, read and written typed.

It is the durable state on every target (``<site-packages>/.harness-patches/manifest.json``,
one entry per dist, written by ``probes/patching/patchops.py``): which patches are applied and, per
file, the hashes that make a revert exact. It is parsed once, where patchops' answer arrives
(:func:`Manifest.from_json`), and serialized back to the very JSON it came from
(:meth:`Manifest.to_json`): manifests written by any earlier harness keep loading, and one
written now reads the same to them.

On disk a few meanings hide in values; here they are fields: ``pristine_sha256: null`` is
:attr:`Origin.CREATED`, ``after_sha256: null`` is :attr:`FileRecord.deleted`, a missing
``content_sha256``/``text`` is an older harness's record (compared by the whole text).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import Any


class Origin(Enum):
    """Where a file harness changed came from: what ``revert-patches`` puts back."""

    #: pip installed it (or make-patch's base): its backup holds the pristine bytes.
    INSTALLED = "installed"
    #: a ``/dev/null`` patch created it: reverting deletes it, there is no backup.
    CREATED = "created"


@dataclass(frozen=True)
class FileRecord:
    """One file harness changed: enough to know it is still ours and to restore it."""

    origin: Origin
    pristine_sha256: str | None  # INSTALLED: the backup's digest; CREATED: None
    after_sha256: str | None  # what harness wrote; None: the series deleted the file
    mode: int | None
    #: ``apply --force`` over a hand-edited file: pip's RECORD digest at the time (the
    #: backup then holds the hand edit, which is what a revert restores).
    forced_record_sha256: str | None = None

    @property
    def deleted(self) -> bool:
        return self.after_sha256 is None

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> FileRecord:
        created = "pristine_sha256" in d and d["pristine_sha256"] is None
        return cls(
            Origin.CREATED if created else Origin.INSTALLED,
            d.get("pristine_sha256"),
            d.get("after_sha256"),
            d.get("mode"),
            d.get("record_sha256"),
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.origin is Origin.CREATED or self.pristine_sha256 is not None:
            out["pristine_sha256"] = self.pristine_sha256
        if self.forced_record_sha256 is not None:
            out["record_sha256"] = self.forced_record_sha256
        out["after_sha256"] = self.after_sha256
        out["mode"] = self.mode
        return out


@dataclass(frozen=True)
class AppliedPatch:
    """A patch recorded as applied, with the text it was applied from (when recorded)."""

    id: str
    sha256: str | None  # of the whole patch text
    content_sha256: str | None = None  # of what it does; None: an older harness wrote it
    text: str | None = None  # None: an older harness did not record the text

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> AppliedPatch:
        return cls(d["id"], d.get("sha256"), d.get("content_sha256"), d.get("text"))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id}
        for key in ("sha256", "content_sha256", "text"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


def _frozen(files: Mapping[str, FileRecord]) -> Mapping[str, FileRecord]:
    return MappingProxyType(dict(files))


@dataclass(frozen=True)
class Manifest:
    """One dist's manifest; :data:`NONE` (``{}`` on the wire) when harness applied nothing."""

    dist: str | None = None
    version: str | None = None
    series: str | None = None  # "dist/version" of the series folder
    applied: tuple[AppliedPatch, ...] = ()
    files: Mapping[str, FileRecord] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        if not isinstance(self.files, MappingProxyType):
            object.__setattr__(self, "files", _frozen(self.files))

    @property
    def applied_ids(self) -> frozenset[str]:
        return frozenset(a.id for a in self.applied)

    def record_of(self, patch_id: str) -> AppliedPatch | None:
        return next((a for a in self.applied if a.id == patch_id), None)

    def after_sha256(self, path: str) -> str | None:
        """What harness wrote to ``path``; None when harness never wrote it (or deleted it)."""
        entry = self.files.get(path)
        return None if entry is None else entry.after_sha256

    def created(self) -> frozenset[str]:
        """Files harness created for this dist (a ``/dev/null`` patch)."""
        return frozenset(p for p, e in self.files.items() if e.origin is Origin.CREATED)

    def with_files(
        self,
        files: Mapping[str, FileRecord],
        now: Iterable[AppliedPatch],
        *,
        dist: str | None,
        version: str | None,
        series: str | None,
    ) -> Manifest:
        """Pure: this manifest with ``files`` and the patches applied ``now`` recorded,
        replacing any record of an earlier text of the same patch."""
        now = tuple(now)
        ids = {a.id for a in now}
        applied = tuple(a for a in self.applied if a.id not in ids) + now
        return Manifest(dist, version, series, applied, files)

    @classmethod
    def from_json(cls, d: Mapping[str, Any] | None) -> Manifest:
        """The edge: patchops' JSON (``{}`` or null for none) to the typed manifest."""
        d = d or {}
        return cls(
            d.get("dist"),
            d.get("version"),
            d.get("series"),
            tuple(AppliedPatch.from_json(a) for a in d.get("applied") or ()),
            {p: FileRecord.from_json(e) for p, e in (d.get("files") or {}).items()},
        )

    def to_json(self) -> dict[str, Any]:
        """The JSON patchops stores, key for key as harness always wrote it."""
        if self == NONE:
            return {}
        return {
            "dist": self.dist,
            "version": self.version,
            "series": self.series,
            "applied": [a.to_json() for a in self.applied],
            "files": {p: e.to_json() for p, e in self.files.items()},
        }


#: No manifest: harness applied nothing to this dist (or reverted it all).
NONE = Manifest()


@dataclass(frozen=True)
class Backup:
    """The pristine copy patchops keeps of a file harness changed."""

    sha256: str
    text: str

    @classmethod
    def from_json(cls, d: Mapping[str, Any] | None) -> Backup | None:
        return None if not d else cls(d["sha256"], d["text"])


__all__ = ["NONE", "AppliedPatch", "Backup", "FileRecord", "Manifest", "Origin"]
