"""The command line: parse, call one function, render. Errors become one red line + a hint.

Layout: :mod:`.app` (the Typer app and the root options), :mod:`.options` (options every
command shares), :mod:`.common` (console, inventory, opening ``-t``, JSON, errors), then one
module per command group, each with ``register(app)``.

Heavy modules (Fabric, Paramiko, Rich's renderers) are imported inside commands, so that
``harness --help`` and local work start fast.
"""

from __future__ import annotations

import sys
from typing import NoReturn

from harness.cli import cache, hosts, matrix, patches, reading, report, run, runs
from harness.cli.across import wrap_commands
from harness.cli.app import app
from harness.cli.common import report_error
from harness.cli.options import use_global_options
from harness.errors import HarnessError

__all__ = ["app", "main"]

# in --help's order: reading, runs, patches, the review, the cache
for _group in (reading, matrix, hosts, run, runs, patches, report, cache):
    _group.register(app)
wrap_commands(app)  # -t naming several hosts: the command across them, in-process
use_global_options(app)


def main() -> NoReturn:
    """Entry point: every HarnessError becomes a message and an exit code, never a traceback."""
    try:
        app()
    except HarnessError as exc:
        report_error(exc)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    sys.exit(0)
