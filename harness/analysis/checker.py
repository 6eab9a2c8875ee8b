"""From the callsites probe's scan to findings: the rule registry, and the Checker running it.

Pure: models in (:class:`~harness.analysis.scan.Scan`), findings out. Every error here is
something that raises at run time; anything we cannot be sure of is at most a warning or info,
so the list stays trustworthy. Each rule is a module in ``harness.analysis.rules`` declaring a
:class:`~harness.analysis.rules.base.Rule` -- the categories it alone emits and the rules it
runs after -- registered in :data:`RULES`, the one list of rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from harness.analysis.carried import SeriesFacts
from harness.analysis.facts import Fits
from harness.analysis.findings import Category, Finding
from harness.analysis.gates import dead_lines
from harness.analysis.rules import (
    api_drift,
    calls,
    carried,
    collision,
    construction,
    drift,
    environ,
    imports,
    inherited,
    keys,
    literals,
    names,
    overrides,
    serve,
    shifts,
)
from harness.analysis.rules.base import Context, Earlier, Produced, Rule
from harness.analysis.scan import Lookup, Scan
from harness.analysis.serve import ServeFacts

#: Every rule; run in this order, which :func:`ordered` checks against each ``after``.
RULES: tuple[Rule, ...] = (
    imports.RULE,
    calls.RULE,
    shifts.RULE,
    names.RULE,
    keys.RULE,
    overrides.RULE,
    construction.RULE,
    collision.RULE,
    drift.RULE,
    inherited.RULE,
    literals.RULE,
    environ.RULE,
    carried.RULE,
    serve.RULE,
)


def ordered(rules: Sequence[Rule]) -> tuple[Rule, ...]:
    """Pure: ``rules`` in their given order, each after the rules it names (else ValueError)."""
    seen: set[str] = set()
    for rule in rules:
        early = [a for a in rule.after if a not in seen]
        if early:
            raise ValueError(f"rule {rule.name} runs after {', '.join(early)}, listed later")
        seen.add(rule.name)
    return tuple(rules)


def run_rules(ctx: Context, rules: Sequence[Rule] = RULES) -> dict[str, Produced]:
    """Each rule's output, by rule name; a rule sees only what the rules it names produced."""
    out: dict[str, Produced] = {}
    for rule in ordered(rules):
        out[rule.name] = rule.check(ctx, Earlier.of(out[a] for a in rule.after))
    return out


def merged(findings: Sequence[Finding]) -> list[Finding]:
    """Pure: one finding per use and problem, by caller file and line, most serious first.

    A use seen twice (``Cls.meth(...)`` is a call and a class attribute) says once: the first
    said wins; drift findings of one use differ by message.
    """
    unique: dict[tuple[str, ...], Finding] = {}
    for f in findings:
        key = (f.file, str(f.line), f.category, f.symbol)
        unique.setdefault(key + ((f.message,) if f.category == Category.DRIFT else ()), f)
    return sorted(unique.values(), key=lambda f: (f.file, f.line, f.severity.rank))


class Checker:
    """The scan, the symbols (installed and baseline) and the versions, checked by every rule."""

    def __init__(
        self,
        scan: Scan,
        callee_versions: Mapping[str, str | None],
        baseline: Mapping[str, Lookup] | None = None,
        baseline_fits: Mapping[str, Fits] | None = None,
        serve: ServeFacts | None = None,
        series: SeriesFacts | None = None,
    ) -> None:
        self.context = Context(scan, callee_versions, baseline, baseline_fits, serve, series)

    def run(self) -> list[Finding]:
        produced = run_rules(self.context)
        dead = dead_lines(self.context.scan.gated, self.context.versions)
        return merged(
            [
                f
                for out in produced.values()
                for f in out.findings
                if not any(a <= f.line <= b for a, b in dead.get(f.file, ()))
            ]  # a branch the release checked never runs (its version test says so)
        )


# kept importable from here (tests, other callers)
override_issues = overrides.override_issues
override_problems = overrides.override_problems
relevant_changes = api_drift.relevant_changes
