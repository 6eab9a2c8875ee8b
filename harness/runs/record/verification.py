"""A step's output check: what its ``verify.json`` says, and how a run then reads (pure).

The supervisor runs the step's ``verify`` command once the step exits 0 and writes
``verify.json`` before ``status.json``, so a run is ``running`` until its output is judged.
Before it does, it ends whatever the step left running (``ended``: how many), and it refuses
to run a shipped check whose bytes changed since launch (``refused``).

The check's protocol: exit 0 passed, exit 1 failed, and one report line
``HARNESS_VERIFY {json}`` -- written to the fd that ``HARNESS_VERIFY_FD`` names (the check's
own channel), or on the check's own stdout; never read from the run's log, where anything the
step left behind can write. Two report shapes are read:

* per check (``probes/verifiers/hidden_states.py``): ``checks`` maps each check (``values``,
  ``ids``, ``lengths``, ``layers``) to ``passed``/``compared``/``of`` (and ``skipped``: why
  it did not run; ``values`` also ``layers``, ``max_rel_err``, ``chosen_by``: ``all`` or
  ``spread``); ``failed`` lists ``{"sample", "check", "why"}``; ``drift`` sums up the samples
  that passed between the tolerance and the hard bound. The words give each check its own
  count -- never one N/N over checks of different reach.
* one count (the other shipped checks, and yours): ``checked``/``total``, the ``failed``
  sample names, a ``unit`` ("samples"), a one-line ``detail`` and free ``metrics``.

Anything else -- another exit code, a signal, a timeout, exit 1 naming no failure, a report
that compared nothing -- is no pass.
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
PLURAL = "samples"
#: The order the words give a per-check report's counts in
ORDER = ("values", "ids", "lengths", "layers")


class Outcome(Word):
    """How a step's output check ended. ``passed`` is the only one a run may succeed with."""

    passed: bool

    PASSED = ("passed", True)
    FAILED = ("failed", False)  # the check ran and found bad output
    CRASHED = ("crashed", False)  # the check itself failed: no verdict on the output
    TIMED_OUT = ("timed-out", False)
    EMPTY = ("compared-nothing", False)  # it ran and passed nothing: no verdict either
    REFUSED = ("refused", False)  # a shipped check changed after launch: not run


@dataclass(frozen=True)
class Count:
    """One check's count in a per-check report."""

    name: str
    passed: int = 0
    compared: int = 0
    of: int = 0
    skipped: str = ""
    layers: tuple[int, ...] = ()
    max_rel_err: float | None = None
    chosen_by: str = ""
    #: samples whose values were read dequantized from float8 (hs-connectors' FP8 connector)
    fp8: int = 0
    #: samples compared at every layer of ``layers`` (0: all compared ones), the others at
    #: the lowest; and the pass rule in the check's words (the floors measured, the bounds)
    every_layer_on: int = 0
    rule: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"passed": self.passed, "compared": self.compared, "of": self.of}
        if self.skipped:
            out["skipped"] = self.skipped
        if self.layers:
            out.update(
                layers=list(self.layers), max_rel_err=self.max_rel_err, chosen_by=self.chosen_by
            )
        if self.fp8:
            out["fp8"] = self.fp8
        if self.every_layer_on:
            out["every_layer_on"] = self.every_layer_on
        if self.rule:
            out["rule"] = self.rule
        return out

    @classmethod
    def from_dict(cls, name: str, d: Any) -> Count:
        d = d if isinstance(d, dict) else {}
        n = {k: max(int_or_none(d.get(k)) or 0, 0) for k in ("passed", "compared", "of")}  # no -1/0
        err = d.get("max_rel_err")
        return cls(
            name,
            **n,
            skipped=str(d.get("skipped") or ""),
            layers=tuple(x for x in map(int_or_none, d.get("layers") or ()) if x is not None),
            max_rel_err=float(err) if isinstance(err, (int, float)) else None,
            chosen_by=str(d.get("chosen_by") or ""),
            fp8=int_or_none(d.get("fp8")) or 0,
            every_layer_on=int_or_none(d.get("every_layer_on")) or 0,
            rule=str(d.get("rule") or ""),
        )


@dataclass(frozen=True)
class Failure:
    """One sample that failed one check, and why (a per-check report's ``failed`` entry)."""

    sample: str
    check: str = ""
    why: str = ""

    @classmethod
    def from_any(cls, x: Any) -> Failure:
        if isinstance(x, dict):
            return cls(
                str(x.get("sample") or "?"), str(x.get("check") or ""), str(x.get("why") or "")
            )
        return cls(str(x))


def _in_order(c: Count) -> tuple[int, str]:
    """Checks in the words' order (a report read back from JSON may have its keys sorted)."""
    return (ORDER.index(c.name) if c.name in ORDER else len(ORDER), c.name)


