"""From the callsites probe's data to findings: the Checker, and the rules it runs in order.

Pure: data in, findings out. Every error here is something that raises at run time; anything
we cannot be sure of is at most a warning or info, so the list stays trustworthy. Each rule is
a small module in ``harness.analysis.rules`` with ``run(checker)``, registered in ``RULES``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.analysis.findings import ERROR, INFO, WARNING, Finding
from harness.analysis.rules import (
    api_drift,
    attributes,
    calls,
    defaults,
    forwards,
    imports,
    installs,
    overrides,
    returns,
)
from harness.models import Symbol

Json = dict[str, Any]


class Checker:
    """What every rule needs: the scan, the symbols (installed and baseline), and ``_add``."""

    def __init__(
        self,
        scan: Json,
        callee_versions: dict[str, str | None],
        baseline: dict[str, Json] | None = None,
        baseline_fits: dict[str, Json] | None = None,
    ) -> None:
        self.scan = scan
        self.symbols: dict[str, Json] = scan.get("symbols") or {}
        self.versions = callee_versions
        self.baseline = baseline
        self.baseline_fits = baseline_fits
        self.findings: list[Finding] = []
        self.failed_imports: set[tuple[str, str]] = set()  # (file, symbol key) of failed imports

    # -- helpers --------------------------------------------------------------------------
    def _sym(self, key: str) -> Json | None:
        got = self.symbols.get(key) or {}
        return got.get("symbol") if got.get("found") else None

    def base_sym(self, key: str) -> Json | None:
        """The symbol as the baseline version defines it (None: no baseline, or absent)."""
        got = (self.baseline or {}).get(key) or {}
        return got.get("symbol") if got.get("found") else None

    def _version(self, module: str) -> str:
        top = module.split(".")[0]
        v = self.versions.get(top)
        return f"{top} {v}" if v else top

    def _add(
        self,
        severity: str,
        category: str,
        use: Json,
        symbol: str,
        message: str,
        fix: str,
        sym: Json | None = None,
        changes: tuple[Json, ...] = (),
    ) -> None:
        sig = None
        if sym is not None:
            s = Symbol.from_dict(sym)
            sig = f"{s.qualname}{s.signature}" if s.kind != "variable" else s.qualname
        self.findings.append(
            Finding(
                severity=severity,
                category=category,
                file=use["file"],
                line=use["line"],
                source=use.get("source", ""),
                symbol=symbol,
                message=message,
                fix=fix,
                callee_file=sym.get("file") if sym else None,
                callee_line=sym.get("line") if sym else None,
                signature=sig,
                scope=use.get("scope", ""),
                changes=changes,
            )
        )

    def run(self) -> list[Finding]:
        for rule in RULES:
            rule(self)
        order = {ERROR: 0, WARNING: 1, INFO: 2}
        # a use seen by two rules (``Cls.meth(...)`` is a call and a class attribute) says once
        unique: dict[tuple[str, ...], Finding] = {}
        for f in self.findings:
            key = (f.file, str(f.line), f.category, f.symbol)
            unique.setdefault(key + ((f.message,) if f.category == "drift" else ()), f)
        return sorted(unique.values(), key=lambda f: (f.file, f.line, order[f.severity]))


#: Every rule, in order (later ones read what earlier ones found: calls skip names a failed
#: import already reported, drift skips erred parameters). Each is ``run(checker)``.
RULES: tuple[Callable[[Checker], None], ...] = (
    imports.run,
    calls.run,
    forwards.run,
    attributes.run,
    overrides.run,
    api_drift.run,
    returns.run,
    defaults.run,
    installs.run,
)

# kept importable from here (tests, other callers)
override_issues = overrides.override_issues
override_problems = overrides.override_problems
relevant_changes = api_drift.relevant_changes
