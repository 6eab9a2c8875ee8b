"""The review's model and its verdict. Pure: the gathering happens in ``build.py``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

BLOCKER = "blocker"
WARNING = "warning"
INFO = "info"
_ORDER = {BLOCKER: 0, WARNING: 1, INFO: 2}


@dataclass(frozen=True)
class Reason:
    severity: str  # blocker | warning | info
    text: str
    hint: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"severity": self.severity, "text": self.text, "hint": self.hint}


@dataclass(frozen=True)
class Review:
    """Everything the engineer reviews before an 18-minute load, as plain data."""

    target: str
    generated: str
    facts: dict[str, Any] | None  # TargetFacts.to_dict()
    stale_gpu_holders: list[dict[str, Any]]
    patches: list[dict[str, Any]]  # DistReport.to_dict() per dist
    check: dict[str, Any] | None  # CheckReport.to_dict() on the live environment
    check_with_patches: dict[str, Any] | None  # ... as it will be after apply-patches
    step: dict[str, Any] | None  # resolved command, env, tp vs GPUs
    reasons: list[Reason] = field(default_factory=list)

    @property
    def ready(self) -> bool:
        return not any(r.severity == BLOCKER for r in self.reasons)

    @property
    def verdict(self) -> str:
        return "ready" if self.ready else "not ready"

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "generated": self.generated,
            "verdict": self.verdict,
            "reasons": [r.to_dict() for r in self.reasons],
            "facts": self.facts,
            "stale_gpu_holders": self.stale_gpu_holders,
            "patches": self.patches,
            "check": self.check,
            "check_with_patches": self.check_with_patches,
            "step": self.step,
        }


def judge(
    facts: dict[str, Any] | None,
    stale: list[dict[str, Any]],
    patches: list[dict[str, Any]],
    check: dict[str, Any] | None,
    check_with_patches: dict[str, Any] | None,
    step: dict[str, Any] | None,
) -> list[Reason]:
    """Every reason for the verdict, most serious first."""
    out: list[Reason] = []
    for dist in patches:
        plan = dist.get("plan")
        if dist.get("note") and plan is None and dist.get("installed"):
            out.append(Reason(WARNING, f"patches: {dist['note']}"))
        if not plan:
            continue
        for p in plan["patches"]:
            if p["state"] == "conflicts":
                out.append(
                    Reason(
                        BLOCKER,
                        f"patch {p['id']} conflicts with the installed "
                        f"{dist['dist']} ({p['detail']})",
                        "harness patches shows expected vs found lines",
                    )
                )
        pending = [p["id"] for p in plan["patches"] if p["state"] == "applies cleanly"]
        if pending:
            out.append(
                Reason(
                    BLOCKER,
                    f"{len(pending)} patch(es) of the {dist['dist']} series "
                    f"are not applied: {', '.join(pending)}",
                    "harness apply-patches",
                )
            )
        for prob in plan.get("problems") or []:
            out.append(Reason(BLOCKER, f"patches refused: {prob}"))
        for path in dist.get("hand_edited") or []:
            out.append(
                Reason(
                    WARNING,
                    f"{path} was edited by hand since install",
                    "record it: harness make-patch " + dist["dist"],
                )
            )
    if check is not None:
        for f in check.get("findings") or []:
            if f["severity"] == "error":
                out.append(Reason(BLOCKER, f"{f['file']}:{f['line']}: {f['message']}", f["fix"]))
    if check_with_patches is not None and check is not None:
        left = [f for f in check_with_patches.get("findings") or [] if f["severity"] == "error"]
        now = [f for f in check.get("findings") or [] if f["severity"] == "error"]
        if now and not left:
            out.append(
                Reason(
                    INFO, "the patch series fixes every check error above", "harness apply-patches"
                )
            )
        for f in left:
            if check.get("findings") and f not in check["findings"]:
                out.append(
                    Reason(
                        BLOCKER,
                        f"after the patches: {f['file']}:{f['line']}: {f['message']}",
                        f["fix"],
                    )
                )
    warn_src = check_with_patches or check
    if warn_src is not None:
        for f in warn_src.get("findings") or []:
            if f["severity"] == "warning":
                out.append(Reason(WARNING, f"{f['file']}:{f['line']}: {f['message']}"))
    for h in stale:
        out.append(
            Reason(
                BLOCKER,
                f"stale GPU holder: pid {h.get('pid')} ({h.get('cmd') or h.get('command') or '?'})",
                "harness run --kill-stale, or stop it",
            )
        )
    gpus = (facts or {}).get("gpus") or []
    if facts is not None and not gpus:
        out.append(Reason(WARNING, f"no GPU on the target ({(facts or {}).get('gpu_note')})"))
    if step is not None:
        tp = step.get("tensor_parallel")
        if tp and gpus and int(tp) > len(gpus):
            out.append(Reason(BLOCKER, f"tensor-parallel size {tp} but only {len(gpus)} GPU(s)"))
        if step.get("error"):
            out.append(Reason(BLOCKER, f"step: {step['error']}"))
        tested = step.get("smoke_tested")
        if tested is not None:
            sev = BLOCKER if tested["required"] else WARNING
            hint = f"harness run {step['name']} --smoke"
            if tested["last"] is None:
                out.append(Reason(sev, f"step {step['name']} has not been smoke-tested here", hint))
            elif tested["changes"]:
                out.append(
                    Reason(
                        sev,
                        f"step {step['name']} not smoke-tested since "
                        f"{'; '.join(tested['changes'])} (last green smoke run "
                        f"{tested['last']['id']})",
                        hint,
                    )
                )
        for need in step.get("requires") or []:
            if not need["ok"]:
                have = need["found"] or "not installed"
                out.append(
                    Reason(
                        BLOCKER,
                        f"step {step['name']} needs {need['dist']}{need['spec']}; "
                        f"its environment has {have}",
                        step.get("pip"),
                    )
                )
    return sorted(out, key=lambda r: _ORDER[r.severity])
