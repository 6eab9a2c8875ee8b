"""Frozen records for runs: what the supervisor wrote, what a probe saw, what we concluded.

``to_dict`` is the ``--json`` output; ``from_dict`` reads the remote JSON (defensively: a field
missing from an older run directory becomes its default). Both are exact inverses, which the
round-trip tests pin.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from harness.models import FlatRecord, pick_fields
from harness.runs.record.lifecycle import RunState, derive_state, exit_code_of, state_label
from harness.runs.record.parts import (
    Fingerprint,
    GroupRecord,
    NeededService,
    ServiceRecord,
    SmokeRecord,
    Wire,
    needed_from,
)
from harness.runs.record.verification import Verification
from harness.runs.record.written import DiskFull, Opaque, Progress, Ready
from harness.vocab import Word


class Level(Word):
    """A preflight verdict: ``fail`` refuses the launch; ``mark`` is how a line starts."""

    mark: str
    hinted: bool  # its hint is shown

    OK = ("ok", "[green]✓[/]")
    WARN = ("warn", "[yellow]![/]", True)
    FAIL = ("fail", "[red]✗[/]", True)
    SKIP = ("skip", "[dim]–[/]")


def _opt_int(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _opt_float(v: object) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


@dataclass(frozen=True)
class RunRecord:
    """``run.json``: what was launched, with secrets already masked."""

    id: str
    step: str
    argv: tuple[str, ...]
    cwd: str
    env: dict[str, str] = field(default_factory=dict)
    shell: bool = False
    target: str = ""
    workdir: str = ""
    run_dir: str = ""
    created_at: float | None = None
    pipeline: str | None = None
    harness_version: str = ""
    #: smoke mode's plan; None for a real run
    smoke: SmokeRecord | None = None
    #: a run spread over hosts: its group, this host's rank and role
    group: GroupRecord | None = None
    #: the output check the supervisor runs after the step (masked); None: none declared
    verify: str | None = None
    #: what the run was started on: what a verified run vouches for
    fingerprint: Fingerprint | None = None
    #: a service step's settings; the service runs a step needed
    service: ServiceRecord | None = None
    services: tuple[NeededService, ...] | None = None

    def to_dict(self) -> Wire:
        return {
            "id": self.id,
            "step": self.step,
            "argv": list(self.argv),
            "cwd": self.cwd,
            "env": dict(self.env),
            "shell": self.shell,
            "target": self.target,
            "workdir": self.workdir,
            "run_dir": self.run_dir,
            "created_at": self.created_at,
            "pipeline": self.pipeline,
            "harness_version": self.harness_version,
            "smoke": None if self.smoke is None else self.smoke.to_dict(),
            "group": None if self.group is None else self.group.to_dict(),
            "verify": self.verify,
            "fingerprint": None if self.fingerprint is None else self.fingerprint.to_dict(),
            "service": None if self.service is None else self.service.to_dict(),
            "services": None if self.services is None else [s.to_dict() for s in self.services],
        }

    @classmethod
    def from_dict(cls, d: Wire) -> RunRecord:
        kw = pick_fields(cls, d)
        # A run directory whose run.json is missing or torn still lists under its name.
        kw.setdefault("id", str(kw.get("run_dir", "")).rstrip("/").rsplit("/", 1)[-1])
        kw.setdefault("step", "?")
        kw.setdefault("cwd", "")
        kw["argv"] = tuple(str(a) for a in kw.get("argv") or ())
        kw["env"] = {str(k): str(v) for k, v in (kw.get("env") or {}).items()}
        kw["created_at"] = _opt_float(kw.get("created_at"))
        smoke, group, fp, service = (
            kw.get(k) for k in ("smoke", "group", "fingerprint", "service")
        )
        kw["smoke"] = SmokeRecord.from_dict(smoke) if isinstance(smoke, dict) else None
        kw["group"] = GroupRecord.from_dict(group) if isinstance(group, dict) else None
        kw["fingerprint"] = Fingerprint.from_dict(fp) if isinstance(fp, dict) else None
        kw["service"] = ServiceRecord.from_dict(service) if isinstance(service, dict) else None
        kw["services"] = needed_from(kw.get("services"))
        return cls(**kw)


@dataclass(frozen=True)
class SupervisorInfo:
    """``supervisor.json``: who to check for liveness, and the step's process ids."""

    pid: int | None = None
    starttime: int | None = None
    boot_id: str = ""
    step_pid: int | None = None
    step_starttime: int | None = None
    step_pgid: int | None = None
    step_sid: int | None = None
    started_at: float | None = None

    def to_dict(self) -> Wire:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, d: Wire) -> SupervisorInfo:
        kw = pick_fields(cls, d)
        for k in ("pid", "starttime", "step_pid", "step_starttime", "step_pgid", "step_sid"):
            kw[k] = _opt_int(kw.get(k))
        kw["started_at"] = _opt_float(kw.get("started_at"))
        kw["boot_id"] = str(kw.get("boot_id") or "")
        return cls(**kw)


