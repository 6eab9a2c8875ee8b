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
from harness.runs.record import Fingerprint, SmokeRecord
from harness.runs.steps import SMOKE_DIR, Pipeline

DEFAULT_LAYERS = 2
DEFAULT_SAMPLES = 4
HOOK_ENV = "HARNESS_SMOKE"
HOOK_DIR = "smoke-hook"


@dataclass(frozen=True)
class SmokePlan:
    layers: int
    samples: int | None
    #: parameter overrides: the step's smoke params (outputs into {smoke_dir}), the sample count
    sets: Mapping[str, str] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"layers": self.layers, "samples": self.samples}

    def record(self, fingerprint: Fingerprint) -> SmokeRecord:
        """What ``run.json`` keeps of this plan: what the green run vouches for."""
        return SmokeRecord(self.layers, self.samples, fingerprint)


def plan(
    pipeline: Pipeline, step: str, layers: int | None = None, samples: int | None = None
) -> SmokePlan:
    """The smoke run of ``step``; refused unless the step says where its outputs go instead.

    A smoke run writes random-weight results: they must never land on the real ones, and only
    the pipeline knows which parameters are outputs -- so a step without a ``smoke`` table
    whose ``params`` use ``{smoke_dir}`` is not run in smoke mode at all.
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
    n = max(layers or DEFAULT_LAYERS, spec.layers)
    k = (samples or DEFAULT_SAMPLES) if spec.samples else None
    sets = dict(spec.params)
    if spec.samples:
        sets[spec.samples] = str(k)
    return SmokePlan(n, k, sets, {HOOK_ENV: json.dumps({"layers": n})})


def smoke_dir(run_dir: str) -> str:
    """Where a smoke run's outputs go: a fresh folder in its own run directory, so it never
    resumes from (or writes over) real outputs, and two smoke runs never share one."""
    return f"{run_dir.rstrip('/')}/smoke"


def hook_source() -> str:
    from harness.probe_files import probes_dir

    return (probes_dir() / "runs" / "smoke_hook.py").read_text(encoding="utf-8")


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
