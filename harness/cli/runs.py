"""``harness runs``, ``logs``, ``stop``: registered on the main app by ``harness.cli``.

Thin: parse, call one function (:mod:`~harness.runs.follow.commands`,
:mod:`~harness.group.listing`), render, exit with what it returns. Each command's form for ``-t``
naming several hosts is declared with it (:func:`harness.cli.across.on_group`); ``harness run`` is
:mod:`harness.cli.run`. Nothing heavy is imported until a command runs (``harness --help`` stays
fast).
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from harness.cli.across import on_group
from harness.cli.common import console, emit, print_json, show
from harness.cli.options import AcceptOpt, JsonOpt, TargetOpt
from harness.cli.run import ctx, raise_code
from harness.cli.run_options import WorkdirOpt

#: ``harness runs`` shows this many of the newest runs unless ``--limit`` says otherwise.
RUNS_SHOWN = 20


def runs_cmd(
    target: TargetOpt = None,
    workdir: WorkdirOpt = None,
    as_json: JsonOpt = False,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit",
            min=0,
            help=f"show the newest N runs (default {RUNS_SHOWN} in the table, all with --json; "
            "0: all)",
        ),
    ] = None,
    accept_new_host_key: AcceptOpt = False,
) -> None:
    """List runs on the target: id, step, state, started, duration, exit."""
    from harness.runs.follow.commands import list_runs
    from harness.views import runs as view

    listing = list_runs(ctx(target, accept_new_host_key, workdir))
    keep = limit if limit is not None else (0 if as_json else RUNS_SHOWN)
    newest = sorted(listing.runs, key=lambda r: (r.started_at or 0.0, r.id), reverse=True)
    shown = {r.id for r in newest[:keep]} if keep else {r.id for r in newest}
    runs = [r for r in listing.runs if r.id in shown]
    if as_json:
        print_json([r.to_dict() for r in runs])
    else:
        show(console(), view.runs_table(runs, listing.target, listing.gone))
        if len(runs) < len(listing.runs):
            more = len(listing.runs) - len(runs)
            console().print(
                f"{more} older run(s) not shown; --limit {len(listing.runs)} (or 0) shows all"
            )
    raise typer.Exit(0)


def logs_cmd(
    run: Annotated[
        str, typer.Argument(help="run id, a unique prefix of one, a step name, or 'last'")
    ],
    follow: Annotated[
        bool,
        typer.Option("--follow", "-f", help="keep reading until the run ends; exit with its code"),
    ] = False,
    tail: Annotated[
        int | None, typer.Option("--tail", "-n", help="start with the last N lines")
    ] = None,
    offset: Annotated[
        int | None,
        typer.Option("--offset", help="start at this byte of the log (resume exactly)"),
    ] = None,
    target: TargetOpt = None,
    workdir: WorkdirOpt = None,
    accept_new_host_key: AcceptOpt = False,
) -> None:
    """Print a run's log (byte-exact local copy kept); --follow reattaches to a live one."""
    from harness.cli.foreground import stdout_open
    from harness.cli.screen import SCREEN

    stdout_open("the log has nowhere to go", "send stdout to a file: harness logs RUN > FILE")
    from harness.runs.follow.commands import show_logs

    code = show_logs(
        ctx(target, accept_new_host_key, workdir),
        run,
        follow=follow,
        tail=tail,
        offset=offset,
        screen=SCREEN,
    )
    raise typer.Exit(code)


def stop_cmd(
    run: Annotated[
        str, typer.Argument(help="run id, a unique prefix of one, a step name, or 'last'")
    ],
    grace: Annotated[
        float | None,
        typer.Option(
            "--grace",
            help="seconds between SIGTERM and SIGKILL (default 10; $HARNESS_RUN_GRACE_S)",
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option("--force", help="stop a service even while runs still use it (they fail)"),
    ] = False,
    target: TargetOpt = None,
    workdir: WorkdirOpt = None,
    as_json: JsonOpt = False,
    accept_new_host_key: AcceptOpt = False,
) -> None:
    """Stop a run's whole process tree (setsid'd workers too); report GPU holders left."""
    from harness.runs.follow.commands import stop_run
    from harness.views import runs as view

    rep = stop_run(ctx(target, accept_new_host_key, workdir), run, grace=grace, force=force)
    if as_json:
        print_json(rep.to_dict())
    else:
        show(console(), view.stop_report(rep))
    raise typer.Exit(1 if rep.remaining else 0)


# -- the same commands when -t names several hosts (harness.cli.across calls them) ------------


def runs_on_group(hosts: tuple[str, ...], **kw: Any) -> None:
    """One row per run, every host's part in it (a spread run's hosts folded together)."""
    import sys

    from harness.group.listing import list_on
    from harness.views.group import group_runs_table

    got = list_on(lambda h: ctx(h, kw["accept_new_host_key"], kw["workdir"]), hosts)
    if kw["as_json"]:
        print_json(got.to_list())
    else:
        console().print(group_runs_table(got.rows))
    for host, error in got.failed:
        sys.stderr.write(f"{host}: {error}\n")
    raise typer.Exit(2 if got.failed else 0)


def logs_on_group(hosts: tuple[str, ...], **kw: Any) -> None:
    """Each host's log, interleaved, with its name in front (each local copy byte-exact)."""
    from harness.cli.across import detached, follow_each, followed
    from harness.cli.screen import SCREEN
    from harness.runs.follow.commands import show_logs

    err, run, follow = console(stderr=True), kw["run"], kw["follow"]
    try:
        codes = follow_each(
            hosts,
            lambda h: raise_code(
                show_logs(
                    ctx(h, kw["accept_new_host_key"], kw["workdir"]),
                    run,
                    follow=follow,
                    tail=kw["tail"],
                    offset=kw["offset"],
                    screen=SCREEN,
                )
            ),
        )
    except KeyboardInterrupt:
        raise typer.Exit(detached(err, run, hosts)) from None
    raise typer.Exit(followed(err, run, hosts, codes) if follow else max(codes.values()))


def stop_on_group(hosts: tuple[str, ...], **kw: Any) -> None:
    """Stop the run on every host that has it (and the Ray cluster it owns): a line each."""
    from harness.group.listing import stop_on
    from harness.views.group import stopped_lines

    make = lambda h: ctx(h, kw["accept_new_host_key"], kw["workdir"])  # noqa: E731
    got = stop_on(make, hosts, kw["run"], kw["grace"])
    emit(console(), stopped_lines(got, kw["run"]))
    raise typer.Exit(got.exit_code)


def register(app: typer.Typer) -> None:
    """Add these commands to ``app`` (in this order: it is ``--help``'s)."""
    app.command("runs")(on_group(runs_on_group)(runs_cmd))
    app.command("logs")(on_group(logs_on_group)(logs_cmd))
    app.command("stop")(on_group(stop_on_group)(stop_cmd))
