"""What a review asks the target besides the step: the dists whose versions it reads (one
facts probe for the series, their callers and what the series require), and what a served
step's services run on now (each in its own interpreter: the fingerprint a smoke or verified
run of the step vouches for)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.errors import HarnessError
from harness.report.parts import SeriesView
from harness.runs.record.parts import Fingerprint
from harness.targets.base import Target

if TYPE_CHECKING:
    from harness.patching.library import SeriesLibrary
    from harness.runs.pipeline.steps import Pipeline


def review_dists(patches: Path, checks: Mapping[str, Any] | None) -> list[str]:
    """The dists whose versions a review of a step declaring ``checks`` asks the target
    (its facts probe): what ``harness run`` asks in its preflight's round trip instead."""
    from harness.patching.library import SeriesLibrary

    return dists_of(SeriesLibrary(patches), checks)[1]


def dists_of(
    library: SeriesLibrary, declared: Mapping[str, Any] | None
) -> tuple[list[str], list[str]]:
    """``(series_dists, wanted)``: the dists with a series the review covers, and every dist
    whose version it needs (theirs and their series' ``requires``: one facts probe for both).

    A step that declares the callers it exercises is reviewed for those alone (none: facts
    and GPU holders only); without a step, or undeclared, every dist with a series is."""
    from packaging.utils import canonicalize_name

    series_dists = library.dists()
    if declared is not None:
        wanted_callers = {str(canonicalize_name(c)) for c in declared}
        series_dists = [d for d in series_dists if str(canonicalize_name(d)) in wanted_callers]
    return series_dists, series_dists + library.required_dists(series_dists)


def service_prints(
    target: Target,
    library: SeriesLibrary,
    pipe: Pipeline,
    step: str,
    overrides: Mapping[str, str],
    workdir: str | None,
) -> dict[str, Fingerprint]:
    """What the services ``step`` needs run on now, each in its own interpreter (the
    server's vLLM, its series' applied patches): a smoke or verified run of a served step
    vouches for them too. As the service's own review reads them at its launch; one not
    readable is left out (then it no longer vouches)."""
    import os

    from packaging.utils import canonicalize_name

    from harness.reading.probe import gather_facts
    from harness.runs.target.context import workdir_for
    from harness.runs.target.describe import python_origin, resolve_on
    from harness.targets.interp import with_python

    out: dict[str, Fingerprint] = {}
    try:
        needs = pipe.steps[step].needs if step in pipe.steps else ()
        if needs:
            workdir = workdir or workdir_for(
                target, os.environ.get("HARNESS_WORKDIR"), absolute=True
            )
    except HarnessError:
        return out
    for need in needs:
        spec = pipe.steps[need]
        known = {**pipe.params, **spec.params}
        sets = {k: v for k, v in overrides.items() if k in known}
        try:
            assert workdir is not None
            r = resolve_on(target, pipe, need, workdir, "<run-id>", sets, ())
            there = with_python(target, r.python, python_origin(pipe, need))
            series_dists, wanted = dists_of(library, spec.checks)
            facts = gather_facts(there, wanted, gpus=False)
            applied: dict[str, list[str]] = {}
            if series_dists:
                from harness.patching.ops import status

                known_v = {str(canonicalize_name(k)): v for k, v in facts.dists.items()}
                for rep in status(there, library, installed=known_v):
                    view = SeriesView.from_report(rep)
                    applied[view.dist] = list(view.applied)
        except HarnessError:
            continue
        out[need] = Fingerprint.of(facts.dists, applied)
    return out
