"""A run's state, exit code and label, from the facts the supervisor reported (pure).

Apart from :mod:`.state` so that the models can derive them without importing the decisions
that take models (``RunInfo.state`` and its ``--json`` fields come from here).
"""

from __future__ import annotations

import signal
from typing import Protocol

from harness.runs.record import verification as checks
from harness.runs.record.parts import ServiceRecord
from harness.runs.record.verdict import describe
from harness.runs.record.verification import Verification
from harness.vocab import Word


class RunState(Word):
    """Where a run is: derived from its facts by :func:`derive_state`, never stored; the word
    is what ``--json``'s ``state`` and the labels carry."""

    style: str  # its colour in ``harness runs``
    service: str  # what a service is in it (``""`` while running: starting or ready)

    RUNNING = ("running", "cyan")
    SUCCEEDED = ("succeeded", "green", "stopped")
    FAILED = ("failed", "red", "failed")
    KILLED = ("killed", "magenta", "stopped")  # a signal, or harness stop asked
    LOST = ("lost", "yellow", "lost")  # the supervisor is gone and left no status


class RunStatus(Protocol):
    """What the decisions read of ``status.json`` (:class:`harness.runs.record.models.RunStatus`);
    a protocol, so that the models import these decisions and not the other way round."""

    @property
    def exit_code(self) -> int | None: ...
    @property
    def signal(self) -> int | None: ...
    @property
    def stop_requested(self) -> bool: ...
    @property
    def error(self) -> str | None: ...
    @property
    def not_ready(self) -> str | None: ...


class Recorded(Protocol):
    """What the labels read of ``run.json`` (:class:`harness.runs.record.models.RunRecord`)."""

    @property
    def service(self) -> ServiceRecord | None: ...
    @property
    def verify(self) -> str | None: ...


class RunInfo(Protocol):
    """What the labels read of a run (:class:`harness.runs.record.models.RunInfo`)."""

    @property
    def state(self) -> RunState: ...
    @property
    def status(self) -> RunStatus | None: ...
    @property
    def verification(self) -> Verification | None: ...
    @property
    def record(self) -> Recorded: ...
    @property
    def ready(self) -> object | None: ...


def derive_state(
    status: RunStatus | None,
    supervisor_alive: bool | None,
    verified: Verification | None = None,
    declared: bool = False,
) -> RunState:
    """The state from the facts: a status file decides; without one, the supervisor's life.

    ``killed`` covers both a step ended by a signal and one that ``harness stop`` asked to
    end (a step that catches SIGTERM and exits 1 was still stopped, not failed). A dead
    supervisor with no status is ``lost``: nobody is left to learn how the step ended. A step
    that exited 0 whose output check did not pass has ``failed``: never "succeeded" for
    output that failed its check (``declared``: the run has one).
    """
    if status is not None:
        if status.stop_requested:
            return RunState.KILLED
        if status.not_ready:  # a service that exited or timed out before it was ready
            return RunState.FAILED
        if status.signal is not None:
            return RunState.KILLED
        if status.exit_code == 0:
            if verified is None:  # a declared check that left no verdict fails the run
                return RunState.FAILED if declared else RunState.SUCCEEDED
            return RunState.SUCCEEDED if verified.passed else RunState.FAILED
        return RunState.FAILED
    return RunState.RUNNING if supervisor_alive else RunState.LOST


def signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def exit_code_of(info: RunInfo) -> int | None:
    """What a foreground ``harness run`` exits with: the step's code, 128+N for signal N.

    ``None`` while it runs; 1 for a lost run or a stop that left no code (the command
    worked, the step's outcome is unknown or it was stopped).
    """
    state = info.state
    status = info.status
    if state == RunState.RUNNING:
        return None
    if status is None:
        return 1
    if status.signal is not None:
        return 128 + status.signal
    if status.exit_code == 0 and state == RunState.FAILED:  # the step's output failed its check
        return checks.exit_code(info.verification) if info.verification is not None else 1
    if status.exit_code is not None:
        return status.exit_code if status.exit_code != 0 or state != RunState.KILLED else 128 + 15
    return 1


def state_label(info: RunInfo) -> str:
    """``failed (3)``, ``killed (SIGTERM)``, ``running``, ``lost``; a step that exited 0:
    ``succeeded · verified 48/48``, ``failed verification: 24/48 samples differ (...)``, or
    ``succeeded · unverified`` when it declares no output check."""
    state = info.state
    status = info.status
    if info.record.service:
        return service_label(info)
    if status is None:
        return str(state)
    if status.exit_code == 0 and state in (RunState.SUCCEEDED, RunState.FAILED):
        v = info.verification
        if v is None:
            if info.record.verify is None:
                return "succeeded · unverified"
            return "failed verification: the check left no verdict"
        return ("succeeded · " if v.passed else "") + describe(v)
    if status.signal is not None:
        return f"{state} ({signal_name(status.signal)})"
    if state == RunState.FAILED and status.exit_code is not None:
        return f"failed ({status.exit_code})"
    if state == RunState.KILLED and status.exit_code is not None:
        return f"killed (exit {status.exit_code})"
    if state == RunState.FAILED and status.error:
        return "failed (did not start)"
    return str(state)


def service_word(info: RunInfo) -> str:
    """``starting`` / ``ready`` / ``stopped`` / ``failed`` (``lost``: its supervisor is gone)."""
    if info.state == RunState.RUNNING:  # ``starting`` until its health URL answered
        return "ready" if info.ready else "starting"
    return info.state.service


def service_label(info: RunInfo) -> str:
    """``service :8000 ready``; a failed one says how it ended and, before it was ready, why."""
    port = None if info.record.service is None else info.record.service.port
    word = service_word(info)
    label = f"service :{port} {word}"
    status = info.status
    if word != "failed" or status is None:
        return label
    if status.signal is not None:
        how = signal_name(status.signal)
    elif status.exit_code is not None:
        how = str(status.exit_code)
    else:
        how = "did not start" if status.error else ""
    label += f" ({how})" if how else ""
    return label + (f": {status.not_ready}" if status.not_ready else "")
