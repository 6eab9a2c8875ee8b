"""``harness report -t nodes``: each host's review, and whether the hosts are the same.

A multi-node run is ready only when every host is, and the hosts agree on what the run needs
to agree on (:mod:`harness.group.sameness`), the patch series' state included.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.group.result import GroupResult, run_each
from harness.group.sameness import Sameness, compare

if TYPE_CHECKING:
    from harness.report.model import Review


@dataclass(frozen=True)
class GroupReview:
    reviews: GroupResult[Any]  # host -> harness.report.model.Review
    sameness: Sameness | None

    @property
    def blockers(self) -> list[str]:
        out = [f"{r.host}: {r.error}" for r in self.reviews.failed]
        out += [f"{r.host}: not ready" for r in self.reviews.succeeded if not r.unwrap().ready]
        return out + (self.sameness.blockers if self.sameness else [])

    @property
    def ready(self) -> bool:
        return not self.blockers

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": "ready" if self.ready else "not ready",
            "blockers": self.blockers,
            "hosts": {
                r.host: r.unwrap().to_dict() if r.ok else {"error": r.error, "hint": r.hint}
                for r in self.reviews.results
            },
        }


def series_state(review: Review) -> dict[str, str]:
    """Pure: ``{"speculators series": "12/12 applied (0001..0012)"}`` from one review."""
    out = {}
    for series in review.patches:
        if series.patches is None:  # nothing planned: no series for what is installed
            continue
        applied = [p.split("-", 1)[0] for p in series.applied]
        span = f" ({applied[0]}..{applied[-1]})" if applied else ""
        out[f"{series.dist} series"] = f"{len(applied)}/{len(series.patches)} applied{span}"
    return out


def build(hosts: tuple[str, ...], review_of: Callable[[str], Any]) -> GroupReview:
    got = run_each(hosts, review_of)
    ok = got.succeeded
    if not ok:
        return GroupReview(got, None)
    facts = {r.host: f for r in ok if (f := r.unwrap().facts) is not None}
    extra: dict[str, dict[str, str | None]] = {}
    for r in ok:
        for what, value in series_state(r.unwrap()).items():
            extra.setdefault(what, {})[r.host] = value
    return GroupReview(got, compare(facts, extra=extra))
