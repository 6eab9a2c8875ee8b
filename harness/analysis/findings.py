"""``harness check`` results: one Finding per problem, grouped by the caller's file."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ERROR = "error"  # raises at run time
WARNING = "warning"  # drift: works today, but the callee changed under the caller
INFO = "info"
SEVERITIES = (ERROR, WARNING, INFO)

CATEGORIES = (
    "import-missing",
    "unexpected-kwarg",
    "missing-required-arg",
    "too-many-positional",
    "positional-only-as-keyword",
    "duplicate-argument",
    "missing-attribute",
    "override-incompatible",
    "drift",
    "import-guarded",
    "unbound-name",
    "unverifiable",
)


@dataclass(frozen=True)
class Finding:
    severity: str
    category: str
    file: str  # caller file, relative to its site-packages
    line: int
    source: str  # the caller's source line
    symbol: str  # callee reference, "module:qualname"
    message: str  # what is wrong, in CPython's words where it raises
    fix: str  # one sentence: what to change
    callee_file: str | None = None
    callee_line: int | None = None
    signature: str | None = None  # the callee's current signature
    scope: str = ""  # enclosing function in the caller
    changes: tuple[dict[str, Any], ...] = ()  # drift: apidiff changes

    def to_dict(self) -> dict[str, Any]:
        return {
            "severity": self.severity,
            "category": self.category,
            "file": self.file,
            "line": self.line,
            "source": self.source,
            "scope": self.scope,
            "symbol": self.symbol,
            "callee_file": self.callee_file,
            "callee_line": self.callee_line,
            "signature": self.signature,
            "message": self.message,
            "fix": self.fix,
            "changes": list(self.changes),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Finding:
        return cls(
            severity=d["severity"],
            category=d["category"],
            file=d["file"],
            line=d["line"],
            source=d.get("source", ""),
            symbol=d["symbol"],
            message=d["message"],
            fix=d.get("fix", ""),
            callee_file=d.get("callee_file"),
            callee_line=d.get("callee_line"),
            signature=d.get("signature"),
            scope=d.get("scope", ""),
            changes=tuple(d.get("changes") or ()),
        )


@dataclass(frozen=True)
class CheckReport:
    target: str
    caller: str
    caller_version: str | None
    callees: dict[str, str | None]  # dist -> installed version
    baseline: dict[str, str | None]  # dist -> baseline version (None: no baseline)
    findings: tuple[Finding, ...]
    stats: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == ERROR]

    def count(self, severity: str) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "caller": self.caller,
            "caller_version": self.caller_version,
            "callees": self.callees,
            "baseline": self.baseline,
            "summary": {s: self.count(s) for s in SEVERITIES},
            "findings": [f.to_dict() for f in self.findings],
            "stats": self.stats,
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CheckReport:
        return cls(
            target=d["target"],
            caller=d["caller"],
            caller_version=d.get("caller_version"),
            callees=dict(d.get("callees") or {}),
            baseline=dict(d.get("baseline") or {}),
            findings=tuple(Finding.from_dict(f) for f in d.get("findings") or ()),
            stats=dict(d.get("stats") or {}),
            notes=tuple(d.get("notes") or ()),
        )
