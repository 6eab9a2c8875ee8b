"""``harness run``'s lines as its use case tells what happens (:mod:`harness.launch.start`):
renderables back, printed by the CLI."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.launch.events import (
    ClusterStopped,
    ClusterUp,
    Compared,
    DiskChecked,
    Forced,
    Launched,
    Preflighted,
    Resolved,
    Reviewed,
    RunEvent,
    ServiceUp,
    Started,
)
from harness.views.fold import cut_command
from harness.views.lines import Lines
from harness.views.reading import sameness
from harness.views.review import terminal_lines
from harness.views.runs import esc, verdict_lines

if TYPE_CHECKING:
    from rich.console import RenderableType

    from harness.runs.pipeline.steps import Pipeline


def lines(event: RunEvent) -> list[RenderableType]:
    """What ``harness run`` has always said for one event (a host's lines name it): markup
    strings and Rich renderables, for the CLI to print on stderr."""
    from rich.text import Text

    if isinstance(event, Resolved):
        where = esc(event.target) if event.host is None else esc(event.host)
        if event.rank is not None:
            where += f" (node {event.rank})"
        head = Text.from_markup(f"[bold]{esc(event.step)}[/] on {where}: ")
        out: list[RenderableType] = [head + Text(cut_command(event.command))]
        plan = event.smoke
        if plan is not None:
            out.append(
                Text(
                    f"smoke run: {plan.layers} decoder layers, dummy weights"
                    + (f", {plan.samples} samples" if plan.samples else "")
                    + f"; outputs under {event.smoke_dir}"
                )
            )
        return out
    if isinstance(event, Reviewed):
        return list(terminal_lines(event.review, brief=True))
    if isinstance(event, Compared):
        return sameness(event.sameness)
    if isinstance(event, Forced):
        return ["[yellow]launching anyway (--force)[/]"]
    if isinstance(event, Preflighted):
        return list(verdict_lines(event.verdicts, "" if event.host is None else f"{event.host}: "))
    if isinstance(event, ClusterUp):
        return [f"Ray cluster up in {event.seconds:.1f} s: {esc(event.nodes)}"]
    if isinstance(event, ClusterStopped):
        left = f"; could not stop it on {', '.join(event.left)}" if event.left else ""
        return [f"Ray cluster stopped in {event.seconds:.1f} s{left}"]
    if isinstance(event, DiskChecked):
        b = event.budget
        mark = "[green]✓[/]" if b.fits else "[yellow]![/]"
        tail = " -- launching anyway (--force)" if event.forced else ""
        said: list[RenderableType] = [f"{mark} disk: {esc(b.words())}{tail}"]
        return said + [f"[yellow]! {esc(w)}[/]" for w in b.warnings()]
    if isinstance(event, ServiceUp):
        if event.reused:
            return [
                f"[green]✓[/] service {esc(event.step)}: reusing {event.run_id}, ready on "
                f":{event.port}"
            ]
        took = "" if event.seconds is None else f" in {event.seconds:.1f} s"
        return [
            f"[green]✓[/] service {esc(event.step)}: {event.run_id} ready on :{event.port}{took}"
        ]
    if isinstance(event, Launched):
        out = []
        if event.killed:
            out.append(f"ended stale GPU process(es): {', '.join(map(str, event.killed))}")
        if event.kill_remaining:
            out.append(
                f"[red]still alive after SIGKILL: {', '.join(map(str, event.kill_remaining))}[/]"
            )
        return out
    if isinstance(event, Started):
        return [f"started [bold]{event.run_id}[/] on {', '.join(event.hosts)}"]
    return []


def steps(pipeline: Pipeline) -> Lines:
    """``harness run`` without a step: the steps of the pipeline and their parameters."""
    lines = Lines()
    from harness.runs.pipeline.resolve import step_parameters

    lines.add(f"steps in {pipeline.path}:")
    for name, step in pipeline.steps.items():
        lines.add(f"  [bold]{name}[/]  {step.help}", soft_wrap=True)
        params = sorted(step_parameters(pipeline, step))
        lines.add(f"      [dim]parameters: {', '.join(params) or 'none'}[/]", soft_wrap=True)
    lines.add("run one with: harness run STEP [-t TARGET] [--set NAME=VALUE ...] [-- ARGS]")
    return lines
