"""The texts the series leave on a target: the one thing ``check --with-patches``, ``--fix``
and ``report`` ask of a series state. Pure.

A check "with the patches" scans these texts in place of the installed files, so it sees
the environment as ``apply-patches`` would leave it without writing anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from packaging.utils import canonicalize_name

if TYPE_CHECKING:
    from harness.patching.ops import DistReport
    from harness.patching.plan import Plan


@dataclass(frozen=True)
class Overlay:
    """Per dist, each file the series would change -> its text after the series.

    Attributes:
        leaves: dist -> path relative to site-packages -> the text the series leaves
            (None: the series deletes the file).
        roots: dist -> its site-packages on the target.
        notes: which patches were used, and what could not be overlaid (for the check's notes).
    """

    leaves: Mapping[str, Mapping[str, str | None]] = field(default_factory=dict)
    roots: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def texts(self) -> dict[str, str]:
        """Absolute path on the target -> text: what the callsites probe takes as overrides."""
        return {
            f"{self.roots[d]}/{rel}": text
            for d, files in self.leaves.items()
            if self.roots.get(d)
            for rel, text in files.items()
            if text is not None
        }

    def of(self, dist: str) -> dict[str, str | None]:
        """What ``dist``'s series leaves, by path relative to site-packages."""
        want = canonicalize_name(dist)
        return {
            rel: text
            for d, files in self.leaves.items()
            if canonicalize_name(d) == want
            for rel, text in files.items()
        }

    def without(self, dist: str) -> Overlay:
        """The other dists' series only (``--fix`` reads its caller's files itself)."""
        want = canonicalize_name(dist)
        return Overlay(
            {d: f for d, f in self.leaves.items() if canonicalize_name(d) != want},
            {d: r for d, r in self.roots.items() if canonicalize_name(d) != want},
            self.notes,
        )


def series_note(dist: str, plan: Plan) -> str:
    """Pure: which patches ``--with-patches`` checked with, and why the others were left out."""
    used = [p.id for p in plan.patches if p.state.usable]
    left = [
        f"{p.id} ({p.state}: {p.detail})" if p.detail else f"{p.id} ({p.state})"
        for p in plan.patches
        if not p.state.usable
    ]
    text = f"--with-patches: {dist} {plan.series_version} series: with {', '.join(used) or 'none'}"
    return text + (f"; without {', '.join(left)}" if left else "")


def overlay(reports: Sequence[DistReport]) -> Overlay:
    """Pure: what the series in ``reports`` (``harness patches``' state) leave, with notes."""
    leaves: dict[str, dict[str, str | None]] = {}
    roots: dict[str, str] = {}
    notes: list[str] = []
    for r in reports:
        if r.plan is None:
            notes.append(f"--with-patches: {r.note}")
            continue
        if not r.plan.ok:
            notes.append(
                f"--with-patches: the {r.dist} series does not apply cleanly; "
                "checked without the conflicting patches"
            )
        notes.append(series_note(r.dist, r.plan))
        leaves[r.dist] = r.leaves()
        if r.root:
            roots[r.dist] = r.root
    return Overlay(leaves, roots, tuple(notes))


__all__ = ["Overlay", "overlay", "series_note"]
