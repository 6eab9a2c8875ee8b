"""``harness run``'s lines as its use case tells what happens (:mod:`harness.runs.launch`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.group.events import (
    ClusterStopped,
    ClusterUp,
    Compared,
    Forced,
    Launched,
    Preflighted,
    Resolved,
    Reviewed,
    RunEvent,
    Started,
)  # fmt: skip
from harness.views.fold import cut_command
from harness.views.reading import sameness_table
from harness.views.review import terminal
from harness.views.runs import esc, verdicts

if TYPE_CHECKING:
    from rich.console import Console

    from harness.runs.steps import Pipeline


def show(err: Console, event: RunEvent) -> None:
    """One event, on stderr, as ``harness run`` has always said it (a host's lines name it)."""
    if isinstance(event, Resolved):
        where = esc(event.target) if event.host is None else esc(event.host)
        if event.rank is not None:
            where += f" (node {event.rank})"
        err.print(f"[bold]{esc(event.step)}[/] on {where}: ", end="")
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
    elif isinstance(event, Compared):
        sameness_table(err, event.sameness)
    elif isinstance(event, Forced):
        err.print("[yellow]launching anyway (--force)[/]")
    elif isinstance(event, Preflighted):
        verdicts(err, event.verdicts, prefix="" if event.host is None else f"{event.host}: ")
    elif isinstance(event, ClusterUp):
        err.print(f"Ray cluster up in {event.seconds:.1f} s: {event.nodes}")
    elif isinstance(event, ClusterStopped):
        left = f"; could not stop it on {', '.join(event.left)}" if event.left else ""
        err.print(f"Ray cluster stopped in {event.seconds:.1f} s{left}")
    elif isinstance(event, Launched):
        if event.killed:
            err.print(f"ended stale GPU process(es): {', '.join(map(str, event.killed))}")
        if event.kill_remaining:
            left = ", ".join(map(str, event.kill_remaining))
            err.print(f"[red]still alive after SIGKILL: {left}[/]")
    elif isinstance(event, Started):
        err.print(f"started [bold]{event.run_id}[/] on {', '.join(event.hosts)}")


def steps(out: Console, pipeline: Pipeline) -> None:
    """``harness run`` without a step: the steps of the pipeline and their parameters."""
    from harness.runs.resolve import step_parameters

    out.print(f"steps in {pipeline.path}:")
    for name, step in pipeline.steps.items():
        out.print(f"  [bold]{name}[/]  {step.help}", soft_wrap=True)
        params = sorted(step_parameters(pipeline, step))
        out.print(f"      [dim]parameters: {', '.join(params) or 'none'}[/]", soft_wrap=True)
    out.print("run one with: harness run STEP [-t TARGET] [--set NAME=VALUE ...] [-- ARGS]")
