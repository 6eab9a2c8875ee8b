"""The states a patch of a series can be in on a target, with what each one means."""

from __future__ import annotations

from dataclasses import dataclass

from harness.vocab import Word


class Status(Word):
    """One patch's state; the value is what ``harness patches`` prints.

    ``usable``: the environment has the change or will have it after ``apply-patches``
    (``check --with-patches`` checks with these); ``pending``: ``apply-patches`` would write it.
    """

    style: str
    usable: bool
    pending: bool

    APPLIED = ("applied", "green", True)
    APPLIES = ("applies cleanly", "cyan", True, True)
    CONFLICTS = ("conflicts", "bold red")
    SKIPPED = ("skipped", "yellow")
    BY_HAND = ("applied by hand", "magenta", True)
    #: The manifest says this patch was applied, but from another text than the series has
    #: now: the files hold the old change, so "applied" would be a lie and re-applying would
    #: conflict.
    STALE = ("applied (an older text of this patch)", "bold red")


@dataclass(frozen=True)
class Outcome:
    """One dist's files as read back after an interrupted apply."""

    dist: str
    applied: bool  # every planned file holds its patched text
    untouched: bool  # every planned file holds what it held before
    rolled_back: bool  # the read-back found a dead transaction and undid it


def interrupted_line(outcomes: list[Outcome]) -> str:
    """Pure: the one line an interrupted apply prints about the state it left."""
    if all(o.applied for o in outcomes):
        return "the series is fully applied"
    if all(o.untouched for o in outcomes):
        if any(o.rolled_back for o in outcomes):
            return "rolled back: the files are as they were before"
        return "nothing written"
    parts = [
        f"{o.dist} "
        + ("fully applied" if o.applied else "as before" if o.untouched else "half-written")
        for o in outcomes
    ]
    return "left " + ", ".join(parts)
