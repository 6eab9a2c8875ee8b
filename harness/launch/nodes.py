"""The nodes of a run: each host's rank and address, what harness worked out for it, the
launch under way, and the hooks of a :class:`Spread` (its kinds: :mod:`harness.launch.spread`)
-- shared by the launch, the spreads and the Ray cluster one may own."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from harness.errors import RunError
from harness.group.result import run_each
from harness.runs.pipeline.steps import ResolvedStep, Step
from harness.runs.record.parts import GroupRecord
from harness.runs.target.context import Context
from harness.targets.base import Target

if TYPE_CHECKING:
    from harness.launch.events import RunEvent
    from harness.report.model import Review
    from harness.runs.pipeline.smoke import SmokePlan

T = TypeVar("T")


@dataclass(frozen=True)
class Request:
    """What ``harness run STEP`` was asked, besides where."""

    step: str
    overrides: dict[str, str]
    extra: Sequence[str] = ()
    pipeline_file: Path | None = None
    patches: Path | None = None
    kill_stale: bool = False
    force: bool = False
    require_smoke: bool = False
    require_verified: bool = False
    smoke: SmokePlan | None = None
    #: the services the step needs outlive it (``--keep-service``), for the next run to reuse
    keep_service: bool = False


@dataclass(frozen=True)
class Node:
    host: str
    rank: int
    address: str  # the inventory's address: what the other nodes reach this one at


@dataclass
class Host:
    """One node's open target and what harness worked out for it."""

    node: Node
    target: Target
    workdir: str
    ctx: Context
    resolved: ResolvedStep | None = None
    review: Review | None = None  # written into the run directory as review.json


@dataclass
class Launch:
    """One launch under way: what the spread's hooks read, and what they started."""

    run_id: str
    step: str
    spread: Spread
    hosts: list[Host]
    port: int | None
    pipeline: str
    on_event: Callable[[RunEvent], None]
    group: GroupRecord | None = None  # the run record's ``group`` (several hosts)
    cluster: list[str] = field(default_factory=list)  # runs that ``before`` started

    @property
    def nodes(self) -> list[Node]:
        return [h.node for h in self.hosts]

    @property
    def several(self) -> bool:
        return len(self.hosts) > 1

    def tag(self, h: Host) -> str | None:
        return h.node.host if self.several else None


class Spread:
    """One host: the step as written. The other kinds override what differs."""

    name: str | None = None
    #: the hosts must agree on their stack (one job over all of them)
    same_stack = False

    def port(self, spec: Step) -> int | None:
        return spec.port

    def builtins(self, nodes: Sequence[Node], node: Node) -> dict[str, str] | None:
        """This node's built-ins; ``None``: alone, node 0 of 1 and its own ``{head}``."""
        return None

    def prepare(
        self,
        h: Host,
        resolved: ResolvedStep,
        nodes: Sequence[Node],
        spec: Step,
        port: int,
        run_id: str,
    ) -> ResolvedStep:
        """The step as this node runs it (per node, before the review)."""
        return resolved

    def before(self, hosts: Sequence[Host], launch: Launch) -> None:
        """Start what the step runs on, before it launches; each run it starts goes into
        ``launch.cluster`` at once (so a failure half-way stops what did start)."""

    def step_hosts(self, hosts: Sequence[Host]) -> list[Host]:
        """The hosts that run the step itself (and are followed)."""
        return list(hosts)

    def step_env(self, resolved: ResolvedStep, nodes: Sequence[Node], port: int) -> ResolvedStep:
        return resolved

    def after(self, hosts: Sequence[Host], cluster: Sequence[str], launch: Launch) -> None:
        """Stop what :meth:`before` started (after the step, or when the launch failed)."""


def host_name(h: Host) -> str:
    return h.node.host


def each(
    items: Sequence[Any], name: Callable[[Any], str], fn: Callable[[Any], T], what: str
) -> dict[str, T]:
    """``fn`` on every item (host), concurrently; one host's error is raised as it is,
    several hosts' are one RunError naming each (and nothing goes on)."""
    if len(items) == 1:
        return {name(items[0]): fn(items[0])}
    by = {name(i): i for i in items}
    got = run_each(list(by), lambda n: fn(by[n]))
    if got.failed:
        raise RunError(
            f"{what} failed on " + "; ".join(f"{r.host}: {r.error}" for r in got.failed),
            got.failed[0].hint or "nothing was launched on any host",
        )
    return {r.host: r.unwrap() for r in got.results}
