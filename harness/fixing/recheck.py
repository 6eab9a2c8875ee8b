"""Re-check edited texts without writing them: the errors the caller would have with them.

Only the edited files are scanned again (the ``fixscan`` probe), with the series' texts and
the edits standing in for files; the other files' errors are the first check's -- neither
their text nor the callee changed. Binding is :class:`harness.analysis.checker.Checker`'s, with
the baseline read as ``harness check`` reads it, so the re-check and the check cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.analysis.checker import Checker
from harness.analysis.facts import Fits
from harness.analysis.findings import ERROR, Finding
from harness.analysis.scan import Lookup, Scan, fits_from, lookups_from
from harness.probe_runner import run_probe
from harness.reading.baseline import baseline_args
from harness.targets.base import Target


@dataclass(frozen=True)
class Rechecker:
    target: Target
    caller: str
    against: tuple[str, ...] | None
    root: str  # the caller's site-packages on the target (as patchops names it)
    overrides: dict[str, str]  # absolute path -> the series' text
    first: tuple[Finding, ...]  # the first check's errors
    baseline: Target | None = None  # the version the caller was written for, as the check had it

    def errors(self, texts: dict[str, str]) -> list[Finding]:
        """The errors once ``texts`` (rel path -> text) stand in for the caller's files."""
        over = {**self.overrides, **{f"{self.root}/{p}": t for p, t in texts.items()}}
        args = {
            "caller": self.caller,
            "callees": list(self.against) if self.against else None,
            "only": sorted(texts),
            "overrides": over,
        }
        scan = Scan.from_dict(run_probe(self.target, "fixscan", args, cache=True).data)
        base_symbols: dict[str, Lookup] | None = None
        base_fits: dict[str, Fits] | None = None
        if self.baseline is not None:  # some rules judge by it (an override already so there)
            base = run_probe(self.baseline, "callsites", baseline_args(scan), cache=True).data
            base_symbols, base_fits = lookups_from(base["symbols"]), fits_from(base.get("fits"))
        checker = Checker(scan, scan.versions(), base_symbols, base_fits)
        found = [f for f in checker.run() if f.severity == ERROR]
        kept = [f for f in self.first if f.file not in texts]
        return sorted(kept + found, key=lambda f: (f.file, f.line))
