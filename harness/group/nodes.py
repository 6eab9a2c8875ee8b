"""The nodes of a run over several hosts: each host's rank and address, and what harness
worked out for it (shared by the launch and the Ray cluster it may own)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.runs.steps import ResolvedStep


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