@dataclass(frozen=True)
class RunStatus:
    """``status.json``: how the step ended (exactly one of exit_code/signal, or an error)."""

    exit_code: int | None = None
    signal: int | None = None
    ended_at: float | None = None
    stop_requested: bool = False
    error: str | None = None
    #: the run directory's disk was full when the step ended
    disk_full: DiskFull | None = None
    #: a service that never got ready: why; the services a step stopped at its end
    not_ready: str | None = None
    services: tuple[Opaque, ...] | None = None

    def to_dict(self) -> Wire:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["disk_full"] = None if self.disk_full is None else self.disk_full.to_dict()
        out["services"] = None if self.services is None else [dict(s) for s in self.services]
        return out

    @classmethod
    def from_dict(cls, d: Wire) -> RunStatus:
        kw = pick_fields(cls, d)
        kw["exit_code"] = _opt_int(kw.get("exit_code"))
        kw["signal"] = _opt_int(kw.get("signal"))
        kw["ended_at"] = _opt_float(kw.get("ended_at"))
        kw["stop_requested"] = bool(kw.get("stop_requested"))
        kw["disk_full"] = DiskFull.read(kw.get("disk_full"))
        services = kw.get("services")
        kw["services"] = (
            None
            if not isinstance(services, list)
            else tuple(s for s in services if isinstance(s, dict))
        )
        return cls(**kw)


@dataclass(frozen=True)
class RunInfo:
    """One run as seen at ``observed_at`` (the target's clock): the facts behind its state."""

    record: RunRecord
    supervisor: SupervisorInfo | None = None
    supervisor_alive: bool | None = None
    status: RunStatus | None = None
    stop_requested: bool = False
    log_size: int | None = None
    observed_at: float | None = None
    verification: Verification | None = None
    ready: Ready | None = None  # a service's ready.json
    #: a step with a disk budget: its progress.json (probes/runs/_fill.py)
    progress: Progress | None = None

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def log_path(self) -> str:
        return self.record.run_dir.rstrip("/") + "/log"

    @property
    def started_at(self) -> float | None:
        if self.supervisor is not None and self.supervisor.started_at is not None:
            return self.supervisor.started_at
        return self.record.created_at

    @property
    def state(self) -> RunState:
        declared = self.record.verify is not None
        return derive_state(self.status, self.supervisor_alive, self.verification, declared)

    def to_dict(self) -> Wire:
        return {
            "record": self.record.to_dict(),
            "supervisor": self.supervisor.to_dict() if self.supervisor else None,
            "supervisor_alive": self.supervisor_alive,
            "status": self.status.to_dict() if self.status else None,
            "stop_requested": self.stop_requested,
            "log_size": self.log_size,
            "observed_at": self.observed_at,
            "verification": None if self.verification is None else self.verification.to_dict(),
            "ready": None if self.ready is None else self.ready.to_dict(),
            **({"progress": self.progress.to_dict()} if self.progress else {}),
            # Derived, for readers of --json; from_dict ignores them.
            "state": self.state.value,
            "label": state_label(self),
            "exit": exit_code_of(self),
        }

    @classmethod
    def from_dict(cls, d: Wire) -> RunInfo:
        sup, status, check = d.get("supervisor"), d.get("status"), d.get("verification")
        alive = d.get("supervisor_alive")
        return cls(
            record=RunRecord.from_dict(d.get("record") or {}),
            supervisor=SupervisorInfo.from_dict(sup) if isinstance(sup, dict) else None,
            supervisor_alive=alive if isinstance(alive, bool) else None,
            status=RunStatus.from_dict(status) if isinstance(status, dict) else None,
            stop_requested=bool(d.get("stop_requested")),
            log_size=_opt_int(d.get("log_size")),
            observed_at=_opt_float(d.get("observed_at")),
            verification=Verification.from_dict(check) if isinstance(check, dict) else None,
            ready=Ready.read(d.get("ready")),
            progress=Progress.read(d.get("progress")),
        )

    @classmethod
    def from_facts(cls, facts: Wire, now: float | None) -> RunInfo:
        """The runs probe's ``run_facts`` (raw files) -> a RunInfo."""
        record = dict(facts.get("record") or {})
        record.setdefault("run_dir", facts.get("run_dir", ""))
        return cls.from_dict(
            {
                "record": record,
                "supervisor": facts.get("supervisor"),
                "supervisor_alive": facts.get("supervisor_alive"),
                "status": facts.get("status"),
                "stop_requested": isinstance(facts.get("stop"), dict),
                "log_size": facts.get("log_size"),
                "observed_at": now,
                "verification": (v := Verification.from_facts(facts.get("verify"))) and v.to_dict(),
                "ready": facts.get("ready"),
                "progress": facts.get("progress"),
            }
        )


