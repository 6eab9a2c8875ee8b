"""What ``harness stop`` did: the run's processes signalled, the services stopped with it,
and the GPU holders left on the target."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.runs.record.models import GpuHolder, RunInfo


@dataclass(frozen=True)
class StopReport:
    """What ``harness stop`` did, and which GPU holders are left on the target."""

    run: RunInfo
    terminated: tuple[int, ...] = ()
    killed: tuple[int, ...] = ()
    remaining: tuple[int, ...] = ()
    holders: tuple[GpuHolder, ...] = ()
    already_finished: bool = False
    unwritten: tuple[str, ...] = ()  # records a full disk kept out (stop.json ...)
    #: the services the run had started and not kept, stopped with it: {"run_id", "remaining"...}
    services: tuple[dict[str, Any], ...] = ()
    gone: bool = False  # its run directory had been deleted while it ran

    def to_dict(self) -> dict[str, Any]:
        return {
            "gone": self.gone,
            "services": list(self.services),
            "unwritten": list(self.unwritten),
            "run": self.run.to_dict(),
            "terminated": list(self.terminated),
            "killed": list(self.killed),
            "remaining": list(self.remaining),
            "holders": [h.to_dict() for h in self.holders],
            "already_finished": self.already_finished,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> StopReport:
        return cls(
            run=RunInfo.from_dict(d.get("run") or {}),
            terminated=tuple(d.get("terminated") or ()),
            killed=tuple(d.get("killed") or ()),
            remaining=tuple(d.get("remaining") or ()),
            holders=tuple(GpuHolder.from_dict(h) for h in d.get("holders") or ()),
            already_finished=bool(d.get("already_finished")),
            unwritten=tuple(d.get("unwritten") or ()),
            services=tuple(d.get("services") or ()),
            gone=bool(d.get("gone")),
        )
