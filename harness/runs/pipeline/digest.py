"""What makes two runs of a service interchangeable (pure): a step that needs a service uses
a live run whose digest, recorded in its ``run.json`` at launch, is the one it would start."""

from __future__ import annotations

import hashlib
import json

from harness.runs.pipeline.steps import ResolvedStep
from harness.targets import shell


def service_digest(step: ResolvedStep, run_id: str, run_dir: str, smoke: bool = False) -> str:
    """What makes two runs of a service interchangeable, as a short hash (pure). A smoke
    service (random weights, a cut model) never answers for a real one, nor the reverse."""

    def norm(text: str) -> str:
        return text.replace(run_dir, "{run_dir}").replace(run_id, "{run_id}")

    env = shell.mask_env(step.env, step.secrets())
    blob: dict[str, object] = {
        "step": step.step,
        "argv": [norm(a) for a in step.argv],
        "cwd": norm(step.cwd),
        "env": {k: norm(v) for k, v in sorted(env.items())},
        # how long it waits for a first user is not what it serves
        "service": {} if step.service is None else step.service.settings(),
    }
    if smoke:  # only when set: a real service's digest is the one it had before
        blob["smoke"] = True
    return hashlib.sha256(json.dumps(blob, sort_keys=True).encode()).hexdigest()[:16]
