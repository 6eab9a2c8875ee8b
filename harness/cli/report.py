"""``harness report``: the review document, registered on the main app by ``harness.cli``."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from harness.cli.across import on_group
from harness.cli.common import (
    check_output,
    console,
    emit,
    hosts_config,
    show,
    target_for,
    write_output,
)
from harness.cli.options import AcceptOpt, TargetOpt

if TYPE_CHECKING:
    from harness.report.request import ReviewRequest


def report_cmd(
    step: Annotated[str | None, typer.Argument(help="the pipeline step that would run")] = None,
    target: TargetOpt = None,
    fmt: Annotated[str, typer.Option("--format", help="terminal | md | html | json")] = "terminal",
    output: Annotated[
        Path | None,
        typer.Option("-o", "--output", dir_okay=False, help="write to FILE instead"),
    ] = None,
    caller: Annotated[
        list[str] | None,
        typer.Option("--caller", help="dist to check (default: the dist the patch series is for)"),
    ] = None,
    patches: Annotated[Path | None, typer.Option("--patches", file_okay=False)] = None,
    pipeline: Annotated[Path | None, typer.Option("--pipeline", dir_okay=False)] = None,
    sets: Annotated[
        list[str] | None,
        typer.Option("--set", help="NAME=VALUE: a step parameter, as `harness run` takes it"),
    ] = None,
    require_smoke: Annotated[
        bool,
        typer.Option(
            "--require-smoke",
            help="a step not smoke-tested since its series or environment changed is a "
            "blocker, not a warning",
        ),
    ] = False,
    require_verified: Annotated[
        bool,
        typer.Option(
            "--require-verified",
            help="a step with no verified run since its series, callee versions or pipeline "
            "entry changed is a blocker, not a warning",
        ),
    ] = False,
    accept_new_host_key: AcceptOpt = False,
) -> None:
    """Whether the run can work, and why: facts, patches, check, the step, a verdict."""
    import json

    from harness.patching.series import patches_root
    from harness.report.build import build_review
    from harness.report.request import ReviewRequest
    from harness.runs.target.describe import StepRequest
    from harness.views import review as render

    overrides = _checked(fmt, output, sets)
    if output is not None and fmt == "terminal":  # no --format: the file's suffix says which
        fmt = {".html": "html", ".htm": "html", ".json": "json"}.get(output.suffix.lower(), "md")
    _flags_apply(step, pipeline, require_smoke, require_verified)
    request = ReviewRequest(
        patches_root(patches),
        None if step is None else StepRequest(step, pipeline, overrides),
        callers=caller,
        require_smoke=require_smoke,
        require_verified=require_verified,
    )
    with target_for(target, accept_new_host_key) as t:
        review = build_review(t, request)
    if fmt == "terminal" and output is None:
        emit(console(), render.terminal_lines(review))
    else:
        text = {
            "md": render.markdown,
            "html": render.html_page,
            "json": lambda r: json.dumps(r.to_dict(), indent=2) + "\n",
            "terminal": render.markdown,
        }[fmt](review)
        if output is not None:
            write_output(output, text, "-o")
            console().print(f"{review.verdict}: wrote {output}")
        else:
            import sys

            sys.stdout.write(text)
    if not review.ready:
        raise typer.Exit(1)


def report_on_group(hosts: tuple[str, ...], **kw: Any) -> None:
    """The same arguments checked first, then ``_group_report``."""
    from harness.patching.series import patches_root
    from harness.report.request import ReviewRequest
    from harness.runs.target.describe import StepRequest

    overrides = _checked(kw["fmt"], kw["output"], kw["sets"])
    _flags_apply(kw["step"], kw["pipeline"], kw["require_smoke"], kw["require_verified"])
    step = kw["step"]
    request = ReviewRequest(
        patches_root(kw["patches"]),
        None if step is None else StepRequest(step, kw["pipeline"], overrides),
        callers=kw["caller"],
        require_smoke=kw["require_smoke"],
        require_verified=kw["require_verified"],
    )
    _group_report(hosts, kw["fmt"], kw["output"], kw["accept_new_host_key"], request)


def _flags_apply(
    step: str | None, pipeline: Path | None, require_smoke: bool, require_verified: bool
) -> None:
    """A step the pipeline does not have (or a pipeline that does not load), and
    --require-smoke / --require-verified for a step that could never meet them: refused
    before any connection, not after a whole review."""
    if step is None and not (require_smoke or require_verified):
        return
    from harness.launch.gates import refuse_flags_that_cannot_apply
    from harness.runs.pipeline.file import find_pipeline_file, load_pipeline

    loaded = load_pipeline(find_pipeline_file(pipeline))
    if step is not None and step not in loaded.steps:
        from harness.runs.pipeline.resolve import resolve_step

        resolve_step(loaded, step, {}, {})  # the usual "no step" line, with a guess
    refuse_flags_that_cannot_apply(loaded, step, require_smoke, require_verified)


def _checked(fmt: str, output: Any, sets: Any) -> dict[str, str]:
    """The --set overrides; a bad --format or -o refused before any connection."""
    from harness.errors import UsageError
    from harness.runs.pipeline.resolve import parse_sets

    overrides = parse_sets(sets or [])
    if fmt not in ("terminal", "md", "html", "json"):
        raise UsageError(f"--format {fmt!r}", "use terminal, md, html or json")
    if output is not None:
        check_output(output, "-o")
    return overrides


def _group_report(
    hosts: tuple[str, ...], fmt: str, output: Any, accept: bool, request: "ReviewRequest"
) -> None:
    """The review of every host at once, one sameness table, one verdict."""
    import json
    import sys

    from harness.group import review as group_review
    from harness.report.build import build_review
    from harness.targets.registry import open_target
    from harness.views import review as render
    from harness.views.reading import sameness_table

    cfg = hosts_config()

    def one(name: str) -> Any:
        with open_target(name, cfg, accept_new_host_key=accept) as t:
            return build_review(t, request)

    got = group_review.build(hosts, one)
    if fmt == "json":
        text = json.dumps(got.to_dict(), indent=2) + "\n"
        (write_output(output, text, "-o") if output else sys.stdout.write(text))
    elif fmt in ("md", "html") or output is not None:
        page = render.markdown if fmt in ("md", "terminal") else render.html_page
        parts = [page(r.unwrap()) for r in got.reviews.succeeded]
        parts += [f"# {r.host}: {r.error}\n" for r in got.reviews.failed]
        if got.blockers:
            parts.append("# Across hosts\n\n" + "".join(f"- {b}\n" for b in got.blockers))
        text = "\n".join(parts)
        if output is not None:
            write_output(output, text, "-o")
        else:
            sys.stdout.write(text)
    else:
        out = console()
        for r in got.reviews.results:
            if r.ok:
                emit(out, render.terminal_lines(r.unwrap(), brief=True))
            else:
                out.print(f"[red]{r.host}: {r.error}[/]")
        if got.sameness is not None:
            show(out, sameness_table(got.sameness))
        color = "green" if got.ready else "red"
        verdict = "ready" if got.ready else "not ready"
        out.print(f"[bold]across {len(hosts)} hosts:[/] [bold {color}]{verdict}[/]")
    if not got.ready:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add these commands to ``app`` (in this order: it is ``--help``'s)."""
    app.command("report")(on_group(report_on_group)(report_cmd))
