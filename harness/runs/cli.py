"""``harness run``, ``runs``, ``logs``, ``stop``: registered on the main app by ``harness.cli``.

Thin: parse, call one function (:mod:`~harness.runs.launch`, :mod:`~harness.runs.commands`),
exit with what it returns.
Nothing heavy is imported until a command runs (``harness --help`` stays fast).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from harness.cli_options import AcceptOpt, JsonOpt, TargetOpt

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


def register(app: typer.Typer) -> None:
    from harness import cli as root

    def ctx(target: str | None, accept: bool, workdir: str | None = None) -> Context:
        from harness.runs.context import context

        return context(root._hosts(), target, accept, workdir)

    @app.command("run")
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
                "decoder layers and samples, outputs under .harness/smoke",
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
        as_json: JsonOpt = False,
        accept_new_host_key: AcceptOpt = False,
    ) -> None:
        """Review, preflight and launch a pipeline step detached on the target; follow its log.

        Exits with the step's exit code (128+N for signal N). Ctrl-C detaches: the step
        keeps running; reattach with harness logs RUN --follow.
        """
        from harness.group.spec import expand
        from harness.runs.launch import run_step

        hosts_cfg = root._hosts()
        group = expand(target, hosts_cfg) if step else None
        if group is not None:  # one step over several hosts, as its `spread` says
            from harness.cli_options import State
            from harness.group.runs import run_across

            raise typer.Exit(
                run_across(
                    hosts_cfg, group, step or "",
                    make_ctx=lambda h: ctx(h, accept_new_host_key, workdir),
                    pipeline_file=pipeline, sets=sets or [], extra=extra or [],
                    detach=detach, kill_stale=kill_stale, force=force, patches=patches,
                    hosts_file=State.hosts_file,
                )
            )  # fmt: skip
        code = run_step(
            ctx(target, accept_new_host_key, workdir),
            step,
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
        )
        raise typer.Exit(code)

    @app.command("runs")
    def runs_cmd(
        target: TargetOpt = None,
        workdir: WorkdirOpt = None,
        as_json: JsonOpt = False,
        accept_new_host_key: AcceptOpt = False,
    ) -> None:
        """List runs on the target: id, step, state, started, duration, exit."""
        from harness.group.spec import expand
        from harness.runs.commands import list_runs

        group = expand(target, root._hosts())
        if group is not None:
            from harness.group.runs import list_across

            raise typer.Exit(
                list_across(lambda h: ctx(h, accept_new_host_key, workdir), group, as_json)
            )

        raise typer.Exit(list_runs(ctx(target, accept_new_host_key, workdir), as_json))

    @app.command("logs")
    def logs_cmd(
        run: Annotated[
            str, typer.Argument(help="run id, a unique prefix of one, a step name, or 'last'")
        ],
        follow: Annotated[
            bool,
            typer.Option(
                "--follow", "-f", help="keep reading until the run ends; exit with its code"
            ),
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
        from harness.group.spec import expand
        from harness.runs.commands import show_logs

        group = expand(target, root._hosts())
        if group is not None:  # each host's log, interleaved, with its name in front
            from harness.cli_options import State
            from harness.group.runs import follow_across
            from harness.runs import view

            more = [*(["--tail", str(tail)] if tail is not None else []),
                    *(["--offset", str(offset)] if offset is not None else [])]  # fmt: skip
            raise typer.Exit(
                follow_across(
                    group,
                    run,
                    State.hosts_file,
                    view.console(stderr=True),
                    follow=follow,
                    extra=more,
                )
            )

        code = show_logs(
            ctx(target, accept_new_host_key, workdir),
            run,
            follow=follow,
            tail=tail,
            offset=offset,
        )
        raise typer.Exit(code)

    @app.command("stop")
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
        from harness.group.spec import expand
        from harness.runs.commands import stop_run

        group = expand(target, root._hosts())
        if group is not None:
            from harness.group.runs import stop_across

            raise typer.Exit(
                stop_across(lambda h: ctx(h, accept_new_host_key, workdir), group, run, grace)
            )

        code = stop_run(
            ctx(target, accept_new_host_key, workdir),
            run,
            grace=grace,
            as_json=as_json,
        )
        raise typer.Exit(code)
