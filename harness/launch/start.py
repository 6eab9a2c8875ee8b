"""``harness run``'s use case, on one target or several hosts: the only launch path.

:func:`start_run` resolves the step on every host (as its :class:`~harness.launch.spread.Spread`
prepares it), reviews and preflights every host before anything launches, starts what the
spread runs on (a Ray cluster), launches detached and returns; what happens is told through
``on_event`` as host-tagged events (:mod:`harness.launch.events`), never printed. A step
feature (smoke, output verification, timeouts, the gates) lives in the resolve, the review or
the launch here, so it holds on one host and across hosts alike. Following is the CLI's
(:mod:`harness.runs.follow.attach`); :func:`finish` stops what the spread started, afterwards.

One target is a group of one: its errors are its own (a HarnessError as raised); several
hosts' are named per host, and nothing launches anywhere unless every host is ready.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from harness.errors import UsageError
from harness.launch.events import (
    Launched,
    Resolved,
    RunEvent,
    Started,
)
from harness.launch.gates import gate
from harness.launch.nodes import Host, Launch, Node, Request, each
from harness.launch.spread import SINGLE, SPREADS, Spread
from harness.runs.pipeline.steps import Pipeline
from harness.runs.record.models import RunInfo
from harness.runs.record.parts import Fingerprint, GroupRecord, NeededService, Role

if TYPE_CHECKING:
    from harness.report.model import Review
    from harness.runs.pipeline.smoke import SmokePlan
    from harness.runs.target.context import Context


@dataclass(frozen=True)
class RunOutcome:
    """What ``harness run`` started: a run per host that runs the step, each one's review."""

    launch: Launch
    runs: tuple[tuple[str, RunInfo], ...]
    reviews: dict[str, Review]

    @property
    def run(self) -> RunInfo:
        return self.runs[0][1]

    @property
    def followed(self) -> tuple[str, ...]:
        return tuple(h for h, _ in self.runs)


def spread_for(pipeline: Pipeline, step: str, names: Sequence[str]) -> Spread:
    """How ``step`` runs on ``names``: one host as written, several as its ``spread`` says."""
    if len(names) == 1:
        return SINGLE
    spec = pipeline.steps.get(step)
    if spec is None:
        from harness.runs.pipeline.resolve import resolve_step

        resolve_step(pipeline, step, {}, {})  # the usual "no step" message
        raise AssertionError("unreachable")
    if spec.spread is None:
        raise UsageError(
            f"{pipeline.where('steps', step)}: step {step!r} runs on one host; -t names "
            f"{len(names)} ({', '.join(names)})",
            'say how it spreads over hosts: spread = "shard", "torchrun" or "ray"',
        )
    return SPREADS[spec.spread]


@contextmanager
def opened(
    names: Sequence[str], make_ctx: Callable[[str], Context], address_of: Callable[[str], str]
) -> Iterator[list[Host]]:
    """Every host's target open, with its workdir; all closed on the way out."""
    from harness.runs.target.context import workdir_for

    nodes = [Node(n, i, address_of(n)) for i, n in enumerate(names)]
    with ExitStack() as stack:

        def open_one(node: Node) -> Host:
            ctx = make_ctx(node.host)
            target = stack.enter_context(ctx.open())
            wd = workdir_for(target, ctx.workdir, absolute=True)
            assert wd is not None
            return Host(node, target, wd, ctx)

        yield list(each(nodes, lambda n: n.host, open_one, "connect").values())


def start_run(
    pipeline: Pipeline,
    hosts: list[Host],
    req: Request,
    spread: Spread = SINGLE,
    on_event: Callable[[RunEvent], None] = lambda event: None,
    wait_ready: Callable[[Host, RunInfo], RunInfo] | None = None,
    launching: Callable[[Host, str], None] | None = None,
) -> RunOutcome:
    """Resolve, review, preflight and launch ``req.step`` detached on every host.

    ``launching(host, run_dir)``: told just before the step's launch on a host, every gate
    passed (the CLI starts its log follower there, so that its start overlaps the launch).

    A step that ``needs`` services gets each one ready first, once its own gates passed
    (:mod:`harness.launch.needs`): a live run of it reused, or one started here and followed
    by ``wait_ready`` (the caller's: following is the CLI's) until it answers.

    Raises:
        NotReady: the review says not ready (on any host) and ``force`` is not set.
        RunError: a preflight check failed (on any host), or a host could not be reviewed.
    """
    from harness.runs.record.state import new_run_id
    from harness.runs.target import remote

    step = req.step
    needs = pipeline.steps[step].needs if step in pipeline.steps else ()
    if needs and len(hosts) > 1:
        raise UsageError(
            f"{pipeline.where('steps', step, 'needs')}: a step that needs a service runs on "
            f"one host; -t names {len(hosts)}",
            "name one host",
        )
    run_id = new_run_id(step)
    port = spread.port(pipeline.steps[step]) if step in pipeline.steps else None
    launch = Launch(run_id, step, spread, hosts, port, pipeline.path, on_event)
    if launch.several:
        launch.group = GroupRecord(run_id, spread.name, tuple(h.node.host for h in hosts))
    _resolve(launch, pipeline, req.overrides, req.extra, req.smoke)
    checked, reviews = gate(launch, pipeline, req)
    services: tuple[NeededService, ...] | None = None
    started: list[str] = []  # services started for this step, stopped if its launch fails
    prints: dict[str, Fingerprint] = {}  # what each service runs on: its run vouches for it
    if needs:
        from harness.launch.needs import ready_services

        wait = wait_ready or (lambda h, info: info)
        try:
            services = tuple(
                ready_services(pipeline, hosts[0], req, wait, start_run, on_event, started, prints)
            )
        except BaseException:
            _stop_started(hosts[0], started, req.keep_service)
            raise
    runs = []
    try:
        spread.before(hosts, launch)
        for h in spread.step_hosts(hosts):
            stale = checked[h.node.host].stale
            if launching is not None:
                launching(h, f"{remote.runs_root(h.workdir)}/{run_id}")
            runs.append(
                (
                    h.node.host,
                    _launch(launch, pipeline, h, req.smoke, reviews, stale, services, prints),
                )
            )
        if launch.several:
            on_event(Started(run_id, tuple(h for h, _ in runs)))
    except BaseException:
        finish(launch)  # never leave a cluster behind
        if not runs:  # the step never started: nothing will stop its services at its end
            _stop_started(hosts[0], started, req.keep_service)
        raise
    return RunOutcome(launch, tuple(runs), reviews)


