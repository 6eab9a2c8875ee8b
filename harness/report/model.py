"""The review's model and its verdict. Pure: the gathering happens in ``build.py``.

Everything in a :class:`Review` is a model (the target's facts, the check reports, each
series' state, GPU holders, the step); ``to_dict`` happens when it is written as JSON
(``harness report --format json``, ``review.json`` in a run directory).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.analysis.findings import CheckReport, Finding, Severity
from harness.models import TargetFacts
from harness.patching.states import Status
from harness.report.parts import SeriesView
from harness.runs.pipeline.smoke import SmokeTested
from harness.runs.record.models import GpuHolder, Level
from harness.runs.target.describe import StepPlan
from harness.vocab import Word


class Gate(Word):
    """How much a reason weighs in the verdict: a ``blocker`` makes it "not ready"."""

    rank: int
    style: str
    icon: str

    BLOCKER = ("blocker", 0, "red", "✗")
    WARNING = ("warning", 1, "yellow", "!")
    INFO = ("info", 2, "cyan", "i")


BLOCKER, WARNING, INFO = Gate.BLOCKER, Gate.WARNING, Gate.INFO


@dataclass(frozen=True)
class Reason:
    severity: Gate
    text: str
    hint: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "severity", Gate(self.severity))

    def to_dict(self) -> dict[str, Any]:
        return {"severity": self.severity.value, "text": self.text, "hint": self.hint}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Reason:
        return cls(Gate(d["severity"]), d["text"], d.get("hint"))


def holder_record(h: GpuHolder) -> dict[str, Any]:
    """A GPU holder as the review writes it: the process and the command it runs."""
    return h.to_dict() | {"cmd": h.cmdline or h.comm}


@dataclass(frozen=True)
class Review:
    """Everything the engineer reviews before an 18-minute load."""

    target: str
    generated: str
    facts: TargetFacts | None
    stale_gpu_holders: tuple[GpuHolder, ...]
    patches: tuple[SeriesView, ...]
    check: CheckReport | None  # on the live environment
    check_with_patches: CheckReport | None  # ... as it will be after apply-patches
    step: StepPlan | None  # resolved command, env, needs
    reasons: tuple[Reason, ...] = field(default_factory=tuple)
    #: the step's ``vllm serve`` flags and config keys against the target's vLLM (None: the
    #: step starts no vLLM server)
    serve: CheckReport | None = None

    @property
    def ready(self) -> bool:
        return not any(r.severity == BLOCKER for r in self.reasons)

    @property
    def verdict(self) -> str:
        return "ready" if self.ready else "not ready"

    def applied(self) -> dict[str, list[str]]:
        """Each series' applied patches (what a smoke run's fingerprint records)."""
        return {s.dist: s.applied for s in self.patches}

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "generated": self.generated,
            "verdict": self.verdict,
            "reasons": [r.to_dict() for r in self.reasons],
            "facts": None if self.facts is None else self.facts.to_dict(),
            "stale_gpu_holders": [holder_record(h) for h in self.stale_gpu_holders],
            "patches": [s.to_dict() for s in self.patches],
            "check": None if self.check is None else self.check.to_dict(),
            "check_with_patches": None
            if self.check_with_patches is None
            else self.check_with_patches.to_dict(),
            "step": None if self.step is None else self.step.to_dict(),
            "serve": None if self.serve is None else self.serve.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Review:
        def report(raw: Any) -> CheckReport | None:
            return None if raw is None else CheckReport.from_dict(raw)

        facts, step = d.get("facts"), d.get("step")
        return cls(
            target=d.get("target", ""),
            generated=d.get("generated", ""),
            facts=None if facts is None else TargetFacts.from_dict(facts),
            stale_gpu_holders=tuple(
                GpuHolder.from_dict(h) for h in d.get("stale_gpu_holders") or ()
            ),
            patches=tuple(SeriesView.from_dict(s) for s in d.get("patches") or ()),
            check=report(d.get("check")),
            check_with_patches=report(d.get("check_with_patches")),
            step=None if step is None else StepPlan.from_dict(step),
            reasons=tuple(Reason.from_dict(r) for r in d.get("reasons") or ()),
            serve=report(d.get("serve")),
        )


def _errors(report: CheckReport | None) -> list[Finding]:
    return [] if report is None else report.errors


def judge(
    facts: TargetFacts | None,
    stale: Sequence[GpuHolder],
    patches: Sequence[SeriesView],
    check: CheckReport | None,
    check_with_patches: CheckReport | None,
    step: StepPlan | None,
    serve: CheckReport | None = None,
) -> list[Reason]:
    """Every reason for the verdict, most serious first."""
    out: list[Reason] = []
    for f in serve.findings if serve is not None else ():  # the model would never load
        sev = BLOCKER if f.severity == Severity.ERROR else WARNING
        out.append(Reason(sev, f"{f.file}:{f.line}: {f.message}", f.fix))
    out += [Reason(WARNING, note) for note in (serve.notes if serve is not None else ())]
    for dist in patches:
        out += _series_reasons(dist)
    for f in _errors(check):
        out.append(Reason(BLOCKER, f"{f.file}:{f.line}: {f.message}", f.fix))
    if check_with_patches is not None and check is not None:
        left, now = _errors(check_with_patches), _errors(check)
        if now and not left:
            out.append(
                Reason(
                    INFO, "the patch series fixes every check error above", "harness apply-patches"
                )
            )
        for f in left:
            if check.findings and f not in check.findings:
                out.append(
                    Reason(BLOCKER, f"after the patches: {f.file}:{f.line}: {f.message}", f.fix)
                )
    warn_src = check_with_patches or check
    if warn_src is not None:
        for f in warn_src.findings:
            if f.severity == Severity.WARNING:
                out.append(Reason(WARNING, f"{f.file}:{f.line}: {f.message}"))
    for h in stale:
        out.append(
            Reason(
                BLOCKER,
                f"stale GPU holder: pid {h.pid} ({h.cmdline or h.comm or '?'})",
                "harness run --kill-stale, or stop it",
            )
        )
    gpus = facts.gpus if facts is not None else ()
    if facts is not None and not gpus:
        out.append(Reason(WARNING, f"no GPU on the target ({facts.gpu_note})"))
    if step is not None:
        out += _step_reasons(step, len(gpus))
    return sorted(out, key=lambda r: r.severity.rank)


def _series_reasons(dist: SeriesView) -> list[Reason]:
    """One dist's series: a note when none applies, a conflicting or pending patch (blockers),
    a refusal, a file edited by hand since install."""
    out: list[Reason] = []
    if dist.note and dist.patches is None and dist.installed:
        out.append(Reason(WARNING, f"patches: {dist.note}"))
    if not dist.patches:
        return out
    for p in dist.patches:
        if p.state == Status.CONFLICTS:
            out.append(
                Reason(
                    BLOCKER,
                    f"patch {p.id} conflicts with the installed {dist.dist} ({p.detail})",
                    "harness patches shows expected vs found lines",
                )
            )
    if dist.pending:
        out.append(
            Reason(
                BLOCKER,
                f"{len(dist.pending)} patch(es) of the {dist.dist} series "
                f"are not applied: {', '.join(dist.pending)}",
                "harness apply-patches",
            )
        )
    for prob in dist.problems:
        out.append(Reason(BLOCKER, f"patches refused: {prob}"))
    for path in dist.hand_edited:
        out.append(
            Reason(
                WARNING,
                f"{path} was edited by hand since install",
                "record it: harness make-patch " + dist.dist,
            )
        )
    return out


def _vouch(tested: SmokeTested | None, who: str, done: str, run: str, hint: str) -> list[Reason]:
    """Whether the newest green smoke run / verified run still speaks for the step: none yet,
    or what changed since (a warning; a blocker when required)."""
    if tested is None:
        return []
    sev = BLOCKER if tested.required else WARNING
    if tested.last is None:
        word = "has not been smoke-tested here" if done == "smoke-tested" else f"has no {run} here"
        return [Reason(sev, f"{who} {word}", hint)]
    if tested.changes:
        since = "; ".join(tested.changes)
        return [
            Reason(sev, f"{who} not {done} since {since} (last {run} {tested.last['id']})", hint)
        ]
    return []


def _disk(step: StepPlan) -> list[Reason]:
    """What the step will write against the room there: as ``harness run``'s disk gate
    decides it (a step that will not fit is refused there unless ``--force``)."""
    from harness.runs.target.disk import refusal

    if step.budget_error is not None:
        return [
            Reason(
                WARNING,
                f"disk: {step.budget_error}",
                "harness run counts it again before it launches",
            )
        ]
    b = step.budget
    if b is None:
        return []
    refused = refusal(step.name, b)
    out = [
        Reason(INFO, f"step {step.name} {b.words()}")
        if refused is None
        else Reason(BLOCKER, refused[0], refused[1])
    ]
    return out + [Reason(WARNING, w) for w in b.warnings()]


def _step_reasons(step: StepPlan, gpus: int) -> list[Reason]:
    out: list[Reason] = []
    tp = step.tensor_parallel
    # the preflight's own check knows the GPUs the step sees (CUDA_VISIBLE_DEVICES)
    checked = {v.check for v in step.preflight}
    if tp and gpus and int(tp) > gpus and "tensor-parallel" not in checked:
        out.append(Reason(BLOCKER, f"tensor-parallel size {tp} but only {gpus} GPU(s)"))
    for v in step.preflight:  # what `harness run` would refuse, or warn of, before a launch
        sev = BLOCKER if v.level == Level.FAIL else WARNING
        out.append(Reason(sev, f"preflight {v.check}: {v.message}", v.hint))
    if step.error:
        out.append(Reason(BLOCKER, f"step: {step.error}"))
    out += _disk(step)
    out += _vouch(
        step.smoke_tested,
        f"step {step.name}",
        "smoke-tested",
        "green smoke run",
        f"harness run {step.name} --smoke",
    )
    if step.last_failed:
        out.append(
            Reason(
                WARNING,
                f"step {step.name}'s last run: {step.last_failed}",
                f"harness logs {step.last_failed.split()[0]}",
            )
        )
    out += _vouch(
        step.verified,
        f"step {step.name}",
        "verified",
        "verified run",
        f"harness run {step.name} (its output is checked: {step.verify})",
    )
    for need in step.known_good:  # evidence, not a gate: one line each, inside or not
        have = f"{need.dist} {need.found}" if need.found else f"{need.dist}: not installed"
        where = f"{need.dist}{need.spec}, {step.known_good_at}"
        if need.ok:
            out.append(
                Reason(
                    INFO,
                    f"step {step.name}: {have}, in the range its "
                    f"environment is known to work in ({where})",
                )
            )
        else:
            out.append(
                Reason(
                    WARNING,
                    f"step {step.name}: {have}, outside the range its "
                    f"environment is known to work in ({where})",
                    "harness matrix CALLER==V --against " + need.dist,
                )
            )
    for need in step.requires:
        if not need.ok:
            have = need.found or "not installed"
            out.append(
                Reason(
                    BLOCKER,
                    f"step {step.name} needs {need.dist}{need.spec}; its environment has {have}",
                    step.pip,
                )
            )
    return out
