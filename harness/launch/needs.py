"""The services a step ``needs``, ready before it launches: a live run of the same service
reused, or one started through the one launch path and followed until it answers.

:func:`harness.launch.start.start_run` calls :func:`ready_services` once the step's own gates
passed (a refused step starts no server); following a service's start is the caller's
(``wait``), like following any run. What the step's run records -- a
:class:`~harness.runs.record.parts.NeededService` each -- is what its supervisor stops when it ends
(``probes/_service.py``). A ``--smoke`` step gets a smoke service
(:func:`harness.runs.pipeline.smoke.plan` of the service: its own smoke args and outputs, the step's
cut and mapped layer ids), never kept, never a real one's.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from harness.launch.events import RunEvent, ServiceUp
from harness.launch.nodes import Host, Request
from harness.runs.pipeline.steps import Pipeline
from harness.runs.record.models import RunInfo
from harness.runs.record.parts import Fingerprint, NeededService

#: Stands in for a run id while finding out what a service run would be (its digest).
PROBE_ID = "service-00000000-000000-0000"

Wait = Callable[[Host, RunInfo], RunInfo]
Start = Callable[..., Any]


def metrics_url(health: str) -> str:
    """The Prometheus ``/metrics`` beside a service's health URL (vLLM serves both; a server
    that does not is asked once)."""
    from urllib.parse import urlsplit, urlunsplit

    u = urlsplit(health)
    return urlunsplit((u.scheme or "http", u.netloc, "/metrics", "", ""))


def ready_services(
    pipeline: Pipeline,
    host: Host,
    req: Request,
    wait: Wait,
    start: Start,
    on_event: Callable[[RunEvent], None],
    started: list[str] | None = None,
    prints: dict[str, Fingerprint] | None = None,
) -> list[NeededService]:
    """Each service ``req.step`` needs, ready; the ids of those started here (not reused) go
    into ``started``, what each runs on (its run's fingerprint: dists, patches) into
    ``prints`` -- what the step's run vouches for too."""
    from dataclasses import replace

    from harness.runs.follow.services import live_service
    from harness.runs.pipeline import smoke as smoke_mode
    from harness.runs.target import remote
    from harness.runs.target.describe import resolve_on

    out = []
    for need in pipeline.steps[req.step].needs:
        spec = pipeline.steps[need]
        known = {**pipeline.params, **spec.params}
        sets = {k: v for k, v in req.overrides.items() if k in known}
        smoke = None  # a smoke step's server is a smoke service: its own run, the same cut
        if req.smoke is not None:
            smoke = smoke_mode.plan(pipeline, need, req.smoke.layers, overrides=sets)
            sets = {**sets, **smoke.sets}
        would = resolve_on(host.target, pipeline, need, host.workdir, PROBE_ID, sets, (), smoke)
        digest = None if would.service is None else would.service.digest
        runs = remote.list_runs(host.target, host.workdir).runs
        info = live_service(runs, need, str(digest), smoke is not None)
        began, reused = time.monotonic(), info is not None
        if info is None:
            sub = replace(
                req,
                step=need,
                overrides=sets,
                extra=(),
                smoke=smoke,
                require_smoke=False,
                require_verified=False,
            )
            alone = replace(host, resolved=None, review=None)  # the step's own stay as they are
            info = start(pipeline, [alone], sub, on_event=on_event).run
            if started is not None and info is not None:
                started.append(info.id)
        assert info is not None
        info = wait(host, info)
        if prints is not None and info.record.fingerprint is not None:
            prints[need] = info.record.fingerprint.environment()
        took = None if reused else time.monotonic() - began
        port = None if info.record.service is None else info.record.service.port
        on_event(ServiceUp(need, info.id, port, reused, took))
        if info.record.service is not None and host.resolved is not None and host.resolved.disk:
            # the step's progress lines add what its server counts (probes/runs/_metrics.py)
            disk = {"metrics": metrics_url(info.record.service.url), **host.resolved.disk}
            host.resolved = replace(host.resolved, disk=disk)
        # a smoke service stops with its smoke run: no real run may ever find it kept
        out.append(NeededService(need, info.id, req.keep_service and smoke is None))
    return out
