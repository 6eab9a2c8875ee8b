"""``harness probe``, ``check``, ``diff``: reading what is installed, without importing it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from harness.cli.check_options import (
    AgainstOpt,
    BaselineFromOpt,
    BaselineOpt,
    CallerOpt,
    DryRunOpt,
    FixOpt,
    NameOpt,
    NoBaselineOpt,
    PatchesOpt,
    PipelineOpt,
    RequiresOpt,
    SetsOpt,
    SmokeOpt,
    StepOpt,
    WithPatchesOpt,
    check_usage,
)
from harness.cli.common import console, print_json, show, target_for
from harness.cli.options import AcceptOpt, JsonOpt, TargetOpt
from harness.errors import UsageError

if TYPE_CHECKING:
    from harness.analysis.findings import CheckReport
    from harness.targets.base import Target


def probe(
    ref: Annotated[
        str,
        typer.Argument(
            metavar="MODULE[:QUALNAME]",
            help="e.g. vllm.v1.core.kv_cache_utils or vllm.config:SchedulerConfig",
        ),
    ],
    target: TargetOpt = None,
    source: Annotated[bool, typer.Option("--source", help="print the symbol's source")] = False,
    live: Annotated[
        bool,
        typer.Option(
            "--live", help="import on the target and use inspect.signature (slow; runs module code)"
        ),
    ] = False,
    as_json: JsonOpt = False,
    accept_new_host_key: AcceptOpt = False,
) -> None:
    """Signatures and source locations of what is installed on the target, without importing."""
    from harness.reading.probe import probe as do_probe

    with target_for(target, accept_new_host_key) as t:
        report = do_probe(t, ref, source=source, live=live)
    if as_json:
        print_json(report.to_dict())
        return
    from harness.views.reading import probe_report

    show(console(), probe_report(report))


def check(
    caller: CallerOpt = None,
    against: AgainstOpt = None,
    target: TargetOpt = None,
    baseline: BaselineOpt = None,
    no_baseline: NoBaselineOpt = False,
    baseline_from: BaselineFromOpt = None,
    with_patches: WithPatchesOpt = False,
    patches: PatchesOpt = None,
    fix: FixOpt = False,
    dry_run: DryRunOpt = False,
    name: NameOpt = "check-fix",
    requires: RequiresOpt = None,
    step: StepOpt = None,
    pipeline: PipelineOpt = None,
    sets: SetsOpt = None,
    smoke: SmokeOpt = False,
    as_json: JsonOpt = False,
    accept_new_host_key: AcceptOpt = False,
) -> None:
    """Find every call from CALLER that no longer binds to what is installed -- in one pass;
    with --step, what the step passes to `vllm serve` too."""
    from harness.reading.check import check as do_check

    refused = check_usage(
        caller,
        step,
        with_step=pipeline is not None or bool(sets) or smoke,
        with_fix=dry_run or bool(requires) or name != "check-fix",
        fix=fix,
        with_patches=with_patches,
        no_baseline=no_baseline,
    )
    if refused is not None:
        raise refused
    if caller is None:
        _check_step(step or "", pipeline, sets or [], target, as_json, accept_new_host_key, smoke)
        return
    if fix:
        _fix(
            caller,
            against,
            target,
            baseline,
            baseline_from,
            patches,
            dry_run,
            name,
            requires or [],
            as_json,
            accept_new_host_key,
        )
        return

    root = None
    if with_patches:  # (packaging, which the series module imports, only then)
        from harness.patching.series import patches_root

        root = patches_root(patches)
    with target_for(target, accept_new_host_key) as t:
        report = do_check(
            t,
            caller,
            against=against,
            baseline=baseline,
            no_baseline=no_baseline,
            with_patches=root,
            baseline_from=baseline_from,
        )
        if step is not None:
            report = _with_serve(report, _serve_report(t, step, pipeline, sets or [], smoke))
    if as_json:
        print_json(report.to_dict())
    else:
        from harness.views.reading import check_report

        show(console(), check_report(report))
    if report.errors:
        raise typer.Exit(1)


def _serve_report(
    t: Target, step: str, pipeline: Path | None, sets: list[str], smoke: bool = False
) -> CheckReport:
    """The step's ``vllm serve`` arguments against ``t``'s vLLM (a usage error if the step
    starts no vLLM server); ``smoke``: those of its ``--smoke`` run."""
    from harness.runs.pipeline import smoke as smoke_mode
    from harness.runs.pipeline.file import find_pipeline_file, load_pipeline
    from harness.runs.pipeline.resolve import parse_sets
    from harness.runs.target.describe import StepRequest, describe
    from harness.runs.target.step_check import check_serve, pipeline_text

    overrides = parse_sets(sets)
    cut = None
    if smoke:
        cut = smoke_mode.plan(
            load_pipeline(find_pipeline_file(pipeline)), step, None, None, overrides
        )
    resolved_sets = {**overrides, **(cut.sets if cut else {})}
    plan = describe(t, StepRequest(step, pipeline, resolved_sets, smoke=cut))
    report = check_serve(t, plan, pipeline_text(plan), overrides)
    if report is not None:
        from harness.runs.target.step_check import outside

        report = outside(plan, report)  # the step's known_good, said here too
    if report is None:
        raise UsageError(
            f"step {step} does not start a vLLM server: its command is {' '.join(plan.command)}",
            "--step checks a step whose command runs `vllm serve` (or python -m "
            "vllm.entrypoints.openai.api_server)",
        )
    return report


def _with_serve(report: CheckReport, serve: CheckReport) -> CheckReport:
    from dataclasses import replace

    return replace(
        report,
        findings=report.findings + serve.findings,
        notes=report.notes + serve.notes,
        callees={**report.callees, **serve.callees},
        stats={**report.stats, "flags": serve.stats["flags"], "keys": serve.stats["keys"]},
    )


def _check_step(
    step: str,
    pipeline: Path | None,
    sets: list[str],
    target: str | None,
    as_json: bool,
    accept_new_host_key: bool,
    smoke: bool = False,
) -> None:
    with target_for(target, accept_new_host_key) as t:
        report = _serve_report(t, step, pipeline, sets, smoke)
    if as_json:
        print_json(report.to_dict())
    else:
        from harness.views.reading import check_report

        show(console(), check_report(report))
    if report.errors:
        raise typer.Exit(1)


def _fix(
    caller: str,
    against: list[str] | None,
    target: str | None,
    baseline: list[str] | None,
    baseline_from: Path | None,
    patches: Path | None,
    dry_run: bool,
    name: str,
    requires: list[str],
    as_json: bool,
    accept_new_host_key: bool,
) -> None:
    """``check --fix``: the patch for the mechanical breaks; exit 1 while any need a person."""
    from harness.fixing.run import fix
    from harness.patching.make import parse_requires
    from harness.patching.series import patches_root

    gates = parse_requires(requires)
    with target_for(target, accept_new_host_key) as t:
        report = fix(
            t,
            caller,
            patches_root(patches),
            against=against,
            baseline=baseline,
            baseline_from=baseline_from,
            slug=name,
            dry_run=dry_run,
            requires=gates,
        )
    if as_json:
        print_json(report.to_dict())
    else:
        from harness.views.fixing import fix_report

        show(console(), fix_report(report))
    if report.manual:
        raise typer.Exit(1)


def diff(
    dist: Annotated[str, typer.Argument(help="the dist whose API moved, e.g. vllm")],
    source: Annotated[
        str, typer.Option("--from", help="old side: a target, e.g. pypi:vllm==0.11.0")
    ],
    dest: Annotated[str, typer.Option("--to", help="new side: a target, e.g. gpu")],
    used_by: Annotated[
        str | None,
        typer.Option("--used-by", help="only what this caller dist uses, with its call sites"),
    ] = None,
    as_json: JsonOpt = False,
    accept_new_host_key: AcceptOpt = False,
) -> None:
    """How DIST's API moved between two targets: added, removed, moved, changed.
    Exit code 1 when a change is breaking (as `check` for errors), else 0."""
    from harness.reading.compare import diff as do_diff

    with (
        target_for(source, accept_new_host_key) as old,
        target_for(dest, accept_new_host_key) as new,
    ):
        report = do_diff(dist, old, new, used_by=used_by)
    if as_json:
        print_json(report.to_dict())
    else:
        from harness.views.reading import diff_report

        show(console(), diff_report(report))
    if report.counts()["breaking"]:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add these commands to ``app`` (in this order: it is ``--help``'s)."""
    for command in (probe, check, diff):
        app.command()(command)
