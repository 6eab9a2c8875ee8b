"""From the callsites probe's scan to findings: the Checker, and the rules it runs in order.

Pure: models in (:class:`~harness.analysis.scan.Scan`), findings out. Every error here is
something that raises at run time; anything we cannot be sure of is at most a warning or info,
so the list stays trustworthy. Each rule is a small module in ``harness.analysis.rules`` with
``run(checker)``, registered in :data:`RULES` -- the one list of rules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from harness.analysis.apidiff import Change
from harness.analysis.facts import Fits
from harness.analysis.findings import Category, Finding, Severity
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
from harness.analysis.scan import Callee, Lookup, Scan
from harness.analysis.uses import Site
from harness.models import Symbol


class Checker:
    """What every rule needs: the scan, the symbols (installed and baseline), and ``add``."""

    def __init__(
        self,
        scan: Scan,
        callee_versions: Mapping[str, str | None],
        baseline: Mapping[str, Lookup] | None = None,
        baseline_fits: Mapping[str, Fits] | None = None,
    ) -> None:
        self.scan = scan
        self.symbols: Mapping[str, Lookup] = scan.symbols
        self.versions = callee_versions
        self.baseline = baseline
        self.baseline_fits = baseline_fits
        self.findings: list[Finding] = []
        self.failed_imports: set[tuple[str, str]] = set()  # (file, symbol key) of failed imports

    # -- helpers --------------------------------------------------------------------------
    def callee(self, key: str) -> Callee | None:
        """The installed symbol ``module:qualname`` names (None: not found, or a module)."""
        got = self.symbols.get(key)
        return None if got is None else got.symbol

    def lookup(self, key: str) -> Lookup:
        return self.symbols.get(key) or Lookup(found=False)

    def base_callee(self, key: str) -> Callee | None:
        """The symbol as the baseline version defines it (None: no baseline, or absent)."""
        got = (self.baseline or {}).get(key)
        return None if got is None else got.symbol

    def version_of(self, module: str) -> str:
        top = module.split(".")[0]
        v = self.versions.get(top)
        return f"{top} {v}" if v else top

    def add(
        self,
        severity: Severity,
        category: Category,
        site: Site,
        symbol: str,
        message: str,
        fix: str,
        sym: Callee | Symbol | None = None,
        changes: tuple[Change, ...] = (),
    ) -> None:
        s = sym.symbol if isinstance(sym, Callee) else sym
        sig = None
        if s is not None:
            sig = f"{s.qualname}{s.signature}" if s.kind != "variable" else s.qualname
        self.findings.append(
            Finding(
                severity=severity,
                category=category,
                file=site.file,
                line=site.line,
                source=site.source,
                symbol=symbol,
                message=message,
                fix=fix,
                callee_file=s.file if s else None,
                callee_line=s.line if s else None,
                signature=sig,
                scope=site.scope,
                changes=changes,
            )
        )

    def run(self) -> list[Finding]:
        for rule in RULES:
            rule(self)
        # a use seen by two rules (``Cls.meth(...)`` is a call and a class attribute) says once
        unique: dict[tuple[str, ...], Finding] = {}
        for f in self.findings:
            key = (f.file, str(f.line), f.category, f.symbol)
            unique.setdefault(key + ((f.message,) if f.category == Category.DRIFT else ()), f)
        return sorted(unique.values(), key=lambda f: (f.file, f.line, f.severity.rank))


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
