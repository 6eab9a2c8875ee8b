"""Options every command shares, importable by command groups without a cycle.

``--hosts`` and ``-t/--target`` are global: they work before the subcommand
(``harness -t gpu probe X``) or after it (``harness probe X -t gpu``), and every subcommand's
``--help`` lists them. The root callback stores what it was given in :class:`State`; on a
subcommand, ``--hosts`` is added to every command by :class:`GlobalOptionsCommand` and ``-t``
falls back to the root's value through its callback (Click parses the subcommand's options
after the root callback ran).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperOption


class State:
    """What the root callback was given, for the subcommand that runs next (one per process)."""

    hosts_file: Path | None = None
    target: str | None = None


def _target_or_global(value: str | None) -> str | None:
    return value if value is not None else State.target


HOSTS_HELP = "hosts.toml to use (default: $HARNESS_HOSTS, else ./hosts.toml or a parent folder's)"
TARGET_HELP = (
    "host from hosts.toml, local[:PYTHON], venv:PATH or pypi:NAME==VER[,...]; "
    "default: hosts.toml's default, else local"
)

TargetOpt = Annotated[
    str | None,
    typer.Option("--target", "-t", help=TARGET_HELP, callback=_target_or_global),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="print the result as JSON (see README)")]
AcceptOpt = Annotated[
    bool,
    typer.Option(
        "--accept-new-host-key",
        help="trust an unknown SSH host key and add it to known_hosts "
        "(like OpenSSH accept-new); a changed key is always refused",
    ),
]


def _store_hosts(_ctx: Any, _param: Any, value: str | None) -> None:
    if value is not None:
        State.hosts_file = Path(value)


class GlobalOptionsCommand(TyperCommand):
    """A command that also takes ``--hosts`` after its name (stored, not passed on)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not any("--hosts" in getattr(p, "opts", ()) for p in self.params):
            self.params.append(
                TyperOption(
                    param_decls=["--hosts"],
                    metavar="FILE",
                    help=HOSTS_HELP,
                    expose_value=False,
                    callback=_store_hosts,
                )
            )

    def invoke(self, ctx: Any) -> Any:
        """Typer turns any KeyboardInterrupt into a silent exit 130: one that says what it
        stopped (a probe ended on the target) is said, as an Interrupted; any other is the
        one line ``interrupted``, as during start-up."""
        from harness.errors import Interrupted, Stopped

        try:
            return super().invoke(ctx)
        except Stopped as e:
            raise Interrupted(e.message) from None
        except KeyboardInterrupt:
            raise Interrupted("") from None


def use_global_options(app: typer.Typer) -> None:
    """Give every registered command ``--hosts`` (call once all commands are registered)."""
    for info in app.registered_commands:
        if info.cls in (None, TyperCommand):
            info.cls = GlobalOptionsCommand


__all__ = [
    "AcceptOpt",
    "GlobalOptionsCommand",
    "JsonOpt",
    "State",
    "TargetOpt",
    "use_global_options",
]
