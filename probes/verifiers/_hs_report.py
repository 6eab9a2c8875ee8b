"""The extraction check's report: a count per check, the failures, the drift warnings; and
where it goes (``HARNESS_VERIFY_FD`` when the supervisor runs the check, stdout otherwise).

Shape (harness/runs/record/verification.py reads it)::

    {"checks": {"values": {"passed": P, "compared": C, "of": N, "layers": [2],
                           "max_rel_err": x, "chosen_by": "all" | "spread"[, "fp8": F]},
                "ids": {"passed", "compared", "of"[, "skipped": "no --prepared"]},
                "lengths": {...}, "layers": {...}},
     "failed": [{"sample": "data_5", "check": "position", "why": "row 17 is ..."}],
     "failed_count": F (samples), "drift": {"above": 0.05, "samples": 3, "max": 0.061, "layer": 7,
     "identified": "every row and layer"} | null, "warnings": [{"sample", "layer", "rel_err"}],
     "unit": "samples", "detail": "...", "metrics": {...}}
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from _gate import stamp
from _hs_judge import COUNTED_UNDER, COUNTS, Finding, LayerVerdict

FD_ENV = "HARNESS_VERIFY_FD"
#: failures and warnings listed in the report (the counts hold them all)
LISTED = 100


class Tally:
    """What the check found so far, sample by sample."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.compared = dict.fromkeys(COUNTS, 0)
        self.bad: dict[str, set[str]] = {c: set() for c in COUNTS}
        self.failed: list[dict[str, Any]] = []
        self.warnings: list[dict[str, Any]] = []
        self.max_err = 0.0
        self.layer_checked = True
        self.skipped: dict[str, str] = {}
        self.fp8 = 0  # samples whose values were dequantized from float8 (per-token scales)

    def compare(self, check: str, name: str, finding: Finding | None) -> bool:
        """One sample went through ``check`` (a count); ``finding``: its failure."""
        self.compared[check] += 1
        if finding is not None:
            self.fail(name, finding)
        return finding is None

    def fail(self, name: str, finding: Finding) -> None:
        self.bad[COUNTED_UNDER[finding.check]].add(name)
        self.failed.append({"sample": name, "check": finding.check, "why": finding.why})

    def values(self, name: str, verdicts: dict[int, LayerVerdict]) -> None:
        """One sample's compared layers (layer id -> verdict): one count under ``values``."""
        self.compared["values"] += 1
        for k, v in verdicts.items():
            if v.err is not None and v.err == v.err:
                self.max_err = max(self.max_err, v.err)
            if v.finding is not None:
                self.fail(name, Finding(v.finding.check, v.finding.why + _at(v.finding, k)))
                return
        for k, v in verdicts.items():
            if v.drift:
                self.warnings.append(
                    {
                        "sample": name,
                        "layer": k,
                        "rel_err": round(v.err, 4) if v.err is not None else None,
                    }
                )
                self.layer_checked = self.layer_checked and v.layer_checked

    def report(self, layers: list[int], chosen_by: str, tol: float, detail: str,
               **metrics: Any) -> dict[str, Any]:  # fmt: skip
        checks: dict[str, dict[str, Any]] = {}
        for c in COUNTS:
            # a failure of no compared sample ("(none)": the folder is empty) is no -1
            checks[c] = {"passed": max(self.compared[c] - len(self.bad[c]), 0),
                         "compared": self.compared[c], "of": self.total}  # fmt: skip
            if c in self.skipped:
                checks[c]["skipped"] = self.skipped[c]
        checks["values"].update(layers=layers, max_rel_err=round(self.max_err, 4),
                                chosen_by=chosen_by)  # fmt: skip
        if self.fp8:
            checks["values"]["fp8"] = self.fp8
        drift = None
        if self.warnings:
            worst = max(self.warnings, key=lambda w: w["rel_err"])
            which = "every row and layer" if self.layer_checked else "every row"
            many = len({w["sample"] for w in self.warnings})
            drift = {"above": tol, "samples": many, "max": worst["rel_err"],
                     "layer": worst["layer"], "identified": which}  # fmt: skip
        order = sorted(self.failed, key=lambda f: _index(f["sample"]))
        return {"checks": checks, "failed": order[:LISTED],
                "failed_count": len({f["sample"] for f in order}),
                "drift": drift, "warnings": self.warnings[:LISTED], "unit": "samples",
                "detail": detail, "metrics": {"max_rel_err": round(self.max_err, 4),
                "layers": layers, "tolerance": tol, **metrics}}  # fmt: skip


def _at(finding: Finding, k: int) -> str:
    """Which layer a per-layer finding is about, when its words do not say it."""
    return "" if finding.check in ("layer", "values") else f" (layer {k})"


def _index(name: str) -> int:
    tail = name.rsplit("_", 1)[-1]
    return int(tail) if tail.isdigit() else -1


def emit(report: dict[str, Any], mark: str) -> None:
    """The report on the check's own channel (``HARNESS_VERIFY_FD``), else on stdout; with
    the secret of the supervisor's ``go`` when the check waited at a gate (``_gate.py``)."""
    line = (mark + json.dumps(stamp(report)) + "\n").encode("utf-8")
    fd = os.environ.get(FD_ENV)
    if fd and fd.isdigit():
        try:
            with os.fdopen(int(fd), "wb", closefd=True) as f:
                f.write(line)
            return
        except OSError as exc:
            print(f"cannot write the report to fd {fd}: {exc}", file=sys.stderr)
    sys.stdout.write(line.decode("utf-8"))
    sys.stdout.flush()
