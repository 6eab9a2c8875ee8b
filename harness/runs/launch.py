"""``harness run``: resolve the step, preflight with one-line verdicts, launch detached, attach.

Also ``describe_step``, which ``harness report`` uses to show a step without running it.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.utils import canonicalize_name

from harness.errors import RunError
from harness.runs import remote
from harness.runs.attach import follow_run, print_next
from harness.runs.context import Context, workdir_for
from harness.runs.models import GpuHolder
from harness.runs.pipeline import (
    BUILTINS,
    SMOKE_DIR,
    Pipeline,
    ResolvedStep,
    find_pipeline_file,
    load_pipeline,
    parse_sets,
    resolve_step,
    step_parameters,
)
from harness.runs.preflight import Preflight, decide
from harness.runs.state import new_run_id, tensor_parallel
from harness.targets.base import Target

if TYPE_CHECKING:
    from harness.report.model import Review


def run_step(
    ctx: Context,
    step: str | None,
    *,
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
) -> int:
    """Preflight, launch detached, then (unless ``detach``) follow to the step's exit code."""
    from harness.runs import smoke as smoke_mode
    from harness.runs import view

    err = view.console(stderr=True)
    pipeline = load_pipeline(find_pipeline_file(pipeline_file))
    if step is None:
        _list_steps(pipeline, as_json)
        return 0
    overrides = parse_sets(sets)
    if step not in pipeline.steps or overrides:  # a typo should not cost a handshake
        resolve_step(pipeline, step, dict.fromkeys(BUILTINS, ""), overrides)
    plan = smoke_mode.plan(pipeline, step, smoke_layers, smoke_samples) if smoke else None
    if plan is not None:  # the step's smoke params win: its outputs must go to {smoke_dir}
        overrides = {**overrides, **plan.sets}
    with ctx.open() as target:
        workdir = workdir_for(target, ctx.workdir, absolute=True)
        assert workdir is not None
        run_id = new_run_id(step)
        resolved = _resolve(target, pipeline, step, workdir, run_id, overrides, extra, plan)
        err.print(f"[bold]{view.esc(step)}[/] on {view.esc(target.label)}: ", end="")
        err.print(resolved.display(), markup=False, highlight=False, soft_wrap=True)
        if plan is not None:
            where = smoke_mode.smoke_dir(f"{remote.runs_root(workdir)}/{run_id}")
            err.print(
                f"smoke run: {plan.layers} decoder layers, dummy weights"
                + (f", {plan.samples} samples" if plan.samples else "")
                + f"; outputs under {where}",
                soft_wrap=True,
                markup=False,
            )
        review = _gate(
            target, step, pipeline_file, overrides, patches, force, err, require_smoke, plan
        )
        stale = _preflight(ctx, target, workdir, resolved, kill_stale, err)
        launched = remote.launch(
            target,
            run_id,
            workdir,
            resolved,
            pipeline=pipeline.path,
            timings=ctx.timings,
            kill_first=stale,
            review=review,
            smoke=None
            if plan is None
            else {**plan.to_dict(), "fingerprint": smoke_mode.fingerprint(review)},
            hook=None if plan is None else {"sitecustomize.py": smoke_mode.hook_source()},
        )
        if launched.killed:
            err.print(f"ended stale GPU process(es): {', '.join(map(str, launched.killed))}")
        if launched.kill_remaining:
            left = ", ".join(map(str, launched.kill_remaining))
            err.print(f"[red]still alive after SIGKILL: {left}[/]")
        info = launched.run
        if not detach:
            return follow_run(ctx, target, info, start=0, follow=True)
        if as_json:
            sys.stdout.write(json.dumps(info.to_dict(), indent=2) + "\n")
        else:
            err.print(f"started [bold]{info.id}[/] (detached)")
            print_next(err, ctx, info)
        return 0


def _gate(
    target: Target,
    step: str,
    pipeline_file: Path | None,
    overrides: dict[str, str],
    patches: Path | None,
    force: bool,
    err: Any,
    require_smoke: bool = False,
    smoke: Any = None,
) -> dict[str, Any]:
    """The pre-run review: print its summary; refuse "not ready" unless ``force``.

    The review (JSON) goes into the run directory, so a run can always say what it was
    started on.
    """
    from harness.errors import NotReady
    from harness.report.render import terminal

    review = _review(target, step, pipeline_file, overrides, patches, require_smoke, smoke)
    terminal(err, review, brief=True)
    blockers = [r for r in review.reasons if r.severity == "blocker"]
    if blockers and not force:
        raise NotReady(
            f"not launching {step}: the review says not ready ({len(blockers)} blocker(s))",
            f"read it with `harness report {step}`; fix the blockers, or pass --force",
        )
    if blockers:
        err.print("[yellow]launching anyway (--force)[/]")
    return review.to_dict()


def _review(
    target: Target,
    step: str,
    pipeline_file: Path | None,
    overrides: dict[str, str],
    patches: Path | None,
    require_smoke: bool = False,
    smoke: Any = None,
) -> Review:
    """The review a launch is gated on (``harness report STEP``'s), GPU holders left out."""
    from harness.patching.series import patches_root
    from harness.report.build import build_review

    # Stale GPU holders are the preflight's to refuse or end (--kill-stale), in its own words.
    return build_review(
        target,
        patches_root(patches),
        step=step,
        pipeline=pipeline_file,
        overrides=overrides,
        stale=False,
        require_smoke=require_smoke and smoke is None,
        check_smoke=smoke is None,  # a smoke run is the test itself
    )


