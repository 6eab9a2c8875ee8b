"""``harness run``, ``runs``, ``logs``, ``stop``: registered on the main app by ``harness.cli``.

Thin: parse, call one function (:mod:`~harness.runs.launch`, :mod:`~harness.runs.commands`),
exit with what it returns.
Nothing heavy is imported until a command runs (``harness --help`` stays fast).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from harness.cli.across import group_of
from harness.cli.common import hosts_config, print_json
from harness.cli.options import AcceptOpt, JsonOpt, TargetOpt

if TYPE_CHECKING:
    from harness.runs.context import Context

WorkdirOpt = Annotated[
    str | None,
    typer.Option(
        "--workdir",
        envvar="HARNESS_WORKDIR",
        help="folder on the target that holds .harness/runs/ and is {workdir} in the "
        "pipeline (default: hosts.toml's workdir; local: the current folder; SSH: home)",
    ),
]


def ctx(target: str | None, accept: bool, workdir: str | None = None) -> Context:
    from harness.runs.context import context

    return context(hosts_config(), target, accept, workdir)


def raise_code(code: int) -> None:
    """A use case's exit code, as a command ends with it."""
    raise typer.Exit(code)


def run_cmd(
    step: Annotated[
        str | None,
        typer.Argument(help="a step of the pipeline file; leave out to list the steps"),
    ] = None,
    extra: Annotated[
        list[str] | None,
        typer.Argument(help="after --: arguments appended to the step's command"),
    ] = None,
    target: TargetOpt = None,
    sets: Annotated[
        list[str] | None,
        typer.Option("--set", help="override a parameter: NAME=VALUE (repeatable)"),
    ] = None,
    pipeline: Annotated[
        Path | None,
        typer.Option(
            "--pipeline",
            help="pipeline file (default: $HARNESS_PIPELINE, else ./pipeline.toml or a "
            "parent folder's)",
            dir_okay=False,
        ),
    ] = None,
    detach: Annotated[
        bool, typer.Option("--detach", "-d", help="launch and return; do not follow")
    ] = False,
    kill_stale: Annotated[
        bool,
        typer.Option(
            "--kill-stale",
            help="end stale processes holding GPUs first (SIGTERM, SIGKILL after the "
            "grace period) instead of refusing",
        ),
    ] = False,
    workdir: WorkdirOpt = None,
    force: Annotated[
        bool, typer.Option("--force", help="launch even when the review says not ready")
    ] = False,
    patches: Annotated[
        Path | None,
        typer.Option("--patches", file_okay=False, help="the patches/ folder to review"),
    ] = None,
    smoke: Annotated[
        bool,
        typer.Option(
            "--smoke",
            help="same step, same code path: dummy weights (no checkpoint is read), a few "
            "decoder layers and samples, outputs under WORKDIR/.harness/runs/RUN_ID/smoke",
        ),
    ] = False,
    smoke_layers: Annotated[
        int | None,
        typer.Option(
            "--smoke-layers",
            help="decoder layers to keep (default 2, or the step's smoke.layers if more)",
        ),
    ] = None,
    smoke_samples: Annotated[
        int | None, typer.Option("--smoke-samples", help="samples (default 4)")
    ] = None,
    require_smoke: Annotated[
        bool,
        typer.Option(
            "--require-smoke",
            help="refuse a step not smoke-tested since its series or environment changed",
        ),
    ] = False,
    require_verified: Annotated[
        bool,
        typer.Option(
            "--require-verified",
            help="refuse a step with no run whose output passed its check since its series, "
            "callee versions or pipeline entry changed",
        ),
    ] = False,
    as_json: JsonOpt = False,
    accept_new_host_key: AcceptOpt = False,
) -> None:
    """Review, preflight and launch a pipeline step detached on the target; follow its log.

    Exits with the step's exit code (128+N for signal N). Ctrl-C detaches: the step
    keeps running; reattach with harness logs RUN --follow.
    """
    code = run_step(
        target,
        step,
        accept=accept_new_host_key,
        workdir=workdir,
        pipeline_file=pipeline,
        sets=sets or [],
        extra=extra or [],
        detach=detach,
        kill_stale=kill_stale,
        as_json=as_json,
        force=force,
        patches=patches,
        smoke=smoke or smoke_layers is not None or smoke_samples is not None,
        smoke_layers=smoke_layers,
        smoke_samples=smoke_samples,
        require_smoke=require_smoke,
        require_verified=require_verified,
    )
    raise typer.Exit(code)


