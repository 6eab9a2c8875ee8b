"""Smoke mode: the same step, same command, same code path -- random weights, a few layers.

In the story behind harness every run-time mismatch cost an 18-minute load of a 1T-parameter
model. ``harness run STEP --smoke`` runs the step against the same architecture cut to a few
decoder layers with dummy weights (no checkpoint file is read) and a few samples, so such a
mismatch shows in minutes. The caller's code is not edited: a start-up hook
(``probes/runs/smoke_hook.py``, installed as ``sitecustomize`` on the run's ``PYTHONPATH`` only)
does the cutting. This module holds the decisions, pure: what a smoke run sets, and whether a
step's last green smoke run still speaks for the environment it would run in now.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from harness.errors import UsageError
from harness.runs.pipeline.steps import SMOKE_DIR, Pipeline
from harness.runs.record.parts import Fingerprint, SmokeRecord

DEFAULT_LAYERS = 2
DEFAULT_SAMPLES = 4
HOOK_ENV = "HARNESS_SMOKE"
HOOK_DIR = "smoke-hook"


@dataclass(frozen=True)
class SmokePlan:
    layers: int
    samples: int | None
    #: parameter overrides: the step's smoke params (outputs into {smoke_dir}), the sample count,
    #: the captured layer ids mapped onto the cut model
    sets: Mapping[str, str] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    #: the start-up hook cuts the model (False: the step's smoke ``args`` do, as vLLM's flags)
    hook: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"layers": self.layers, "samples": self.samples}

    def record(self, fingerprint: Fingerprint) -> SmokeRecord:
        """What ``run.json`` keeps of this plan: what the green run vouches for."""
        return SmokeRecord(self.layers, self.samples, fingerprint)


def map_layer_ids(ids: Sequence[int], n: int) -> list[int]:
    """Captured layer ids of the full model, mapped onto the model cut to ``n`` layers. Pure.

    The largest id is the model's final layer (speculators appends L to ``[2, L//2, L-3]``):
    it maps to ``n``, the cut model's final one. The others keep their order and their place
    in the depth (``round(id * n / L)``), each distinct, inside ``1..n-1`` -- id 0 alone maps
    to 0: vLLM captures the stream entering layer k as ``hidden_states + residual``, and at 0
    (the embeddings) there is no residual yet, a path of its own (vLLM 0.26's
    ``_maybe_add_hidden_state``) that a non-zero id must not be moved onto. ``[2, 16, 29, 32]``
    -> 4 layers: ``[1, 2, 3, 4]``; 8: ``[1, 4, 7, 8]``; already-mapped ids map to themselves.

    Raises:
        UsageError: ``n`` leaves too few layers for the ids to stay distinct.
    """
    got = sorted(set(ids))
    if not got or got[-1] == 0:
        return got
    final, inner = got[-1], got[:-1]
    low = 0 if inner and inner[0] == 0 else 1
    if len(inner) + low > n:
        raise UsageError(
            f"--smoke-layers {n}: too few layers for the captured ids {list(ids)} to stay "
            "distinct with the final one last",
            f"give --smoke-layers {len(inner) + low} or more",
        )
    out: list[int] = []
    for i, x in enumerate(inner):
        lo = 0 if x == 0 else max(1, out[-1] + 1 if out else 1)
        hi = (n - 1) - (len(inner) - 1 - i)
        out.append(min(max(round(x * n / final), lo), hi))
    return [*out, n]


def _mapped(text: str, n: int, where: str) -> str:
    """A layer-ids parameter's value (``"2, 16, 29, 32"``) mapped onto ``n`` layers."""
    try:
        ids = [int(x) for x in text.replace(",", " ").split()]
    except ValueError:
        raise UsageError(
            f"{where}: layer ids {text!r} are not whole numbers",
            'write them as a list of numbers, e.g. layer_ids = "2, 16, 29, 32"',
        ) from None
    return ", ".join(str(i) for i in map_layer_ids(ids, n))