def _stop_started(host: Host, started: list[str], keep: bool) -> None:
    """The services this launch started, stopped: the step they were for did not start."""
    from harness.runs.target import remote

    for run_id in [] if keep else started:
        with contextlib.suppress(Exception):  # the launch's own error is the one to show
            remote.stop(
                host.target,
                host.workdir,
                run_id,
                grace=host.ctx.timings.stop_grace,
                timings=host.ctx.timings,
                device_glob=host.ctx.device_glob,
            )


def finish(launch: Launch) -> None:
    """Stop what the spread started for the step (a Ray cluster), if anything."""
    if launch.cluster:
        launch.spread.after(launch.hosts, launch.cluster, launch)


def _resolve(
    launch: Launch,
    pipeline: Pipeline,
    overrides: dict[str, str],
    extra: Sequence[str],
    smoke: SmokePlan | None,
) -> None:
    """The step resolved on every host, as its spread prepares it there; told."""
    from harness.runs.pipeline import smoke as smoke_mode
    from harness.runs.target import remote
    from harness.runs.target.describe import resolve_on

    spec = pipeline.steps.get(launch.step)
    for h in launch.hosts:
        node = launch.spread.builtins(launch.nodes, h.node)
        r = resolve_on(
            h.target,
            pipeline,
            launch.step,
            h.workdir,
            launch.run_id,
            overrides,
            extra,
            smoke,
            node=node,
        )
        if spec is not None:
            r = launch.spread.prepare(h, r, launch.nodes, spec, launch.port or 0, launch.run_id)
        h.resolved = r
        where = None
        if smoke:
            where = smoke_mode.smoke_dir(f"{remote.runs_root(h.workdir)}/{launch.run_id}")
        rank = h.node.rank if launch.several else None
        launch.on_event(
            Resolved(launch.step, h.target.label, r.display(), smoke, where, launch.tag(h), rank)
        )


def _launch(
    launch: Launch,
    pipeline: Pipeline,
    h: Host,
    smoke: SmokePlan | None,
    reviews: dict[str, Review],
    stale: Any,
    services: tuple[NeededService, ...] | None = None,
    prints: Mapping[str, Fingerprint] | None = None,
) -> RunInfo:
    from harness.runs.pipeline import smoke as smoke_mode
    from harness.runs.target import remote

    assert h.resolved is not None
    review = reviews[h.node.host]
    resolved = launch.spread.step_env(h.resolved, launch.nodes, launch.port or 0)
    # the servers' environments, vouched for too
    fingerprint = replace(smoke_mode.fingerprint(review), services=dict(prints or {}))
    extras = remote.RunExtras(
        review=h.review,
        smoke=None if smoke is None else smoke.record(fingerprint),
        hook=None
        if smoke is None or not smoke.hook
        else {"sitecustomize.py": smoke_mode.hook_source()},
        fingerprint=replace(fingerprint, entry=pipeline.entry_digest(launch.step)),
        group=None
        if launch.group is None
        else replace(launch.group, rank=h.node.rank, role=Role.STEP),
        services=services,
        device_glob=h.ctx.device_glob,
    )
    launched = remote.launch(
        h.target,
        launch.run_id,
        h.workdir,
        resolved,
        pipeline=pipeline.path,
        timings=h.ctx.timings,
        kill_first=stale,
        extras=extras,
    )
    killed, left = tuple(launched.killed), tuple(launched.kill_remaining)
    launch.on_event(Launched(launched.run, killed, left, launch.tag(h)))
    return launched.run
