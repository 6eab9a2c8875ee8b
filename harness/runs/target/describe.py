"""A step as ``harness run`` would launch it on a target: argv, cwd, env, needs -- no launch.

``harness report`` shows it; ``harness run`` resolves through the same :func:`resolve_on`,
and its review describes the very step it resolved (:class:`StepRequest` ``resolved``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name

from harness.errors import HarnessError
from harness.runs.pipeline.digest import service_digest
from harness.runs.pipeline.file import find_pipeline_file, load_pipeline
from harness.runs.pipeline.requires import Need
from harness.runs.pipeline.resolve import resolve_step
from harness.runs.pipeline.smoke import SmokePlan, SmokeTested
from harness.runs.pipeline.steps import SMOKE_DIR, VERIFIERS, Pipeline, ResolvedStep, SmokeSpec
from harness.runs.record.models import Level, Verdict
from harness.runs.record.state import tensor_parallel
from harness.runs.target import remote
from harness.runs.target.context import GPU_GLOB_ENV, workdir_for
from harness.runs.target.disk import Budget
from harness.runs.target.preflight import Preflight, decide
from harness.targets.base import Target
from harness.targets.interp import with_python

#: a step spread over hosts, run on one: node 0 of 1
_ONE_NODE = {"shard": "0", "num_shards": "1", "node_rank": "0", "nnodes": "1"}


def resolve_on(
    target: Target,
    pipeline: Pipeline,
    step: str,
    workdir: str,
    run_id: str,
    overrides: dict[str, str],
    extra: Sequence[str],
    smoke: Any = None,
    node: Mapping[str, str] | None = None,
) -> ResolvedStep:
    """The step's argv/cwd/env for this target: built-ins filled in, host env underneath.

    ``node``: this host's place in a step spread over several (:func:`harness.launch.spread.
    node_builtins`); alone, a host is node 0 of 1 and its own ``{head}``.

    ``PYTHONUNBUFFERED=1`` by default: a Python step's prints reach the log (and the
    laptop) as they happen, not in 8 KB blocks. A smoke run also gets ``{smoke_dir}`` and
    the hook's switch (``HARNESS_SMOKE``) in its environment.
    """
    from harness.runs.pipeline import smoke as smoke_mode

    builtins = {
        "workdir": workdir,
        "python": target.python_argv()[0],
        "run_id": run_id,
        "run_dir": f"{remote.runs_root(workdir)}/{run_id}",
        "step": step,
        **(node or {**_ONE_NODE, "head": target.peer_address}),
    }
    builtins[SMOKE_DIR] = smoke_mode.smoke_dir(builtins["run_dir"])
    builtins["smoke_layers"] = "" if smoke is None else str(smoke.layers)
    builtins[VERIFIERS] = f"{builtins['run_dir']}/{VERIFIERS}"
    resolved = resolve_step(
        pipeline,
        step,
        builtins=builtins,
        sets=overrides,
        extra=extra,
        base_env={"PYTHONUNBUFFERED": "1", **target.run_env},
        smoke=smoke is not None,
    )
    if resolved.service is not None:  # what makes a live run of it reusable
        digest = service_digest(resolved, run_id, builtins["run_dir"], smoke=smoke is not None)
        resolved = replace(resolved, service=replace(resolved.service, digest=digest))
    if smoke is None:
        return resolved
    return replace(resolved, env={**resolved.env, **smoke.env})


@dataclass(frozen=True)
class StepRequest:
    """The step a review judges: ``harness report``'s, resolved here from the pipeline file
    (run id ``<run-id>``, no extra args); ``harness run``'s, exactly as the launch resolved
    it (``resolved``: its run id, ``extra`` args and spread preparation) from the pipeline
    it loaded. ``smoke``: resolved as a ``--smoke`` run would launch it (``check --step
    --smoke``; its ``overrides`` hold the plan's ``sets``)."""

    name: str
    pipeline_file: Path | None = None
    overrides: Mapping[str, str] = field(default_factory=dict)
    pipeline: Pipeline | None = None
    resolved: ResolvedStep | None = None
    run_id: str = "<run-id>"
    smoke: SmokePlan | None = None

    def load(self) -> Pipeline:
        """The pipeline the step is in (the launch's own, else read from its file)."""
        return self.pipeline or load_pipeline(find_pipeline_file(self.pipeline_file))

    def loaded(self) -> StepRequest:
        """This request with its pipeline read once (``harness report``'s, from the file), so
        that a review's plan, interpreter and services judge one reading of it; as it is
        when the file cannot be read (the plan then says why)."""
        if self.pipeline is not None:
            return self
        try:
            return replace(self, pipeline=self.load())
        except HarnessError:
            return self


@dataclass(frozen=True)
class StepPlan:
    """A step as it would launch (secrets masked), with what it declares it needs.

    ``tensor_parallel``: from ``--tensor-parallel-size``/``-tp`` in the command;
    ``checks``: the callers the step exercises (``None``: undeclared); ``requires``: each
    declared need against the version the step's own imports see, ``pip`` the line that meets
    the unmet ones; ``error``: why the step could not be resolved (then only ``name`` is set).
    """

    name: str
    command: tuple[str, ...] = ()
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    tensor_parallel: int | None = None
    pipeline: str | None = None
    checks: Mapping[str, tuple[str, ...]] | None = None
    smoke: SmokeSpec | None = None
    workdir: str | None = None
    requires: tuple[Need, ...] = ()
    pip: str | None = None
    error: str | None = None
    smoke_tested: SmokeTested | None = None
    #: the output check (masked), None when the step declares none; ``entry``: the digest a
    #: verified run records (:meth:`Pipeline.entry_digest`); ``verified``: whether the step's
    #: newest verified run still speaks for it (same shape as ``smoke_tested``)
    verify: str | None = None
    entry: str | None = None
    verified: SmokeTested | None = None
    #: the newest real run's label when its output failed its check (the review says so)
    last_failed: str | None = None
    #: the launch preflight's verdicts on this target (workdir, command, script, cwd,
    #: tensor-parallel, GPUs in use) -- not its stale-GPU check: the review reports those
    preflight: tuple[Verdict, ...] = ()
    #: ``known_good``: each range the step's environment is known to work in, against the
    #: version its imports see; ``known_good_at``: where the pipeline declares them
    known_good: tuple[Need, ...] = ()
    known_good_at: str | None = None
    #: the step's own interpreter (``python = ...``): the review reads its packages
    python: str | None = None
    #: ``disk = {...}`` resolved; ``budget``: what it will write against the room there, as
    #: ``harness report`` counted it (``budget_error``: why it could not)
    disk: Mapping[str, str] | None = None
    budget: Budget | None = None
    budget_error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        if self.error is not None:
            return {"name": self.name, "error": self.error}
        out: dict[str, Any] = {
            "name": self.name,
            "command": list(self.command),
            "cwd": self.cwd,
            "env": dict(self.env),
            "tensor_parallel": self.tensor_parallel,
            "pipeline": self.pipeline,
            "checks": None if self.checks is None else {c: list(v) for c, v in self.checks.items()},
            "smoke": None if self.smoke is None else self.smoke.to_dict(),
            "workdir": self.workdir,
            "requires": [n.to_dict() for n in self.requires],
            "pip": self.pip,
        }
        if self.smoke_tested is not None:
            out["smoke_tested"] = self.smoke_tested.to_dict()
        out["verify"], out["entry"], out["last_failed"] = self.verify, self.entry, self.last_failed
        if self.verified is not None:
            out["verified"] = self.verified.to_dict()
        if self.preflight:
            out["preflight"] = [v.to_dict() for v in self.preflight]
        if self.known_good:
            out["known_good"] = [n.to_dict() for n in self.known_good]
            out["known_good_at"] = self.known_good_at
        if self.python is not None:
            out["python"] = self.python
        if self.disk is not None:
            out["disk"] = dict(self.disk)
        if self.budget is not None:
            out["budget"] = self.budget.to_dict()
        if self.budget_error is not None:
            out["budget_error"] = self.budget_error
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> StepPlan:
        checks, smoke, tested = d.get("checks"), d.get("smoke"), d.get("smoke_tested")
        verified = d.get("verified")
        return cls(
            name=d["name"],
            command=tuple(d.get("command") or ()),
            cwd=d.get("cwd"),
            env=dict(d.get("env") or {}),
            tensor_parallel=d.get("tensor_parallel"),
            pipeline=d.get("pipeline"),
            checks=None if checks is None else {c: tuple(v) for c, v in checks.items()},
            smoke=None if smoke is None else SmokeSpec.from_dict(smoke),
            workdir=d.get("workdir"),
            requires=tuple(
                Need(n["dist"], n["spec"], n.get("found")) for n in d.get("requires") or ()
            ),
            pip=d.get("pip"),
            error=d.get("error"),
            smoke_tested=None if tested is None else SmokeTested.from_dict(tested),
            verify=d.get("verify"),
            entry=d.get("entry"),
            verified=None if verified is None else SmokeTested.from_dict(verified),
            last_failed=d.get("last_failed"),
            preflight=tuple(Verdict.from_dict(v) for v in d.get("preflight") or ()),
            known_good=tuple(
                Need(n["dist"], n["spec"], n.get("found")) for n in d.get("known_good") or ()
            ),
            known_good_at=d.get("known_good_at"),
            python=d.get("python"),
            disk=d.get("disk"),
            budget=Budget.from_dict(d["budget"]) if d.get("budget") else None,
            budget_error=d.get("budget_error"),
        )


def describe(
    target: Target,
    asked: StepRequest,
    *,
    preflight: bool | Sequence[Verdict] = False,
    workdir: str | None = None,
) -> StepPlan:
    """The step as ``harness run`` would launch it on ``target`` (or, for a launch, as it
    resolved it), no launch; with ``preflight``, what the launch's preflight would say of it
    there (the verdicts themselves: the ones the launch just made). ``workdir``: the one
    the launch resolved (``--workdir``); else hosts.toml's, ``$HARNESS_WORKDIR``'s."""
    from harness.reading.probe import gather_facts
    from harness.runs.pipeline.requires import needs, pip_line, step_paths

    pipeline, step = asked.load(), asked.name
    workdir = workdir or workdir_for(target, os.environ.get("HARNESS_WORKDIR"), absolute=True)
    assert workdir is not None
    resolved = asked.resolved or resolve_on(
        target, pipeline, step, workdir, asked.run_id, dict(asked.overrides), (), asked.smoke
    )
    record = remote.masked_record(asked.run_id, resolved, target, workdir, pipeline.path)
    declared = pipeline.steps[step]
    rows: list[Need] = []
    good: list[Need] = []
    pip = None
    origin = python_origin(pipeline, step)
    target = with_python(target, resolved.python, origin)  # the step's own packages
    if declared.requires or declared.known_good:  # one probe for both
        paths = step_paths(resolved.env, resolved.cwd)
        dists = sorted({*declared.requires, *declared.known_good})
        seen = gather_facts(target, dists, prepend=paths, gpus=False).dists
        found = {str(canonicalize_name(k)): v for k, v in seen.items()}
        rows = needs(declared.requires, found)
        good = needs(declared.known_good, found)
        unmet = [n for n in rows if not n.ok]
        pip = pip_line(target.python_argv()[0], unmet, paths) if unmet else None
    return StepPlan(
        name=step,
        command=tuple(record.argv),
        cwd=record.cwd,
        env=dict(record.env),
        tensor_parallel=tensor_parallel(resolved.argv),
        pipeline=pipeline.path,
        checks=None
        if declared.checks is None
        else {c: tuple(v) for c, v in declared.checks.items()},
        smoke=declared.smoke,
        workdir=workdir,
        requires=tuple(rows),
        pip=pip,
        verify=record.verify,
        entry=pipeline.entry_digest(step),
        preflight=_preflight(target, workdir, resolved)
        if preflight is True
        else _reviewed(preflight or ()),
        known_good=tuple(good),
        known_good_at=pipeline.where("steps", step, "known_good") if good else None,
        python=resolved.python,
        disk=resolved.disk,
    )


#: the preflight's checks the review leaves out: it reports stale GPU holders itself
_REVIEWED_ELSEWHERE = ("stale GPU",)


def preflight_of(
    target: Target,
    workdir: str,
    resolved: ResolvedStep,
    device_glob: str | None,
    kill_stale: bool,
    facts: list[str] | None = None,
) -> Preflight:
    """The preflight's verdicts for ``resolved`` on ``target`` (one probe, then decided):
    what ``harness run`` refuses on, and what the review shows. ``facts``: dists whose
    versions the same probe also reads (the review's facts, in ``Preflight.facts``)."""
    return decide(
        remote.preflight(target, workdir, resolved, device_glob, facts),
        target.label,
        shipped=remote.shipped_scripts(workdir, resolved.argv),
        kill_stale=kill_stale,
        tensor_parallel=tensor_parallel(resolved.argv),
        visible=resolved.env.get("CUDA_VISIBLE_DEVICES"),
    )


def _preflight(target: Target, workdir: str, resolved: ResolvedStep) -> tuple[Verdict, ...]:
    """The preflight ``harness run`` makes before a launch (the same probe, the same
    decisions): its failures and warnings, so that a review that says ready means the
    launch will start."""
    checked = preflight_of(target, workdir, resolved, os.environ.get(GPU_GLOB_ENV), False)
    return _reviewed(checked.verdicts)


def _reviewed(verdicts: Sequence[Verdict]) -> tuple[Verdict, ...]:
    """The preflight verdicts a review shows: its failures and warnings."""
    return tuple(
        v
        for v in verdicts
        if v.check not in _REVIEWED_ELSEWHERE and v.level in (Level.FAIL, Level.WARN)
    )


def python_origin(pipeline: Pipeline, step: str) -> tuple[str, str] | None:
    """Where a step's own interpreter is named, and how to change it: a parameter it names
    (``python = "{vllm_python}"``: ``--set`` or ``[params]``), else the step's line -- never
    hosts.toml, which names the host's interpreter, not this step's."""
    from harness.runs.pipeline.steps import PLACEHOLDER

    declared = pipeline.steps.get(step)
    if declared is None or declared.python is None:
        return None
    where = pipeline.where("steps", step, "python")
    names = [m.group(1) for m in PLACEHOLDER.finditer(declared.python) if m.group(1)]
    if names:
        return (
            f"{where}: python = {declared.python!r}",
            f"give {names[0]} the interpreter's path: --set {names[0]}=/path/to/bin/python, "
            f"or in [params] of {pipeline.path}",
        )
    return where, f"name an interpreter the target has in the step's python = ({where})"
