"""``harness report -t nodes``: each host's review, and whether the hosts are the same.

A multi-node run is ready only when every host is, and the hosts agree on what the run needs
to agree on (:mod:`harness.group.sameness`), the patch series' state included.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.group.result import GroupResult, run_each
from harness.group.sameness import Sameness, compare
from harness.models import TargetFacts


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


def series_state(review: Any) -> dict[str, str]:
    """Pure: ``{"speculators series": "12/12 applied (0001..0012)"}`` from one review."""
    out = {}
    for rep in review.patches or []:
        plan = rep.get("plan") or {}
        states = [p for p in plan.get("patches") or []]
        applied = [p["id"].split("-", 1)[0] for p in states if p["state"] == "applied"]
        span = f" ({applied[0]}..{applied[-1]})" if applied else ""
        out[f"{rep['dist']} series"] = f"{len(applied)}/{len(states)} applied{span}"
    return out


def build(hosts: tuple[str, ...], review_of: Callable[[str], Any]) -> GroupReview:
    got = run_each(hosts, review_of)
    ok = got.succeeded
    if not ok:
        return GroupReview(got, None)
    facts = {r.host: TargetFacts.from_dict(r.unwrap().facts or {}) for r in ok}
    extra: dict[str, dict[str, str | None]] = {}
    for r in ok:
        for what, value in series_state(r.unwrap()).items():
            extra.setdefault(what, {})[r.host] = value
    return GroupReview(got, compare(facts, extra=extra))
