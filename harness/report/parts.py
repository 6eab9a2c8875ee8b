"""What the review shows of each dist's patch series: its state per patch, diffs, hand edits.

A :class:`SeriesView` is read from ``harness patches``' report of one dist (its JSON record,
kept as is so the review's ``--format json`` carries the whole report) into the typed fields
the verdict and the renderers use.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.patching.states import Status

if TYPE_CHECKING:
    from harness.patching.ops import DistReport


@dataclass(frozen=True)
class PatchLine:
    id: str
    state: Status
    why: str = ""
    detail: str = ""


@dataclass(frozen=True)
class FileDiff:
    path: str
    diff: str  # against the live file


@dataclass(frozen=True)
class SeriesView:
    """One dist's series on the target; ``patches`` is ``None`` when nothing was planned."""

    dist: str
    installed: str | None
    note: str | None = None
    hand_edited: tuple[str, ...] = ()
    patches: tuple[PatchLine, ...] | None = None
    changes: tuple[FileDiff, ...] = ()
    problems: tuple[str, ...] = ()
    record: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def applied(self) -> list[str]:
        return [p.id for p in self.patches or () if p.state == Status.APPLIED]

    @property
    def pending(self) -> list[str]:
        """What ``apply-patches`` would write."""
        return [p.id for p in self.patches or () if p.state.pending]

    def to_dict(self) -> dict[str, Any]:
        return dict(self.record)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SeriesView:
        plan = d.get("plan")
        return cls(
            dist=d["dist"],
            installed=d.get("installed"),
            note=d.get("note"),
            hand_edited=tuple(d.get("hand_edited") or ()),
            patches=None
            if not plan
            else tuple(
                PatchLine(p["id"], Status(p["state"]), p.get("why", ""), p.get("detail", ""))
                for p in plan.get("patches") or ()
            ),
            changes=tuple(
                FileDiff(c["path"], c["diff"]) for c in (plan or {}).get("changes") or ()
            ),
            problems=tuple((plan or {}).get("problems") or ()),
            record=dict(d),
        )

    @classmethod
    def from_report(cls, report: DistReport) -> SeriesView:
        return cls.from_dict(report.to_dict())
