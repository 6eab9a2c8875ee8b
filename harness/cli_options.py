"""Options every command shares, importable by command groups without a cycle."""

from __future__ import annotations

from typing import Annotated

import typer

TargetOpt = Annotated[
    str | None,
    typer.Option(
        "--target",
        "-t",
        help="host from hosts.toml, local[:PYTHON], venv:PATH or "
        "pypi:NAME==VER[,...]; default: hosts.toml's default, else local",
    ),
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

__all__ = ["AcceptOpt", "JsonOpt", "TargetOpt"]
