"""The nodes of a run: each host's rank and address, what harness worked out for it, and the
launch under way (shared by the launch, the spreads' hooks and the Ray cluster one may own)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.runs.steps import ResolvedStep

if TYPE_CHECKING:
    from harness.group.events import RunEvent


@dataclass(frozen=True)
class Node:
    host: str
    rank: int
    address: str  # the inventory's address: what the other nodes reach this one at


@dataclass
class Host:
    """One node's open target and what harness worked out for it."""

    node: Node
    target: Any
    workdir: str
    ctx: Any
    resolved: ResolvedStep | None = None
    review: dict[str, Any] | None = None


@dataclass
class Launch:
    """One launch under way: what the spread's hooks read, and what they started."""

    run_id: str
    step: str
    spread: Any  # harness.group.spread.Spread (which imports this module)
    hosts: list[Host]
    port: int | None
    pipeline: str
    on_event: Callable[[RunEvent], None]
    group: dict[str, Any] | None = None  # the run record's ``group`` (several hosts)
    cluster: list[str] = field(default_factory=list)  # runs that ``before`` started

    @property
    def nodes(self) -> list[Node]:
        return [h.node for h in self.hosts]

    @property
    def several(self) -> bool:
        return len(self.hosts) > 1

    def tag(self, h: Host) -> str | None:
        return h.node.host if self.several else None
