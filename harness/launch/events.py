"""What ``harness run`` tells as it happens, on one host or several (each event names its host).

:func:`harness.launch.start.start_run` emits them through ``on_event``; the CLI renders each
as one or more lines (:mod:`harness.views.launch`). ``host`` is ``None`` when the run is on
one target: its lines then say nothing of hosts, as they always have.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.group.sameness import Sameness
    from harness.report.model import Review
    from harness.runs.pipeline.smoke import SmokePlan
    from harness.runs.record.models import RunInfo, Verdict
    from harness.runs.target.disk import Budget


@dataclass(frozen=True)
class Resolved:
    """The step and its command on the target; for a smoke run, where its outputs go."""

    step: str
    target: str
    command: str
    smoke: SmokePlan | None = None
    smoke_dir: str | None = None
    host: str | None = None
    rank: int | None = None  # this host's node number in a spread step


@dataclass(frozen=True)
class Reviewed:
    review: Review
    host: str | None = None


@dataclass(frozen=True)
class Compared:
    """Whether the hosts agree where one job over all of them needs them to."""

    sameness: Sameness


@dataclass(frozen=True)
class Forced:
    """Not ready, launched anyway (``--force``)."""


@dataclass(frozen=True)
class Preflighted:
    verdicts: tuple[Verdict, ...]
    host: str | None = None


@dataclass(frozen=True)
class ClusterUp:
    seconds: float
    nodes: str  # the cluster's own list of its nodes


@dataclass(frozen=True)
class ClusterStopped:
    seconds: float
    left: tuple[str, ...]  # hosts where it could not be stopped


@dataclass(frozen=True)
class Launched:
    run: RunInfo
    killed: tuple[int, ...]  # stale GPU holders ended first
    kill_remaining: tuple[int, ...]  # ... that survived SIGKILL
    host: str | None = None


@dataclass(frozen=True)
class Started:
    """The step runs on these hosts (a run over several)."""

    run_id: str
    hosts: tuple[str, ...]


@dataclass(frozen=True)
class ServiceUp:
    """A service the step needs is ready: started for it (``seconds`` to ready) or reused."""

    step: str
    run_id: str
    port: int | None
    reused: bool
    seconds: float | None = None


@dataclass(frozen=True)
class DiskChecked:
    """The step's disk budget, read on the target before it launched (``disk = {...}``)."""

    budget: Budget
    forced: bool = False  # it does not fit, and --force launches it anyway


RunEvent = (
    Resolved
    | Reviewed
    | Compared
    | Forced
    | Preflighted
    | ClusterUp
    | ClusterStopped
    | Launched
    | Started
    | ServiceUp
    | DiskChecked
)
