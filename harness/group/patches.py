"""``apply-patches`` / ``revert-patches`` across hosts: every host or none.

Prepare on every host at once (plan, refusals, conflicts, locks held by another harness): any
problem anywhere means nothing is written anywhere. Then commit host by host, each one the
usual all-or-nothing transaction; if one fails (a conflict that appeared, a link that
dropped), the hosts this command already changed are put back, so the hosts end all applied
or all as they were -- never one of each. A host whose own transaction was cut rolls itself
back from its journal at the next command that reads it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import HarnessError, PatchError
from harness.group.result import GroupResult, HostResult, run_each

#: seconds between prepare and commit (tests use it to drop a link between the two)
DELAY_ENV = "HARNESS_GROUP_COMMIT_DELAY_S"


@dataclass(frozen=True)
class Across:
    prepared: GroupResult[Any]
    committed: tuple[HostResult[Any], ...] = ()
    failed: HostResult[Any] | None = None
    rolled_back: tuple[str, ...] = ()
    rollback_failed: tuple[HostResult[Any], ...] = ()

    @property
    def ok(self) -> bool:
        return self.prepared.ok and self.failed is None


def _wrote(reports: Any) -> bool:
    return any(getattr(r, "written", None) for r in reports or ())


def apply_across(
    hosts: tuple[str, ...],
    open_host: Callable[[str], Any],
    root: Path,
    *,
    force: bool = False,
    only: str | None = None,
    between: Callable[[], None] = lambda: None,
) -> Across:
    """``between`` runs once every host is prepared, before the first commit."""
    from harness.patching.reverting import revert_patches
    from harness.patching.writing import apply_patches

    def prepare(host: str) -> Any:
        with open_host(host) as t:
            return apply_patches(t, root, force=force, only=only, check_only=True)

    prepared = run_each(hosts, prepare)
    if not prepared.ok:
        return Across(prepared)
    between()
    done: list[HostResult[Any]] = []
    for host in hosts:
        try:
            with open_host(host) as t:
                done.append(HostResult(host, apply_patches(t, root, force=force, only=only)))
        except HarnessError as exc:
            failed = HostResult[Any](
                host, error=exc.message, hint=exc.hint, exit_code=exc.exit_code
            )
            back, still = [], []
            for d in done:
                if not _wrote(d.value):
                    continue
                try:
                    with open_host(d.host) as t:
                        revert_patches(t, root, only=only)
                    back.append(d.host)
                except HarnessError as err:
                    still.append(HostResult[Any](d.host, error=err.message, hint=err.hint))
            return Across(prepared, tuple(done), failed, tuple(back), tuple(still))
    return Across(prepared, tuple(done))


def revert_across(
    hosts: tuple[str, ...],
    open_host: Callable[[str], Any],
    root: Path,
    *,
    force: bool = False,
    forget: bool = False,
    only: str | None = None,
) -> GroupResult[Any]:
    """Reverting is restoring each host's own backups: every host is tried, each says."""
    from harness.patching.reverting import revert_patches

    def one(host: str) -> Any:
        with open_host(host) as t:
            return revert_patches(t, root, force=force, only=only, forget=forget)

    return run_each(hosts, one)


def describe(result: Across) -> list[str]:
    """One line per host for the CLI, and what the command left overall."""
    lines = []
    if not result.prepared.ok:
        for r in result.prepared.results:
            lines.append(f"{r.host}: " + ("ready" if r.ok else f"refused: {r.error}"))
        lines.append("nothing was written on any host")
        return lines
    for r in result.committed:
        lines.append(f"{r.host}: applied")
    if result.failed is not None:
        lines.append(f"{result.failed.host}: failed: {result.failed.error}")
        if result.rolled_back:
            lines.append("rolled back on " + ", ".join(result.rolled_back))
        for r in result.rollback_failed:
            lines.append(
                f"{r.host}: could not roll back: {r.error} (harness revert-patches -t {r.host})"
            )
        if not result.rollback_failed:
            lines.append("every host is as it was before this command")
    else:
        lines.append(f"the series is applied on all {len(result.committed)} hosts")
    return lines


__all__ = ["DELAY_ENV", "Across", "PatchError", "apply_across", "describe", "revert_across"]
