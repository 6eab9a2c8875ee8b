"""The disk gate of ``harness run``: a step that declares ``disk = {...}`` has what it will
write counted on the target (by its own interpreter, which reads the prepared dataset)
against the free space where it writes -- before any service starts for it, so a step that
cannot fit costs no model load. Refused with both numbers unless ``--force``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace

from harness.errors import RunError
from harness.launch.events import DiskChecked, RunEvent
from harness.launch.nodes import Host
from harness.runs.target.disk import Budget, count, refusal

#: seconds between two progress lines in the step's log (default 60)
PROGRESS_ENV = "HARNESS_RUN_PROGRESS_S"


def read_budget(host: Host) -> Budget | None:
    """The step's budget as its target reads it; None when it declares none.

    Raises:
        RunError: the target could not count it (the script's own last line says why).
    """
    step = host.resolved
    if step is None or not step.disk:
        return None
    return count(host.target, step.disk, step.python, step.step)


def disk_gate(host: Host, force: bool, on_event: Callable[[RunEvent], None]) -> Budget | None:
    """Read the budget, tell it, refuse a step that will not fit (unless ``force``)."""
    try:
        budget = read_budget(host)
    except RunError:
        if force:
            return None
        raise
    if budget is None:
        return None
    refused = refusal(host.resolved.step if host.resolved else "", budget)
    on_event(DiskChecked(budget, forced=refused is not None and force))
    if refused is not None and not force:
        raise RunError(*refused)
    if host.resolved is not None and host.resolved.disk:  # the progress lines' totals
        every = os.environ.get(PROGRESS_ENV, "60")
        host.resolved = replace(
            host.resolved,
            disk={
                **host.resolved.disk,
                "samples": str(budget.samples),
                "per_token": str(budget.per_token),
                "every": every,
            },
        )
    return budget
