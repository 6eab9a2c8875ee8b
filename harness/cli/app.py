"""The Typer app and its root callback (``--hosts``, ``-t``, ``--version``); no commands.

Commands live in the sibling modules, each with ``register(app)``; :mod:`harness.cli` adds
them in ``--help``'s order.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from harness.cli.options import HOSTS_HELP, TARGET_HELP, State

app = typer.Typer(
    name="harness",
    help="Read, patch and run ML pipelines on a remote GPU box -- without waiting for a model "
    "load to find the next API mismatch.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        from harness import __version__

        sys.stdout.write(f"harness {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _root(
    hosts: Annotated[
        Path | None, typer.Option("--hosts", metavar="FILE", help=HOSTS_HELP, dir_okay=False)
    ] = None,
    target: Annotated[str | None, typer.Option("--target", "-t", help=TARGET_HELP)] = None,
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="print harness's version and exit", callback=_version, is_eager=True
        ),
    ] = False,
) -> None:
    """Options here apply to the subcommand; they may also follow it."""
    import gc

    gc.freeze()  # start-up is over (harness.cli.main turned the collector off for it)
    gc.enable()
    State.hosts_file = hosts
    State.target = target