def int_or_none(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


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
    failures: tuple[Failure, ...] = ()
    unit: str = "samples"
    detail: str = ""
    metrics: dict[str, Any] = field(default_factory=dict)
    checks: tuple[Count, ...] = ()
    failed_count: int | None = None
    drift: dict[str, Any] | None = None
    refused: str = ""
    ended: int = 0
    #: (files older than the step's start, files read): outputs this run did not write
    kept: tuple[int, int] | None = None

    @property
    def passed(self) -> bool:
        return self.outcome.passed

    @property
    def failed(self) -> tuple[str, ...]:
        """The failed samples' names, each once, in order."""
        return tuple(dict.fromkeys(f.sample for f in self.failures))

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
            "failed": [
                {"sample": f.sample, "check": f.check, "why": f.why} if f.check else f.sample
                for f in self.failures
            ],
            "unit": self.unit,
            "detail": self.detail,
            "metrics": dict(self.metrics),
            "checks": {c.name: c.to_dict() for c in self.checks} or None,
            "failed_count": self.failed_count,
            "drift": self.drift,
            "refused": self.refused or None,
            "ended": self.ended,
            "kept": {"files": self.kept[0], "of": self.kept[1]} if self.kept else None,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Verification:
        kw = pick_fields(cls, d)
        try:
            kw["outcome"] = Outcome(str(d.get("outcome")))
        except ValueError:
            kw["outcome"] = Outcome.CRASHED  # an unknown word is no pass
        for k in ("exit_code", "signal", "checked", "total", "failed_count"):
            kw[k] = int_or_none(kw.get(k))
            if k not in ("exit_code", "signal") and (kw[k] or 0) < 0:
                kw[k] = None  # a negative count is no count
        kw["failures"] = tuple(Failure.from_any(x) for x in d.get("failed") or ())
        raw = d.get("checks")
        found = (
            [Count.from_dict(str(k), v) for k, v in raw.items()] if isinstance(raw, dict) else []
        )
        kw["checks"] = tuple(sorted(found, key=_in_order))
        kw["drift"] = dict(d["drift"]) if isinstance(d.get("drift"), dict) else None
        kw["refused"] = str(d.get("refused") or "")
        kw["ended"] = int_or_none(d.get("ended")) or 0
        kw["unit"] = str(kw.get("unit") or "samples")
        kw["detail"] = str(kw.get("detail") or "")
        kw["metrics"] = dict(kw.get("metrics") or {})
        kept = d.get("kept")
        n, of = (
            (int_or_none(kept.get("files")), int_or_none(kept.get("of")))
            if isinstance(kept, dict)
            else (None, None)
        )
        kw["kept"] = (n, of) if n is not None and of is not None else None
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
        refused = str(raw.get("refused") or "")
        outcome = judge(
            ended["exit_code"], ended["signal"], bool(raw.get("timed_out")), report, refused
        )
        got = raw.get("ended")
        leftovers: dict[str, Any] = got if isinstance(got, dict) else {}
        gone = len(leftovers.get("terminated") or ()) + len(leftovers.get("killed") or ())
        said = report if isinstance(report, dict) else {}
        return cls.from_dict(
            {**said, **ended, "outcome": outcome.value, "refused": refused, "ended": gone}
        )


def judge(
    exit_code: int | None, signal: int | None, timed_out: bool, report: Any, refused: str = ""
) -> Outcome:
    """Pure: the outcome from how the check ended and what it reported."""
    if refused:
        return Outcome.REFUSED
    if timed_out:
        return Outcome.TIMED_OUT
    if signal is not None or exit_code not in (0, 1):
        return Outcome.CRASHED
    if isinstance(report, dict) and report.get("failed"):
        return Outcome.FAILED  # exit 0 naming failures: believe the failures
    if exit_code == 1:
        return Outcome.CRASHED  # exit 1 naming no failure (a traceback, a broken check)
    if isinstance(report, dict) and compared_nothing(report):
        return Outcome.EMPTY
    return Outcome.PASSED


def compared_nothing(report: dict[str, Any]) -> bool:
    """Pure: a report whose checks compared nothing (``checked: 0``; every check at 0; a
    check at 0 that does not say why it was skipped)."""
    checks = report.get("checks")
    if isinstance(checks, dict) and checks:
        counts = [Count.from_dict(str(k), v) for k, v in checks.items()]
        return all(c.compared == 0 for c in counts) or any(
            c.compared == 0 and not c.skipped for c in counts
        )
    return report.get("checked") == 0


def exit_code(v: Verification) -> int:
    """What ``harness run`` exits with when the step exited 0 but its check did not pass."""
    if v.outcome == Outcome.TIMED_OUT:
        return 124
    if v.signal is not None:
        return 128 + v.signal
    return v.exit_code if v.exit_code not in (None, 0) else 1
