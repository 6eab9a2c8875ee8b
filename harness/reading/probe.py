"""``harness probe``: what is really installed on a target, read from source, not imported."""

from __future__ import annotations

import re
import time

from harness.errors import UsageError
from harness.models import ProbeReport, TargetFacts
from harness.probe_runner import run_probe
from harness.targets.base import Target

_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def parse_ref(ref: str) -> tuple[str, str | None]:
    """Pure: ``pkg.mod[:Qual.name]`` -> (module, qualname); anything else is a usage error.

    Validating here keeps hostile strings (``x; touch /tmp/pwned``) out of every later layer,
    though none of them would reach a shell anyway: arguments travel as JSON on stdin.
    """
    module, sep, qual = ref.partition(":")
    if not _DOTTED.match(module) or (sep and not _DOTTED.match(qual)):
        raise UsageError(
            f"{ref!r} is not a module reference",
            "write MODULE or MODULE:QUALNAME, e.g. vllm.config:SchedulerConfig",
        )
    return module, (qual or None)


def probe(target: Target, ref: str, *, source: bool = False, live: bool = False) -> ProbeReport:
    module, qualname = parse_ref(ref)
    if live and target.kind == "pypi":  # it would run the wheels' code here, without their .so
        raise UsageError(
            f"--live imports {module}, and {target.label} only reads wheels: it runs none of "
            "their code and holds none of their compiled modules",
            f"import it where it is installed: harness probe {ref} --live -t HOST (or local)",
        )
    name = "live" if live else "signatures"
    env = run_probe(target, name, {"module": module, "qualname": qualname, "source": source})
    data = dict(env.data)
    data["target"] = target.label
    return ProbeReport.from_dict(data)


def gather_facts(
    target: Target,
    dists: list[str] | None = None,
    *,
    prepend: list[str] | None = None,
    gpus: bool = True,
) -> TargetFacts:
    """One round trip: interpreter, site-packages, dist versions, GPUs; timed end to end.

    ``prepend``: folders the versions are looked up in first (a step's ``PYTHONPATH``).
    """
    start = time.perf_counter()
    args: dict[str, object] = {"dists": dists or [], "gpus": gpus}
    if prepend:
        args["prepend"] = prepend
    env = run_probe(target, "facts", args)
    data = dict(env.data)
    data["target"] = target.label
    data["connect_seconds"] = round(time.perf_counter() - start, 3)
    return TargetFacts.from_dict(data)