def run_step(
    target: str | None,
    step: str | None,
    *,
    accept: bool = False,
    workdir: str | None = None,
    pipeline_file: Path | None = None,
    sets: Sequence[str] = (),
    extra: Sequence[str] = (),
    detach: bool = False,
    kill_stale: bool = False,
    as_json: bool = False,
    force: bool = False,
    patches: Path | None = None,
    smoke: bool = False,
    smoke_layers: int | None = None,
    smoke_samples: int | None = None,
    require_smoke: bool = False,
    require_verified: bool = False,
) -> int:
    """Launch detached on ``-t``'s target or hosts (:func:`harness.group.start.start_run`,
    its events shown as they come), then (unless ``detach``) follow to the step's exit code."""
    from functools import partial

    from harness.group.start import Request, finish, opened, spread_for, start_run
    from harness.runs import smoke as smoke_mode
    from harness.runs.attach import follow_run, print_next
    from harness.runs.pipeline import find_pipeline_file, load_pipeline
    from harness.runs.resolve import parse_sets, resolve_step
    from harness.runs.steps import BUILTINS
    from harness.views import launch as view
    from harness.views.runs import SCREEN, console

    err = console(stderr=True)
    pipeline = load_pipeline(find_pipeline_file(pipeline_file))
    if step is None:
        if as_json:
            print_json(pipeline.to_dict())
        else:
            view.steps(console(), pipeline)
        return 0
    hosts_cfg = hosts_config()
    group = group_of(target)
    names = group or (target,)
    spread = spread_for(pipeline, step, names)  # several hosts: as the step's `spread` says
    overrides = parse_sets(sets)
    if step not in pipeline.steps or overrides:  # a typo should not cost a handshake
        resolve_step(pipeline, step, dict.fromkeys(BUILTINS, ""), overrides)
    plan = smoke_mode.plan(pipeline, step, smoke_layers, smoke_samples) if smoke else None
    if plan is not None:  # the step's smoke params win: its outputs must go to {smoke_dir}
        overrides = {**overrides, **plan.sets}
    req = Request(
        step, overrides, extra, pipeline_file, patches, kill_stale, force, require_smoke,
        require_verified, plan,
    )  # fmt: skip

    def address(name: str | None) -> str:
        return hosts_cfg.hosts[name].address if group else ""

    with opened(names, lambda h: ctx(h, accept, workdir), address) as hosts:
        outcome = start_run(pipeline, hosts, req, spread, on_event=partial(view.show, err))
        info = outcome.run
        if group is None:  # one target: followed on the connection it was launched on
            one = hosts[0]
            if not detach:
                return follow_run(one.ctx, one.target, info, start=0, follow=True, screen=SCREEN)
            if as_json:
                print_json(info.to_dict())
            else:
                err.print(f"started [bold]{info.id}[/] (detached)")
                print_next(err, one.ctx, info)
            return 0
    if detach:
        err.print(f"follow it with: harness logs {info.id} -t {','.join(group)} --follow")
        return 0
    code = follow_group(outcome.followed, info.id, accept, workdir)
    finish(outcome.launch)
    return code


def follow_group(hosts: Sequence[str], run_id: str, accept: bool, workdir: str | None) -> int:
    """Follow ``run_id`` on every host to its end, each line with ``[host]`` in front."""
    from harness.cli.across import detached, follow_each, followed
    from harness.runs.commands import show_logs
    from harness.views.runs import SCREEN, console

    err = console(stderr=True)
    try:
        codes = follow_each(hosts, lambda h: raise_code(show_logs(
            ctx(h, accept, workdir), run_id, follow=True, screen=SCREEN)))  # fmt: skip
    except KeyboardInterrupt:
        return detached(err, run_id, hosts)
    return followed(err, run_id, hosts, codes)


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
    from harness.runs.commands import list_runs
    from harness.views import runs as view

    group = group_of(target)
    if group is not None:
        import sys

        from harness.group.listing import list_on
        from harness.views.group import group_runs_table

        got = list_on(lambda h: ctx(h, accept_new_host_key, workdir), group)
        if as_json:
            print_json(got.to_list())
        else:
            view.console().print(group_runs_table(got.rows))
        for host, error in got.failed:
            sys.stderr.write(f"{host}: {error}\n")
        raise typer.Exit(2 if got.failed else 0)

    listing = list_runs(ctx(target, accept_new_host_key, workdir))
    keep = limit if limit is not None else (0 if as_json else RUNS_SHOWN)
    newest = sorted(listing.runs, key=lambda r: (r.started_at or 0.0, r.id), reverse=True)
    shown = {r.id for r in newest[:keep]} if keep else {r.id for r in newest}
    runs = [r for r in listing.runs if r.id in shown]
    if as_json:
        print_json([r.to_dict() for r in runs])
    else:
        view.runs_table(view.console(), runs, listing.target)
        if len(runs) < len(listing.runs):
            more = len(listing.runs) - len(runs)
            view.console().print(
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
    from harness.runs.commands import show_logs

    group = group_of(target)
    if group is not None:  # each host's log, interleaved, with its name in front
        from harness.cli.across import detached, follow_each, followed
        from harness.views.runs import SCREEN, console

        err = console(stderr=True)
        try:
            codes = follow_each(group, lambda h: raise_code(show_logs(
                ctx(h, accept_new_host_key, workdir), run, follow=follow, tail=tail,
                offset=offset, screen=SCREEN)))  # fmt: skip
        except KeyboardInterrupt:
            raise typer.Exit(detached(err, run, group)) from None
        raise typer.Exit(followed(err, run, group, codes) if follow else max(codes.values()))

    from harness.views.runs import SCREEN

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
    target: TargetOpt = None,
    workdir: WorkdirOpt = None,
    as_json: JsonOpt = False,
    accept_new_host_key: AcceptOpt = False,
) -> None:
    """Stop a run's whole process tree (setsid'd workers too); report GPU holders left."""
    from harness.runs.commands import stop_run
    from harness.views import runs as view

    group = group_of(target)
    if group is not None:
        from harness.group.listing import stop_on
        from harness.views.group import stopped_lines

        got = stop_on(lambda h: ctx(h, accept_new_host_key, workdir), group, run, grace)
        out = view.console()
        for line in stopped_lines(got, run):
            out.print(line)
        raise typer.Exit(got.exit_code)

    rep = stop_run(ctx(target, accept_new_host_key, workdir), run, grace=grace)
    if as_json:
        print_json(rep.to_dict())
    else:
        view.stop_report(view.console(), rep)
    raise typer.Exit(1 if rep.remaining else 0)


def register(app: typer.Typer) -> None:
    """Add these commands to ``app`` (in this order: it is ``--help``'s)."""
    app.command("run")(run_cmd)
    app.command("runs")(runs_cmd)
    app.command("logs")(logs_cmd)
    app.command("stop")(stop_cmd)
