"""The command line: parse, call one function, render. Errors become one red line + a hint.

Layout: :mod:`.app` (the Typer app and the root options), :mod:`.options` (options every
command shares), :mod:`.common` (console, inventory, opening ``-t``, JSON, errors), then one
module per command group, each with ``register(app)``.

Heavy modules (Fabric, Paramiko, Rich's renderers) are imported inside commands, so that
``harness --help`` and local work start fast. Even Typer and the command modules are imported
inside :func:`main`'s ``try``: a Ctrl-C in the first moments of a command (while they load)
is one line and exit 130, like any other, never an import's traceback.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing's: importing typing is itself ~20 ms a Ctrl-C may land in
if TYPE_CHECKING:
    from typing import Any, NoReturn

    import typer

__all__ = ["app", "main"]

_built: list[typer.Typer] = []


def build() -> typer.Typer:
    """The app with every command registered (once)."""
    if _built:
        return _built[0]
    from harness.cli import cache, hosts, matrix, patches, reading, report, run, runs
    from harness.cli.across import wrap_commands
    from harness.cli.app import app
    from harness.cli.options import use_global_options

    # in --help's order: reading, runs, patches, the review, the cache
    for group in (reading, matrix, hosts, run, runs, patches, report, cache):
        group.register(app)
    wrap_commands(app)  # -t naming several hosts: the command across them, in-process
    use_global_options(app)
    _built.append(app)
    globals()["app"] = app  # the name, not the submodule harness.cli.app it shadows
    return app


def __getattr__(name: str) -> Any:
    if name == "app":  # ``from harness.cli import app`` (tests, completion)
        return build()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> NoReturn:
    """Entry point: every HarnessError becomes a message and an exit code, never a traceback;
    a Ctrl-C at any moment (the imports included) is one line and exit 130."""
    import gc

    # start-up makes ~100,000 objects that live as long as the process: the cyclic collector
    # would scan them ~75 times (~6 ms) before the command starts; the root callback turns it
    # back on (app._root), the start-up's objects set aside (gc.freeze)
    gc.disable()
    try:
        from harness.errors import HarnessError

        try:
            code = _call(build())
        except HarnessError as exc:
            from harness.cli.common import report_error

            report_error(exc)
            sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    sys.exit(code)


def _call(app: typer.Typer) -> int:
    """Run the app; a command line Typer refuses (an unknown option, a value out of range) is
    a UsageError too: one line and a hint, as harness's own refusals -- not a framed box."""
    import typer

    from harness.errors import UsageError

    # click's ClickException, whichever click Typer carries (its own copy since 0.2x)
    click_error: type[Exception] = next(
        c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"
    )
    try:
        code = app(standalone_mode=False)
    except click_error as exc:
        where = getattr(getattr(exc, "ctx", None), "command_path", None) or "harness"
        raise UsageError(getattr(exc, "format_message", exc.__str__)(), f"{where} --help") from None
    except typer.Abort:
        sys.stderr.write("aborted\n")
        return 1
    return code if isinstance(code, int) else 0