def _resolve(
    target: Target,
    pipeline: Pipeline,
    step: str,
    workdir: str,
    run_id: str,
    overrides: dict[str, str],
    extra: Sequence[str],
    smoke: Any = None,
    node: dict[str, str] | None = None,
) -> ResolvedStep:
    """The step's argv/cwd/env for this target: built-ins filled in, host env underneath.

    ``PYTHONUNBUFFERED=1`` by default: a Python step's prints reach the log (and the
    laptop) as they happen, not in 8 KB blocks. A smoke run also gets ``{smoke_dir}`` and
    the hook's switch (``HARNESS_SMOKE``) in its environment.
    """
    from harness.runs import smoke as smoke_mode

    host = getattr(target, "host", None)
    builtins = {
        "workdir": workdir,
        "python": target.python_argv()[0],
        "run_id": run_id,
        "run_dir": f"{remote.runs_root(workdir)}/{run_id}",
        "step": step,
        **(node or _ONE_NODE),
    }
    if not node:
        builtins["head"] = host.address if host is not None else "127.0.0.1"
    builtins[SMOKE_DIR] = smoke_mode.smoke_dir(builtins["run_dir"])
    resolved = resolve_step(
        pipeline,
        step,
        builtins=builtins,
        sets=overrides,
        extra=extra,
        base_env={"PYTHONUNBUFFERED": "1", **(dict(host.env) if host is not None else {})},
    )
    if smoke is None:
        return resolved
    return replace(resolved, env={**resolved.env, **smoke.env})


#: a step spread over hosts, run on one: node 0 of 1 (``head`` is the host's own address)
_ONE_NODE = {"shard": "0", "num_shards": "1", "node_rank": "0", "nnodes": "1"}


def _preflight_facts(
    ctx: Context, target: Target, workdir: str, resolved: ResolvedStep, kill_stale: bool
) -> Preflight:
    """The preflight's verdicts for ``resolved`` on ``target`` (decided, not printed)."""
    facts = remote.preflight(target, workdir, resolved, ctx.device_glob)
    return decide(
        facts,
        target.label,
        kill_stale=kill_stale,
        tensor_parallel=tensor_parallel(resolved.argv),
        visible=resolved.env.get("CUDA_VISIBLE_DEVICES"),
    )


def _preflight(
    ctx: Context,
    target: Target,
    workdir: str,
    resolved: ResolvedStep,
    kill_stale: bool,
    err: Any,
) -> tuple[GpuHolder, ...]:
    """Print the verdicts; refuse on any failure; return the stale holders to end first."""
    from harness.runs import view

    checked = _preflight_facts(ctx, target, workdir, resolved, kill_stale)
    # The patch series is judged by the review gate (_gate), where --force can override it.
    verdicts = tuple(checked.verdicts)
    view.verdicts(err, verdicts)
    failed = [v for v in verdicts if v.level == "fail"]
    if failed:
        raise RunError(
            f"preflight refused to launch {resolved.step}: " + ", ".join(v.check for v in failed),
            failed[0].hint,
        )
    return checked.stale


def _list_steps(pipeline: Pipeline, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(pipeline.to_dict(), indent=2) + "\n")
        return
    from harness.runs import view

    out = view.console()
    out.print(f"steps in {pipeline.path}:")
    for name, step in pipeline.steps.items():
        out.print(f"  [bold]{name}[/]  {step.help}", soft_wrap=True)
        params = sorted(step_parameters(pipeline, step))
        out.print(f"      [dim]parameters: {', '.join(params) or 'none'}[/]", soft_wrap=True)
    out.print("run one with: harness run STEP [-t TARGET] [--set NAME=VALUE ...] [-- ARGS]")


def describe_step(
    target: Target, step: str, pipeline_file: Path | None, overrides: dict[str, str]
) -> dict[str, Any]:
    """The step as ``harness run`` would launch it on ``target`` (secrets masked), no launch.

    Keys: ``name``, ``command`` (argv), ``cwd``, ``env``, ``tensor_parallel`` (from
    ``--tensor-parallel-size``/``-tp`` in the command, else ``None``), ``pipeline``,
    ``checks`` (the callers the step exercises; ``None``: undeclared), ``requires`` (each
    declared need against the version the step's own imports see) and ``pip`` (the line that
    meets the unmet ones).
    """
    from harness.probe import gather_facts
    from harness.runs.needs import needs, pip_line, step_paths

    pipeline = load_pipeline(find_pipeline_file(pipeline_file))
    workdir = workdir_for(target, os.environ.get("HARNESS_WORKDIR"), absolute=True)
    assert workdir is not None
    resolved = _resolve(target, pipeline, step, workdir, "<run-id>", overrides, ())
    record = remote.masked_record("<run-id>", resolved, target, workdir, pipeline.path)
    declared = pipeline.steps[step]
    rows, pip = [], None
    if declared.requires:
        paths = step_paths(resolved.env, resolved.cwd)
        seen = gather_facts(target, list(declared.requires), prepend=paths, gpus=False).dists
        found = {str(canonicalize_name(k)): v for k, v in seen.items()}
        rows = needs(declared.requires, found)
        unmet = [n for n in rows if not n.ok]
        pip = pip_line(target.python_argv()[0], unmet, paths) if unmet else None
    return {
        "name": step,
        "command": list(record.argv),
        "cwd": record.cwd,
        "env": dict(record.env),
        "tensor_parallel": tensor_parallel(resolved.argv),
        "pipeline": pipeline.path,
        "checks": None
        if declared.checks is None
        else {c: list(v) for c, v in declared.checks.items()},
        "smoke": None if declared.smoke is None else declared.smoke.to_dict(),
        "workdir": workdir,
        "requires": [n.to_dict() for n in rows],
        "pip": pip,
    }
