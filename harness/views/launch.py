"""``harness run``'s lines as its use case tells what happens (:mod:`harness.runs.launch`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.runs.launch import Launched, Preflighted, Resolved, Reviewed, RunEvent
from harness.views.fold import cut_command
from harness.views.review import terminal
from harness.views.runs import esc, verdicts

if TYPE_CHECKING:
    from rich.console import Console

    from harness.runs.steps import Pipeline


def show(err: Console, event: RunEvent) -> None:
    """One event, on stderr, as ``harness run`` has always said it."""
    if isinstance(event, Resolved):
        err.print(f"[bold]{esc(event.step)}[/] on {esc(event.target)}: ", end="")
        err.print(cut_command(event.command), markup=False, highlight=False, soft_wrap=True)
        plan = event.smoke
        if plan is not None:
            err.print(
                f"smoke run: {plan.layers} decoder layers, dummy weights"
                + (f", {plan.samples} samples" if plan.samples else "")
                + f"; outputs under {event.smoke_dir}",
                soft_wrap=True,
                markup=False,
            )
    elif isinstance(event, Reviewed):
        terminal(err, event.review, brief=True)
        if event.forced:
            err.print("[yellow]launching anyway (--force)[/]")
    elif isinstance(event, Preflighted):
        verdicts(err, event.verdicts)
    elif isinstance(event, Launched):
        if event.killed:
            err.print(f"ended stale GPU process(es): {', '.join(map(str, event.killed))}")
        if event.kill_remaining:
            left = ", ".join(map(str, event.kill_remaining))
            err.print(f"[red]still alive after SIGKILL: {left}[/]")


def steps(out: Console, pipeline: Pipeline) -> None:
    """``harness run`` without a step: the steps of the pipeline and their parameters."""
    from harness.runs.resolve import step_parameters

    out.print(f"steps in {pipeline.path}:")
    for name, step in pipeline.steps.items():
        out.print(f"  [bold]{name}[/]  {step.help}", soft_wrap=True)
        params = sorted(step_parameters(pipeline, step))
        out.print(f"      [dim]parameters: {', '.join(params) or 'none'}[/]", soft_wrap=True)
    out.print("run one with: harness run STEP [-t TARGET] [--set NAME=VALUE ...] [-- ARGS]")
