"""A step as ``harness run`` would launch it on a target: argv, cwd, env, needs -- no launch.

``harness report`` shows it; ``harness run`` resolves through the same :func:`resolve_on`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name

from harness.runs import remote
from harness.runs.context import workdir_for
from harness.runs.pipeline import find_pipeline_file, load_pipeline
from harness.runs.resolve import resolve_step
from harness.runs.state import tensor_parallel
from harness.runs.steps import SMOKE_DIR, Pipeline, ResolvedStep
from harness.targets.base import Target


def resolve_on(
    target: Target,
    pipeline: Pipeline,
    step: str,
    workdir: str,
    run_id: str,
    overrides: dict[str, str],
    extra: Sequence[str],
    smoke: Any = None,
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
    }
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
    from harness.reading.probe import gather_facts
    from harness.runs.needs import needs, pip_line, step_paths

    pipeline = load_pipeline(find_pipeline_file(pipeline_file))
    workdir = workdir_for(target, os.environ.get("HARNESS_WORKDIR"), absolute=True)
    assert workdir is not None
    resolved = resolve_on(target, pipeline, step, workdir, "<run-id>", overrides, ())
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