@dataclass(frozen=True)
class GpuHolder:
    """A process with an open GPU device file (``/proc/PID/fd`` -> ``/dev/nvidia*``)."""

    pid: int
    starttime: int
    comm: str
    cmdline: str = ""
    ppid: int = 0
    parent_comm: str | None = None
    run_id: str | None = None
    devices: tuple[str, ...] = ()

    def to_dict(self) -> Wire:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d["devices"] = list(self.devices)
        return d

    @classmethod
    def from_dict(cls, d: Wire) -> GpuHolder:
        kw = pick_fields(cls, d)
        kw["devices"] = tuple(kw.get("devices") or ())
        return cls(**kw)


@dataclass(frozen=True)
class Verdict(FlatRecord):
    """One preflight line: ``check`` (target, command, GPUs ...), its level and the words."""

    check: str
    level: Level
    message: str
    hint: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "level", Level(self.level))

    def to_dict(self) -> Wire:
        return {**super().to_dict(), "level": self.level.value}


@dataclass(frozen=True)
class Frame(FlatRecord):
    """One traceback frame: ``File "file", line N, in func`` and its source line."""

    file: str
    line: int
    func: str
    code: str | None = None


@dataclass(frozen=True)
class FailureSummary:
    """The final exception of a failed step, the frames that led to it, and what to run next.

    ``details``: the lines the exception printed after its first (pydantic lists each field
    there). ``caller``: the call site in the calling package when the failure is an API
    mismatch between two installed packages, and ``callee`` the ``module:Name`` that
    ``harness probe`` resolves from there (to show the installed signature).
    """

    exc_type: str
    message: str
    frames: tuple[Frame, ...] = ()
    root_cause: FailureSummary | None = None
    hint: str | None = None
    commands: tuple[str, ...] = ()
    details: tuple[str, ...] = ()
    caller: Frame | None = None
    callee: str | None = None

    def to_dict(self) -> Wire:
        return {
            "exc_type": self.exc_type,
            "message": self.message,
            "frames": [f.to_dict() for f in self.frames],
            "root_cause": self.root_cause.to_dict() if self.root_cause else None,
            "hint": self.hint,
            "commands": list(self.commands),
            "details": list(self.details),
            "caller": self.caller.to_dict() if self.caller else None,
            "callee": self.callee,
        }

    @classmethod
    def from_dict(cls, d: Wire) -> FailureSummary:
        root = d.get("root_cause")
        caller = d.get("caller")
        return cls(
            exc_type=str(d.get("exc_type", "")),
            message=str(d.get("message", "")),
            frames=tuple(Frame.from_dict(f) for f in d.get("frames") or ()),
            root_cause=FailureSummary.from_dict(root) if isinstance(root, dict) else None,
            hint=d.get("hint"),
            commands=tuple(d.get("commands") or ()),
            details=tuple(d.get("details") or ()),
            caller=Frame.from_dict(caller) if isinstance(caller, dict) else None,
            callee=d.get("callee"),
        )


@dataclass(frozen=True)
class Phase(FlatRecord):
    """Where a step is, recognised from its log: ``loading weights 29/64``."""

    name: str
    done: int | None = None
    total: int | None = None
    detail: str | None = None

    @property
    def fraction(self) -> float | None:
        if self.done is None or not self.total:
            return None
        return max(0.0, min(1.0, self.done / self.total))
