"""``harness run``: one step on ``-t``'s target, or over its hosts as the step's ``spread``
says -- one path (:func:`harness.launch.start.start_run`), its events shown as they come.

Thin: parse, call, render, exit with the step's code. Registered on the main app by
``harness.cli``; nothing heavy is imported until the command runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from harness.cli.across import group_of
from harness.cli.common import emit, hosts_config, print_json, show
from harness.cli.options import AcceptOpt, JsonOpt, TargetOpt

if TYPE_CHECKING:
    from harness.launch.nodes import Host
    from harness.runs.target.context import Context
    from harness.targets.base import ByteStream

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
    from harness.runs.target.context import context

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
    keep_service: Annotated[
        bool,
        typer.Option(
            "--keep-service",
            help="leave the services the step needs running when it ends, for the next run "
            "to reuse (stop them with harness stop)",
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
        keep_service=keep_service,
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
    keep_service: bool = False,
) -> int:
    """Launch detached on ``-t``'s target or hosts (:func:`harness.launch.start.start_run`,
    its events shown as they come), then (unless ``detach``) follow to the step's exit code."""

    from harness.cache import cache_root
    from harness.cli.common import console
    from harness.cli.foreground import check_copy_folder, check_stdout, launched
    from harness.cli.screen import SCREEN
    from harness.errors import UsageError
    from harness.launch.gates import refuse_flags_that_cannot_apply
    from harness.launch.start import Request, finish, opened, spread_for, start_run
    from harness.runs.follow.attach import early_stream, follow_run, print_next
    from harness.runs.follow.services import until_ready
    from harness.runs.pipeline import smoke as smoke_mode
    from harness.runs.pipeline.file import find_pipeline_file, load_pipeline
    from harness.runs.pipeline.resolve import parse_sets, resolve_step
    from harness.runs.pipeline.steps import BUILTINS
    from harness.views import launch as view

    err = console(stderr=True)
    pipeline = load_pipeline(find_pipeline_file(pipeline_file))
    if step is not None:
        check_stdout(detach, as_json)
    if step is None:
        if as_json:
            print_json(pipeline.to_dict())
        else:
            show(console(), view.steps(pipeline))
        return 0
    hosts_cfg = hosts_config()
    group = group_of(target)
    names: tuple[str, ...] = group if group is not None else (target or "",)  # "": the default
    spread = spread_for(pipeline, step, names)  # several hosts: as the step's `spread` says
    overrides = parse_sets(sets)
    if step not in pipeline.steps or overrides:  # a typo should not cost a handshake
        resolve_step(pipeline, step, dict.fromkeys(BUILTINS, ""), overrides)
    if not smoke:  # a smoke run is the test itself: neither flag applies to it
        refuse_flags_that_cannot_apply(pipeline, step, require_smoke, require_verified)
    plan = None
    if smoke:
        plan = smoke_mode.plan(pipeline, step, smoke_layers, smoke_samples, overrides)
    if plan is not None and keep_service:
        raise UsageError(
            "--keep-service with --smoke: a smoke run's service (random weights, a cut model) "
            "stops when the run ends, so that no real run can ever talk to it",
            f"run it without --keep-service: harness run {step} --smoke",
        )
    if plan is not None:  # the step's smoke params win: its outputs must go to {smoke_dir}
        overrides = {**overrides, **plan.sets}
    req = Request(
        step, overrides, extra, pipeline_file, patches, kill_stale, force, require_smoke,
        require_verified, plan, keep_service,
    )  # fmt: skip

    def address(name: str) -> str:
        return hosts_cfg.hosts[name].address if group else ""

    early: dict[str, tuple[str, ByteStream]] = {}  # run dir, follower: opened while launching

    def launching(h: Host, run_dir: str) -> None:
        if group is None and not detach:
            got = early_stream(h.ctx, h.target, run_dir)
            if got is not None:
                early[h.node.host] = (run_dir, got)

    with opened(names, lambda h: ctx(h, accept, workdir), address) as hosts:
        for host in hosts if not detach else ():  # the log's local copy: before launching
            check_copy_folder(cache_root() / "runs" / host.target.name)
        try:
            outcome = start_run(
                pipeline, hosts, req, spread, on_event=lambda e: emit(err, view.lines(e)),
                wait_ready=lambda h, info: until_ready(h.ctx, h.target, h.workdir, info,
                                                       SCREEN, step, keep_service),
                launching=launching,
            )  # fmt: skip
        except BaseException:
            for _, stream in early.values():  # no run: its process on the target leaves
                stream.close()
            raise
        info = outcome.run
        if group is None:  # one target: followed on the connection it was launched on
            one = hosts[0]
            where, first = early.pop(one.node.host, (None, None))
            if first is not None and where != info.record.run_dir.rstrip("/"):
                first.close()  # not where the launch put the run: follow it as usual
                first = None
            if not detach:
                with launched(info.id, one.target.label, one.ctx.flag):
                    return follow_run(one.ctx, one.target, info, start=0, follow=True,
                                      screen=SCREEN, first=first)  # fmt: skip
            if as_json:
                print_json(info.to_dict())
            else:
                err.print(f"started [bold]{info.id}[/] (detached)")
                print_next(err, one.ctx, info)
            return 0
    if detach:
        err.print(f"follow it with: harness logs {info.id} -t {','.join(group)} --follow")
        return 0
    with launched(info.id, ",".join(group), f" -t {','.join(group)}"):
        code = follow_group(outcome.followed, info.id, accept, workdir)
    finish(outcome.launch)
    return code


def follow_group(hosts: Sequence[str], run_id: str, accept: bool, workdir: str | None) -> int:
    """Follow ``run_id`` on every host to its end, each line with ``[host]`` in front."""
    from harness.cli.across import detached, follow_each, followed
    from harness.cli.common import console
    from harness.cli.screen import SCREEN
    from harness.runs.follow.commands import show_logs

    err = console(stderr=True)
    try:
        codes = follow_each(hosts, lambda h: raise_code(show_logs(
            ctx(h, accept, workdir), run_id, follow=True, screen=SCREEN)))  # fmt: skip
    except KeyboardInterrupt:
        return detached(err, run_id, hosts)
    return followed(err, run_id, hosts, codes)


def register(app: typer.Typer) -> None:
    app.command("run")(run_cmd)
