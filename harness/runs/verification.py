"""A step's output check: what its ``verify.json`` says, and how a run then reads (pure).

The supervisor runs the step's ``verify`` command once the step exits 0 and writes
``verify.json`` before ``status.json``, so a run is ``running`` until its output is judged.
The check's own protocol is small: exit 0 passed, exit 1 failed, and optionally one line
``HARNESS_VERIFY {json}`` on its output with ``checked``/``total`` counts, the ``failed``
sample names, a ``unit`` ("samples"), a one-line ``detail`` and free ``metrics``. Anything
else -- another exit code, a signal, a timeout, exit 1 without a report -- is the check
itself failing, never a pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.models import pick_fields
from harness.vocab import Word

#: The line a check prints to report its counts (the supervisor reads the last one).
REPORT_MARK = "HARNESS_VERIFY "
#: How many failed sample names a label shows before "…".
SHOWN = 3


class Outcome(Word):
    """How a step's output check ended. ``passed`` is the only one a run may succeed with."""

    passed: bool

    PASSED = ("passed", True)
    FAILED = ("failed", False)  # the check ran and found bad output
    CRASHED = ("crashed", False)  # the check itself failed: no verdict on the output
    TIMED_OUT = ("timed-out", False)


@dataclass(frozen=True)
class Verification:
    """``verify.json``. ``report``: the check's ``HARNESS_VERIFY`` line, parsed (or None)."""

    outcome: Outcome
    exit_code: int | None = None
    signal: int | None = None
    timeout: float | None = None
    started_at: float | None = None
    ended_at: float | None = None
    checked: int | None = None
    total: int | None = None
    failed: tuple[str, ...] = ()
    unit: str = "samples"
    detail: str = ""
    metrics: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.outcome.passed

    def to_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome.value,
            "exit_code": self.exit_code,
            "signal": self.signal,
            "timeout": self.timeout,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "checked": self.checked,
            "total": self.total,
            "failed": list(self.failed),
            "unit": self.unit,
            "detail": self.detail,
            "metrics": dict(self.metrics),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Verification:
        kw = pick_fields(cls, d)
        try:
            kw["outcome"] = Outcome(str(d.get("outcome")))
        except ValueError:
            kw["outcome"] = Outcome.CRASHED  # an unknown word is no pass
        for k in ("exit_code", "signal", "checked", "total"):
            v = kw.get(k)
            kw[k] = v if isinstance(v, int) and not isinstance(v, bool) else None
        kw["failed"] = tuple(str(x) for x in kw.get("failed") or ())
        kw["unit"] = str(kw.get("unit") or "samples")
        kw["detail"] = str(kw.get("detail") or "")
        kw["metrics"] = dict(kw.get("metrics") or {})
        return cls(**kw)

    @classmethod
    def from_facts(cls, raw: Any) -> Verification | None:
        """The supervisor's raw ``verify.json``: how the check ended and its report line."""
        if not isinstance(raw, dict):
            return None
        report = raw.get("report")
        ended = {
            k: raw.get(k) for k in ("exit_code", "signal", "timeout", "started_at", "ended_at")
        }
        outcome = judge(ended["exit_code"], ended["signal"], bool(raw.get("timed_out")), report)
        return cls.from_dict({**(report if isinstance(report, dict) else {}), **ended,
                              "outcome": outcome.value})  # fmt: skip


def judge(exit_code: int | None, signal: int | None, timed_out: bool, report: Any) -> Outcome:
    """Pure: the outcome from how the check ended and what it reported."""
    if timed_out:
        return Outcome.TIMED_OUT
    if signal is not None or exit_code not in (0, 1):
        return Outcome.CRASHED
    if exit_code == 1:
        # a check that found bad output says which; exit 1 alone is a crash (a traceback)
        return Outcome.FAILED if isinstance(report, dict) else Outcome.CRASHED
    if isinstance(report, dict) and report.get("failed"):
        return Outcome.FAILED  # exit 0 while naming failures: believe the failures
    return Outcome.PASSED


def counts(v: Verification) -> str:
    """``48/48`` (passed) or ``24/48`` (the failures out of those checked); ``""`` unknown."""
    if v.checked is None:
        return ""
    done = v.checked - len(v.failed) if v.passed else len(v.failed)
    of = f"{v.checked}" + (f" of {v.total}" if v.total and v.total != v.checked else "")
    return f"{done}/{of}"


def describe(v: Verification) -> str:
    """``verified 48/48`` / ``failed verification: 24/48 samples differ (data_8, …)`` ..."""
    if v.outcome == Outcome.PASSED:
        shown = counts(v)
        return "verified" + (f" {shown}" if shown else "") + (f" ({v.detail})" if v.detail else "")
    if v.outcome == Outcome.FAILED:
        names = ", ".join(v.failed[:SHOWN]) + (", …" if len(v.failed) > SHOWN else "")
        what = f"{counts(v)} {v.unit} differ" if v.checked is not None else "output differs"
        return (
            f"failed verification: {what}"
            + (f" ({names})" if names else "")
            + (f"; {v.detail}" if v.detail else "")
        )
    if v.outcome == Outcome.TIMED_OUT:
        return f"failed verification: the check timed out after {v.timeout or 0:.0f} s"
    how = f"signal {v.signal}" if v.signal is not None else f"exit {v.exit_code}"
    return f"failed verification: the check crashed ({how}); see the log"


def exit_code(v: Verification) -> int:
    """What ``harness run`` exits with when the step exited 0 but its check did not pass."""
    if v.outcome == Outcome.TIMED_OUT:
        return 124
    if v.signal is not None:
        return 128 + v.signal
    return v.exit_code if v.exit_code not in (None, 0) else 1
