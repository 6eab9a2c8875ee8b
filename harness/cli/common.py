"""What every command shares: the console, the inventory, opening ``-t``, JSON, errors.

Public on purpose: command modules import these instead of reaching into each other.
Heavy modules (Rich, the target kinds) are imported inside the functions.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from harness.cli.options import State
from harness.errors import HarnessError

if TYPE_CHECKING:
    from rich.console import Console

    from harness.config import HostsConfig
    from harness.targets.base import Target


def console(stderr: bool = False) -> Console:
    """A Rich console that prints text as given (no highlighting, no re-wrapping)."""
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=False)


def hosts_config() -> HostsConfig:
    """The inventory: ``--hosts``, else ``$HARNESS_HOSTS``, else ``hosts.toml`` found upwards."""
    from harness.config import find_hosts_file
    from harness.targets.registry import load_hosts

    return load_hosts(find_hosts_file(State.hosts_file))


def group_named(spec: str | None) -> tuple[str, ...] | None:
    """The hosts ``-t SPEC`` names when it names several (a group, ``a,b``, a group default);
    ``None`` for one target. Commands with a meaning across hosts branch on it."""
    from harness.group.spec import expand

    return expand(spec, hosts_config())


def target_for(spec: str | None, accept_new: bool = False) -> Target:
    """The target ``-t SPEC`` names (nothing connects until first use)."""
    from harness.targets.registry import open_target

    return open_target(spec, hosts_config(), accept_new_host_key=accept_new)


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2) + "\n")


def report_error(exc: HarnessError, prefix: str = "") -> None:
    """One red line (yellow for an interrupt), then the hint, on stderr."""
    from rich.markup import escape

    from harness.errors import Interrupted

    err = console(stderr=True)
    label = (
        "[bold yellow]interrupted:[/]" if isinstance(exc, Interrupted) else "[bold red]error:[/]"
    )
    err.print(f"{label} {escape(prefix + exc.message)}", soft_wrap=True)
    if exc.hint:
        err.print(f"[yellow]hint:[/] {escape(exc.hint)}", soft_wrap=True)
