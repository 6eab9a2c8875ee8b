"""``harness run``: one step on ``-t``'s target, or over its hosts as the step's ``spread``
says -- one path (:func:`harness.launch.start.start_run`), its events shown as they come.

Thin: parse, call, render, exit with the step's code. Registered on the main app by
``harness.cli``; nothing heavy is imported until the command runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from harness.cli.across import group_of
from harness.cli.common import emit, hosts_config, print_json, show
from harness.cli.options import AcceptOpt, JsonOpt, TargetOpt
from harness.cli.run_options import (
    DetachOpt,
    ExtraOpt,
    ForceOpt,
    KeepServiceOpt,
    KillStaleOpt,
    PatchesOpt,
    PipelineOpt,
    RequireSmokeOpt,
    RequireVerifiedOpt,
    SetsOpt,
    SmokeLayersOpt,
    SmokeOpt,
    SmokeSamplesOpt,
    StepOpt,
    WorkdirOpt,
)

if TYPE_CHECKING:
    from harness.launch.nodes import Host, Request, Spread
    from harness.runs.pipeline.smoke import SmokePlan
    from harness.runs.pipeline.steps import Pipeline
    from harness.runs.record.models import RunInfo
    from harness.runs.target.context import Context
    from harness.targets.base import ByteStream


def ctx(target: str | None, accept: bool, workdir: str | None = None) -> Context:
    from harness.runs.target.context import context

    return context(hosts_config(), target, accept, workdir)


def raise_code(code: int) -> None:
    """A use case's exit code, as a command ends with it."""
    raise typer.Exit(code)


