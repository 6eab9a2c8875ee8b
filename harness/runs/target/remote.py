"""The ``runs`` probe's operations, called through :func:`harness.probe_runner.run_probe`.

``probes/runs/runs.py`` runs on the target's own Python with its arguments as JSON on stdin
(so no path, argv or secret ever passes through a shell) and answers with facts; this module
turns those facts into models. The decisions (state, stale holders, verdicts) are made by the
pure modules next to this one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Protocol

from harness import __version__
from harness.errors import NoSpace, RunError
from harness.models import AskedFacts, GpuInfo, TargetFacts
from harness.probe_files import program_sources, verifier_names, verifier_sources
from harness.probe_runner import run_probe
from harness.runs.pipeline.steps import VERIFIERS, ResolvedStep
from harness.runs.record.models import GpuHolder, RunInfo, RunRecord
from harness.runs.record.parts import Fingerprint, GroupRecord, NeededService, SmokeRecord
from harness.runs.record.stopped import StopReport
from harness.runs.target.timings import Timings
from harness.targets import shell
from harness.targets.base import Target

PROBE = "runs"


def runs_root(workdir: str) -> str:
    return workdir.rstrip("/") + "/.harness/runs"


def shipped_scripts(workdir: str, argv: tuple[str, ...]) -> frozenset[str]:
    """The paths in ``argv`` harness itself writes into the run directory at launch (its
    checks' copy, ``{verifiers}/NAME.py``): a preflight before the launch cannot find them,
    and need not."""
    names = set(verifier_names())
    root = runs_root(workdir) + "/"
    return frozenset(
        a
        for a in argv
        if a.startswith(root)
        and PurePosixPath(a).parent.name == VERIFIERS
        and PurePosixPath(a).name in names
    )


def uses_verifiers(step: ResolvedStep, workdir: str) -> bool:
    """The run directory needs harness's checks: the step declares a check, or its own
    command runs one of them (the text-view step)."""
    return bool(step.verify) or bool(shipped_scripts(workdir, step.argv))


@dataclass(frozen=True)
class GoneRun:
    """A run whose directory was deleted while it ran: its supervisor still runs."""

    id: str
    pid: int
    run_dir: str


@dataclass(frozen=True)
class RunList:
    root: str
    runs: tuple[RunInfo, ...]
    now: float
    gone: tuple[GoneRun, ...] = ()


@dataclass(frozen=True)
class PreflightFacts:
    """What the target said before a launch (see ``op_preflight`` in the probe)."""

    python: str
    python_version: str
    home: str
    workdir: str
    workdir_exists: bool
    workdir_writable: bool
    cwd: str
    cwd_exists: bool
    argv0: str | None
    resolved: str | None
    script: str | None
    script_exists: bool | None
    gpus_available: bool | None
    gpus_reason: str | None
    gpus: tuple[GpuInfo, ...]
    holders: tuple[GpuHolder, ...]
    runs: tuple[RunInfo, ...]
    #: a file where the workdir or a folder above it should be (it cannot be created)
    workdir_blocked_by: str | None = None
    #: the nearest existing folder above a workdir that does not exist yet, and whether the
    #: workdir can be created there
    workdir_parent: str | None = None
    workdir_creatable: bool = True
    #: bytes left on the filesystem that holds (or will hold) the workdir
    workdir_space_left: int | None = None
    #: the runs of this very step whose supervisor is alive here
    step_runs: tuple[RunInfo, ...] = ()
    #: the facts probe's answer, asked in the same round trip (the review's question)
    facts: AskedFacts | None = None

    @classmethod
    def from_data(cls, d: dict[str, Any]) -> PreflightFacts:
        gpus = d.get("gpus")
        cmd = d.get("command") or {}
        return cls(
            python=d["python"]["executable"],
            python_version=d["python"]["version"],
            home=d.get("home", ""),
            workdir=d["workdir"]["path"],
            workdir_exists=bool(d["workdir"]["exists"]),
            workdir_writable=bool(d["workdir"]["writable"]),
            workdir_blocked_by=d["workdir"].get("not_a_folder"),
            workdir_parent=d["workdir"].get("parent"),
            workdir_creatable=bool(d["workdir"].get("parent_writable", True)),
            workdir_space_left=d["workdir"].get("space_left"),
            cwd=d["cwd"]["path"],
            cwd_exists=bool(d["cwd"]["exists"]),
            argv0=cmd.get("argv0"),
            resolved=cmd.get("resolved"),
            script=cmd.get("script"),
            script_exists=cmd.get("script_exists"),
            gpus_available=None if gpus is None else bool(gpus.get("available")),
            gpus_reason=None if gpus is None else gpus.get("reason"),
            gpus=tuple(GpuInfo.from_dict(g) for g in (gpus or {}).get("devices") or ()),
            holders=tuple(GpuHolder.from_dict(h) for h in d.get("holders") or ()),
            runs=tuple(RunInfo.from_facts(r, d.get("now")) for r in d.get("runs") or ()),
            step_runs=tuple(RunInfo.from_facts(r, d.get("now")) for r in d.get("step_runs") or ()),
            facts=None
            if d.get("facts") is None
            else AskedFacts(tuple(d["facts"]["asked"]), TargetFacts.from_dict(d["facts"])),
        )


def _call(target: Target, args: dict[str, Any], timeout: float = 120.0) -> dict[str, Any]:
    env = run_probe(target, PROBE, args, timeout=timeout)
    data: dict[str, Any] = env.data
    return data


def list_runs(target: Target, workdir: str | None, ids: list[str] | None = None) -> RunList:
    """Every run under ``<workdir>/.harness/runs`` (``None``: the target user's home)."""
    data = _call(target, {"op": "list", "workdir": workdir, "ids": ids})
    now = data.get("now")
    runs = tuple(RunInfo.from_facts(r, now) for r in data.get("runs") or ())
    gone = tuple(
        GoneRun(str(g["id"]), int(g["pid"]), str(g["run_dir"])) for g in data.get("gone") or ()
    )
    return RunList(root=data["root"], runs=runs, now=float(now or 0.0), gone=gone)


def home_workdir(target: Target) -> str:
    """The remote home: the workdir of a host that names none in hosts.toml."""
    root = list_runs(target, None, ids=[]).root
    return root[: -len("/.harness/runs")]


def preflight(
    target: Target,
    workdir: str,
    step: ResolvedStep,
    device_glob: str | None = None,
    facts: list[str] | None = None,
) -> PreflightFacts:
    """What the target says before a launch; with ``facts`` (dists), the facts probe's
    answer for them too (GPUs included, read once for both), in the same round trip."""
    start = time.perf_counter()
    data = _call(
        target,
        {
            "op": "preflight",
            "step": step.step,
            "workdir": workdir,
            "cwd": step.cwd,
            "argv": list(step.argv),
            "env": dict(step.env),
            "device_glob": device_glob,
            "facts": None if facts is None else {"dists": facts, "gpus": True},
        },
    )
    if data.get("facts") is not None:  # as gather_facts has them: the target, the time taken
        took = round(time.perf_counter() - start, 3)
        data["facts"] = {
            **data["facts"],
            "target": target.label,
            "connect_seconds": took,
            "asked": facts,
        }
    return PreflightFacts.from_data(data)


def gpu_holders(
    target: Target, workdir: str | None, device_glob: str | None = None
) -> tuple[tuple[GpuHolder, ...], tuple[RunInfo, ...]]:
    """Every process holding a GPU device file, and the runs they belong to."""
    data = _call(target, {"op": "holders", "workdir": workdir, "device_glob": device_glob})
    now = data.get("now")
    return (
        tuple(GpuHolder.from_dict(h) for h in data.get("holders") or ()),
        tuple(RunInfo.from_facts(r, now) for r in data.get("runs") or ()),
    )


def masked_record(
    run_id: str,
    step: ResolvedStep,
    target: Target,
    workdir: str,
    pipeline: str | None,
    extras: RunExtras | None = None,
) -> RunRecord:
    """``run.json`` as written on the target: secrets in argv and env replaced by ``***``."""
    secrets = step.secrets()
    check = shell.mask(shell.join(step.verify), secrets) if step.verify else None
    extras = extras or RunExtras()
    return RunRecord(
        id=run_id,
        step=step.step,
        argv=tuple(shell.mask(a, secrets) for a in step.argv),
        cwd=step.cwd,
        env=shell.mask_env(step.env, secrets),
        shell=step.shell,
        target=target.label,
        workdir=workdir,
        pipeline=pipeline,
        harness_version=__version__,
        smoke=extras.smoke,
        group=extras.group,
        verify=check,
        fingerprint=extras.fingerprint,
        service=step.service,
        services=extras.services,
    )


class Written(Protocol):
    """What a run directory writes as it is (``review.json``: a
    :class:`harness.report.model.Review`, which sits above this module)."""

    def to_dict(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class RunExtras:
    """What a run directory gets besides the step: the review it launched on
    (``review.json``), its smoke plan and the hook that cuts the model (``run.json`` ``smoke``,
    ``sitecustomize.py``), its place among several hosts (``group``) and the fingerprint of
    what it ran on (for ``--require-smoke``). Each is ``None`` when the launch has none."""

    review: Written | None = None
    smoke: SmokeRecord | None = None
    hook: dict[str, str] | None = None
    group: GroupRecord | None = None
    fingerprint: Fingerprint | None = None
    #: the services this step needs (stopped by its supervisor when it ends, unless kept)
    services: tuple[NeededService, ...] | None = None
    #: where the target's GPUs are listed (the stop's GPU-freed check)
    device_glob: str | None = None


@dataclass(frozen=True)
class Spawned:
    """What the launch probe answered: the run, and the stale GPU holders it ended first."""

    run: RunInfo
    killed: tuple[int, ...] = ()
    kill_remaining: tuple[int, ...] = ()


def launch(
    target: Target,
    run_id: str,
    workdir: str,
    step: ResolvedStep,
    *,
    pipeline: str | None,
    timings: Timings,
    kill_first: tuple[GpuHolder, ...] = (),
    extras: RunExtras = RunExtras(),
) -> Spawned:
    """Create the run directory and start the supervisor detached; return once it answered.

    The real argv and env travel in the probe's stdin and then on the supervisor's stdin
    pipe: only the masked copy is written to disk.
    """
    record = masked_record(run_id, step, target, workdir, pipeline, extras)
    args = {
        "op": "launch",
        "workdir": workdir,
        "run_id": run_id,
        "record": record.to_dict(),
        "program": program_sources(),
        "argv": list(step.argv),
        "cwd": step.cwd,
        "env": dict(step.env),
        "kill_first": [{"pid": h.pid, "starttime": h.starttime} for h in kill_first],
        "grace": timings.stop_grace,
        "handshake_timeout": timings.handshake,
        "review": None if extras.review is None else extras.review.to_dict(),
        "hook": extras.hook,
        "verify": list(step.verify),
        "verify_timeout": step.verify_timeout,
        "verifiers": verifier_sources() if uses_verifiers(step, workdir) else None,
        "service": None if step.service is None else step.service.to_dict(),
        "services": [s.to_dict() for s in extras.services or ()],
        "watch": dict(step.disk) if step.disk else None,  # fill at 90 %, progress (_fill.py)
        "status_timeout": timings.status_wait,
        "device_glob": extras.device_glob,
    }
    try:
        data = _call(target, args, timeout=timings.handshake + timings.stop_grace + 60.0)
    except NoSpace as exc:
        raise RunError(
            f"{exc.message}: the step was not started, and nothing of its run is left there",
            f"free space on {target.label} (df -h {workdir}), or set another workdir "
            "(hosts.toml, or --workdir)",
        ) from None
    run = RunInfo.from_facts(data["run"], data.get("now"))
    killed = data.get("killed") or {}
    return Spawned(
        run=run,
        killed=tuple(killed.get("terminated") or ()) + tuple(killed.get("killed") or ()),
        kill_remaining=tuple(killed.get("remaining") or ()),
    )


def stop(
    target: Target,
    workdir: str | None,
    run_id: str,
    *,
    grace: float,
    timings: Timings,
    device_glob: str | None = None,
) -> StopReport:
    data = _call(
        target,
        {
            "op": "stop",
            "workdir": workdir,
            "run_id": run_id,
            "grace": grace,
            "status_timeout": timings.status_wait,
            "device_glob": device_glob,
        },
        timeout=grace + timings.status_wait + 60.0,
    )
    report = data.get("report") or {}
    services = tuple(data.get("services") or ())
    left = {p for s in services for p in s.get("remaining") or ()}
    if data.get("gone"):  # its directory was deleted while it ran: no record left to read
        data["run"]["record"]["step"] = run_id.rsplit("-", 3)[0]
    return StopReport(
        gone=bool(data.get("gone")),
        run=RunInfo.from_facts(data["run"], data.get("now")),
        terminated=tuple(report.get("terminated") or ()),
        killed=tuple(report.get("killed") or ()),
        remaining=tuple(sorted(set(report.get("remaining") or ()) | left)),
        holders=tuple(GpuHolder.from_dict(h) for h in data.get("holders") or ()),
        already_finished=bool(data.get("already_finished")),
        unwritten=tuple(data.get("unwritten") or ()),
        services=services,
    )


def refuse_read_only(target: Target) -> None:
    if not target.writable:
        raise RunError(
            f"{target.label} is read-only: it is wheels unpacked from PyPI, nothing runs there",
            "run steps on a host from hosts.toml, on local or on venv:PATH",
        )
