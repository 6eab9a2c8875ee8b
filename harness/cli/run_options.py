"""``harness run``'s options (and ``--workdir``, which ``runs`` / ``logs`` / ``stop`` share),
declared apart from the command so that its signature reads as a list."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

WorkdirOpt = Annotated[
    str | None,
    typer.Option(
        "--workdir",
        envvar="HARNESS_WORKDIR",
        help="folder on the target that holds .harness/runs/ and is {workdir} in the "
        "pipeline (default: hosts.toml's workdir; local: the current folder; SSH: home)",
    ),
]

StepOpt = Annotated[
    str | None,
    typer.Argument(help="a step of the pipeline file; leave out to list the steps"),
]
ExtraOpt = Annotated[
    list[str] | None,
    typer.Argument(help="after --: arguments appended to the step's command"),
]
SetsOpt = Annotated[
    list[str] | None,
    typer.Option("--set", help="override a parameter: NAME=VALUE (repeatable)"),
]
PipelineOpt = Annotated[
    Path | None,
    typer.Option(
        "--pipeline",
        help="pipeline file (default: $HARNESS_PIPELINE, else ./pipeline.toml or a "
        "parent folder's)",
        dir_okay=False,
    ),
]
DetachOpt = Annotated[bool, typer.Option("--detach", "-d", help="launch and return; do not follow")]
KillStaleOpt = Annotated[
    bool,
    typer.Option(
        "--kill-stale",
        help="end stale processes holding GPUs first (SIGTERM, SIGKILL after the "
        "grace period) instead of refusing",
    ),
]
ForceOpt = Annotated[
    bool, typer.Option("--force", help="launch even when the review says not ready")
]
PatchesOpt = Annotated[
    Path | None,
    typer.Option("--patches", file_okay=False, help="the patches/ folder to review"),
]
SmokeOpt = Annotated[
    bool,
    typer.Option(
        "--smoke",
        help="same step, same code path: dummy weights (no checkpoint is read), a few "
        "decoder layers and samples, outputs under WORKDIR/.harness/runs/RUN_ID/smoke",
    ),
]
SmokeLayersOpt = Annotated[
    int | None,
    typer.Option(
        "--smoke-layers",
        help="decoder layers to keep (default 2, or the step's smoke.layers if more)",
    ),
]
SmokeSamplesOpt = Annotated[int | None, typer.Option("--smoke-samples", help="samples (default 4)")]
RequireSmokeOpt = Annotated[
    bool,
    typer.Option(
        "--require-smoke",
        help="refuse a step not smoke-tested since its series or environment changed",
    ),
]
RequireVerifiedOpt = Annotated[
    bool,
    typer.Option(
        "--require-verified",
        help="refuse a step with no run whose output passed its check since its series, "
        "callee versions or pipeline entry changed",
    ),
]
KeepServiceOpt = Annotated[
    bool,
    typer.Option(
        "--keep-service",
        help="leave the services the step needs running when it ends, for the next run "
        "to reuse (stop them with harness stop)",
    ),
]