def plan(
    pipeline: Pipeline,
    step: str,
    layers: int | None = None,
    samples: int | None = None,
    overrides: Mapping[str, str] | None = None,
) -> SmokePlan:
    """The smoke run of ``step``; refused unless the step says where its outputs go instead.

    A smoke run writes random-weight results: they must never land on the real ones, and only
    the pipeline knows which parameters are outputs -- so a step without a ``smoke`` table
    whose ``params`` use ``{smoke_dir}`` is not run in smoke mode at all. The cut is the
    largest of the asked one and every ``layers`` floor of the step and the services it
    needs (one cut for the client and its server); ``overrides`` (``--set``) hold the layer
    ids to map when the user set them.
    """
    spec = pipeline.steps[step].smoke
    where = pipeline.where("steps", step)
    example = f"[steps.{step}.smoke] with " + 'params = { data = "{smoke_dir}/data" }'

    if spec is None:
        raise UsageError(
            f"{where}: step {step!r} declares no smoke mode",
            f"say where its outputs go in smoke mode, e.g. {example}",
        )
    marker = "{" + SMOKE_DIR + "}"
    if not any(marker in v for v in spec.params.values()):
        raise UsageError(
            f"{where}.smoke: no parameter sends the outputs to {marker}, so a smoke run could "
            "write over real outputs",
            f"e.g. {example}",
        )
    for bad in (n for n in (layers, samples) if n is not None and n < 1):
        raise UsageError(f"--smoke-layers/--smoke-samples {bad}: must be at least 1")
    for need in pipeline.steps[step].needs:  # a smoke client must never talk to a real server
        if need in pipeline.steps and pipeline.steps[need].smoke is None:
            raise UsageError(
                f"{pipeline.where('steps', need)}: step {step!r} needs the service {need!r}, "
                "which declares no smoke mode, so a smoke run would talk to a real server",
                f"declare [steps.{need}.smoke] (its outputs under {{smoke_dir}}; args that cut "
                'its model, e.g. ["--load-format", "dummy"])',
            )
    floors = [spec.layers] + [
        s.smoke.layers
        for s in (pipeline.steps.get(need) for need in pipeline.steps[step].needs)
        if s is not None and s.smoke is not None
    ]
    n = max(layers or DEFAULT_LAYERS, *floors)
    k = (samples or DEFAULT_SAMPLES) if spec.samples else None
    sets = dict(spec.params)
    if spec.samples:
        sets[spec.samples] = str(k)
    if spec.layer_ids is not None:
        name = spec.layer_ids
        given = {**pipeline.params, **pipeline.steps[step].params, **(overrides or {})}
        if name not in given:
            raise UsageError(f"{where}.smoke: layer_ids names {name!r}, which is no parameter")
        if name not in spec.params:  # the step's own smoke value is the user's map
            sets[name] = _mapped(given[name], n, pipeline.where("params", name))
    env = {} if spec.args else {HOOK_ENV: json.dumps({"layers": n})}
    return SmokePlan(n, k, sets, env, hook=not spec.args)


def smoke_dir(run_dir: str) -> str:
    """Where a smoke run's outputs go: a fresh folder in its own run directory, so it never
    resumes from (or writes over) real outputs, and two smoke runs never share one."""
    return f"{run_dir.rstrip('/')}/smoke"


def hook_source() -> str:
    from harness.probe_files import smoke_hook_source

    return smoke_hook_source()


class Reviewed(Protocol):
    """What a fingerprint reads of a review (:class:`harness.report.model.Review`, which
    imports this module)."""

    @property
    def facts(self) -> Any: ...
    def applied(self) -> Mapping[str, Sequence[str]]: ...


def fingerprint(review: Reviewed) -> Fingerprint:
    """What a smoke run vouches for: the dist versions and each series' applied patches."""
    dists = review.facts.dists if review.facts is not None else {}
    return Fingerprint.of(dists, review.applied())


@dataclass(frozen=True)
class SmokeTested:
    """Whether a step's newest green smoke run on this target still speaks for it.

    ``last``: that run (``{"id", "created_at"}``), ``None`` when there is none; ``changes``:
    what differs since, in words; ``required``: ``--require-smoke`` (a blocker, not a
    warning).
    """

    required: bool
    last: Mapping[str, Any] | None = None
    changes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "required": self.required,
            "last": None if self.last is None else dict(self.last),
            "changes": list(self.changes),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SmokeTested:
        last = d.get("last")
        return cls(
            bool(d.get("required")),
            None if last is None else dict(last),
            tuple(d.get("changes") or ()),
        )
