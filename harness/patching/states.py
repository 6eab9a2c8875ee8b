"""The states a patch of a series can be in on a target, with what each one means."""

from __future__ import annotations

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