def run_cmd(
    step: StepOpt = None,
    extra: ExtraOpt = None,
    target: TargetOpt = None,
    sets: SetsOpt = None,
    pipeline: PipelineOpt = None,
    detach: DetachOpt = False,
    kill_stale: KillStaleOpt = False,
    workdir: WorkdirOpt = None,
    force: ForceOpt = False,
    patches: PatchesOpt = None,
    smoke: SmokeOpt = False,
    smoke_layers: SmokeLayersOpt = None,
    smoke_samples: SmokeSamplesOpt = None,
    require_smoke: RequireSmokeOpt = False,
    require_verified: RequireVerifiedOpt = False,
    keep_service: KeepServiceOpt = False,
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
    from harness.cli.common import console
    from harness.cli.foreground import check_stdout
    from harness.launch.nodes import Request
    from harness.launch.start import spread_for
    from harness.runs.pipeline.file import find_pipeline_file, load_pipeline
    from harness.views import launch as view

    pipeline = load_pipeline(find_pipeline_file(pipeline_file))
    if step is None:
        if as_json:
            print_json(pipeline.to_dict())
        else:
            show(console(), view.steps(pipeline))
        return 0
    check_stdout(detach, as_json)
    group = group_of(target)
    names: tuple[str, ...] = group if group is not None else (target or "",)  # "": the default
    spread = spread_for(pipeline, step, names)  # several hosts: as the step's `spread` says
    overrides, plan = _overrides(
        pipeline, step, sets, smoke, smoke_layers, smoke_samples, keep_service
    )
    if not smoke:  # a smoke run is the test itself: neither flag applies to it
        from harness.launch.gates import refuse_flags_that_cannot_apply

        refuse_flags_that_cannot_apply(pipeline, step, require_smoke, require_verified)
    req = Request(
        step,
        overrides,
        extra,
        pipeline_file,
        patches,
        kill_stale=kill_stale,
        force=force,
        require_smoke=require_smoke,
        require_verified=require_verified,
        smoke=plan,
        keep_service=keep_service,
    )
    return _launch(pipeline, req, names, group, spread, accept, workdir, detach, as_json)


def _overrides(
    pipeline: Pipeline,
    step: str,
    sets: Sequence[str],
    smoke: bool,
    smoke_layers: int | None,
    smoke_samples: int | None,
    keep_service: bool,
) -> tuple[dict[str, str], SmokePlan | None]:
    """``--set``'s parameters (checked before any handshake: a typo should not cost one) and,
    with ``--smoke``, its plan, whose params win: a smoke run's outputs go to ``{smoke_dir}``."""
    from harness.errors import UsageError
    from harness.runs.pipeline import smoke as smoke_mode
    from harness.runs.pipeline.resolve import parse_sets, resolve_step
    from harness.runs.pipeline.steps import BUILTINS

    overrides = parse_sets(sets)
    if step not in pipeline.steps or overrides:
        resolve_step(pipeline, step, dict.fromkeys(BUILTINS, ""), overrides)
    if not smoke:
        return overrides, None
    plan = smoke_mode.plan(pipeline, step, smoke_layers, smoke_samples, overrides)
    if keep_service:
        raise UsageError(
            "--keep-service with --smoke: a smoke run's service (random weights, a cut model) "
            "stops when the run ends, so that no real run can ever talk to it",
            f"run it without --keep-service: harness run {step} --smoke",
        )
    return {**overrides, **plan.sets}, plan


def _launch(
    pipeline: Pipeline,
    req: Request,
    names: tuple[str, ...],
    group: tuple[str, ...] | None,
    spread: Spread,
    accept: bool,
    workdir: str | None,
    detach: bool,
    as_json: bool,
) -> int:
    """Start ``req`` on every host named, then follow it: one target on the connection it was
    launched on (its log stream opened while launching), several each with ``[host]``."""
    from harness.cache import cache_root
    from harness.cli.common import console
    from harness.cli.foreground import check_copy_folder, launched
    from harness.cli.screen import SCREEN
    from harness.launch.start import finish, opened, start_run
    from harness.runs.follow.attach import early_stream
    from harness.runs.follow.services import until_ready
    from harness.views import launch as view

    err = console(stderr=True)
    hosts_cfg = hosts_config()

    def address(name: str) -> str:
        return hosts_cfg.hosts[name].address if group else ""

    early: dict[str, tuple[str, ByteStream]] = {}  # run dir, follower: opened while launching

    def launching(h: Host, run_dir: str) -> None:
        if group is None and not detach:
            got = early_stream(h.ctx, h.target, run_dir)
            if got is not None:
                early[h.node.host] = (run_dir, got)

    def wait_ready(h: Host, info: RunInfo) -> RunInfo:
        return until_ready(h.ctx, h.target, h.workdir, info, SCREEN, req.step, req.keep_service)

    with opened(names, lambda h: ctx(h, accept, workdir), address) as hosts:
        for host in hosts if not detach else ():  # the log's local copy: before launching
            check_copy_folder(cache_root() / "runs" / host.target.name)
        try:
            outcome = start_run(
                pipeline,
                hosts,
                req,
                spread,
                on_event=lambda e: emit(err, view.lines(e)),
                wait_ready=wait_ready,
                launching=launching,
            )
        except BaseException:
            for _, stream in early.values():  # no run: its process on the target leaves
                stream.close()
            raise
        info = outcome.run
        if group is None:  # one target: followed on the connection it was launched on
            return _follow_one(hosts[0], info, early, detach, as_json)
    if detach:
        err.print(f"follow it with: harness logs {info.id} -t {','.join(group)} --follow")
        return 0
    with launched(info.id, ",".join(group), f" -t {','.join(group)}"):
        code = follow_group(outcome.followed, info.id, accept, workdir)
    finish(outcome.launch)
    return code


def _follow_one(
    one: Host,
    info: RunInfo,
    early: dict[str, tuple[str, ByteStream]],
    detach: bool,
    as_json: bool,
) -> int:
    """One target's run: followed to its exit code on the stream opened while launching (when
    it reads the run directory the launch made), or said started when detached."""
    from harness.cli.common import console
    from harness.cli.foreground import launched
    from harness.cli.screen import SCREEN
    from harness.runs.follow.attach import follow_run, print_next

    where, first = early.pop(one.node.host, (None, None))
    if first is not None and where != info.record.run_dir.rstrip("/"):
        first.close()  # not where the launch put the run: follow it as usual
        first = None
    if not detach:
        with launched(info.id, one.target.label, one.ctx.flag):
            return follow_run(
                one.ctx, one.target, info, start=0, follow=True, screen=SCREEN, first=first
            )
    if as_json:
        print_json(info.to_dict())
    else:
        err = console(stderr=True)
        err.print(f"started [bold]{info.id}[/] (detached)")
        print_next(err, one.ctx, info)
    return 0


def follow_group(hosts: Sequence[str], run_id: str, accept: bool, workdir: str | None) -> int:
    """Follow ``run_id`` on every host to its end, each line with ``[host]`` in front."""
    from harness.cli.across import detached, follow_each, followed
    from harness.cli.common import console
    from harness.cli.screen import SCREEN
    from harness.runs.follow.commands import show_logs

    err = console(stderr=True)
    try:
        codes = follow_each(
            hosts,
            lambda h: raise_code(
                show_logs(ctx(h, accept, workdir), run_id, follow=True, screen=SCREEN)
            ),
        )
    except KeyboardInterrupt:
        return detached(err, run_id, hosts)
    return followed(err, run_id, hosts, codes)


def register(app: typer.Typer) -> None:
    app.command("run")(run_cmd)
