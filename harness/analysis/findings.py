"""``harness check`` results: one Finding per problem, grouped by the caller's file.

The two vocabularies a finding speaks -- its :class:`Severity` and its :class:`Category` --
are enums whose members carry what goes with them (rank and style; the fix template of the
call categories), so no table elsewhere repeats the words.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.vocab import Word

if TYPE_CHECKING:
    from harness.analysis.apidiff import Change


class Severity(Word):
    """How sure and how bad: ``error`` raises at run time; ``warning`` works today but the
    callee changed under the caller; ``info``. Listed most serious first."""

    rank: int
    style: str  # how the terminal shows it

    ERROR = ("error", 0, "bold red")
    WARNING = ("warning", 1, "yellow")
    INFO = ("info", 2, "cyan")


ERROR = Severity.ERROR
WARNING = Severity.WARNING
INFO = Severity.INFO


class Category(Word):
    """What kind of problem a finding is (the README lists them); a call category carries
    its fix, a template over ``{names}`` (the parameters concerned), ``{func}`` and
    ``{them}`` ("it"/"them")."""

    fix: str | None

    IMPORT_MISSING = ("import-missing",)
    UNEXPECTED_KWARG = (
        "unexpected-kwarg",
        "Drop or rename {names}: {func} takes no such parameter now.",
    )
    MISSING_REQUIRED_ARG = ("missing-required-arg", "Pass {names}: {func} now requires {them}.")
    TOO_MANY_POSITIONAL = (
        "too-many-positional",
        "Pass fewer positional arguments to {func}, or name them.",
    )
    POSITIONAL_ONLY_AS_KEYWORD = (
        "positional-only-as-keyword",
        "Pass {names} positionally to {func}.",
    )
    DUPLICATE_ARGUMENT = (
        "duplicate-argument",
        "{names} is given both by position and by name; keep one.",
    )
    ARGUMENT_SHIFTED = ("argument-shifted",)
    BASE_CONSTRUCTION = ("base-construction",)  # a base remakes a subclass that has machinery
    BASE_METHOD_COLLISION = ("base-method-collision",)  # the base's self.m() finds another m
    MISSING_ATTRIBUTE = ("missing-attribute",)
    MISSING_KEY = ("missing-key",)  # a key read from a dict view of an object: a field gone
    OVERRIDE_INCOMPATIBLE = ("override-incompatible",)
    DRIFT = ("drift",)
    IMPORT_GUARDED = ("import-guarded",)
    UNBOUND_NAME = ("unbound-name",)
    UNVERIFIABLE = ("unverifiable",)
    DEPRECATED = ("deprecated",)
    SERVE_ARGUMENT = ("serve-argument",)  # a flag or JSON key vllm serve does not take
    BASE_METHOD_ADDED = ("base-method-added",)  # the base gained a method the subclass inherits
    OVERRIDE_ORPHANED = ("override-orphaned",)  # the base no longer has the method overridden
    ENV_REFUSED = ("env-refused",)  # the callee raises for a value the caller sets
    LITERAL_CHANGED = ("literal-changed",)  # a literal the subclassed code depends on changed
    PATCHED_FILE_DELETED = ("patched-file-deleted",)  # a series patches a file the release lacks

    def fix_for(self, names: tuple[str, ...], func: str) -> str:
        """The fix sentence for a call that does not bind to ``func``."""
        if self.fix is None:
            return f"Match the call to {func}'s signature."
        return self.fix.format(
            names=", ".join(names), func=func, them="them" if len(names) > 1 else "it"
        )


@dataclass(frozen=True)
class Finding:
    severity: Severity
    category: Category
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
    changes: tuple[Change, ...] = ()  # drift: how the callee moved since the baseline
    # The subject, typed, so a reader (``check --fix``) never parses ``message``; filled by the
    # rule that knows it, empty where the category has none.
    keywords: tuple[str, ...] = ()  # a call problem's parameters/keywords, as CPython names them
    imported: str | None = None  # the name a failed ``from module import name`` asks for
    attribute: str | None = None  # the attribute found missing (or unverifiable)
    argument: int | None = None  # argument-shifted: the first positional (0-based) that slid
    # where the subject comes from, when not at `line`: the guarded import of an unbound name,
    # the line that puts a rejected key into a dict spread with **
    origin_line: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "severity", Severity(self.severity))
        object.__setattr__(self, "category", Category(self.category))

    def to_dict(self) -> dict[str, Any]:
        return {
            "severity": self.severity.value,
            "category": self.category.value,
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
            "changes": [c.to_dict() for c in self.changes],
            "keywords": list(self.keywords),
            "imported": self.imported,
            "attribute": self.attribute,
            "argument": self.argument,
            "origin_line": self.origin_line,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Finding:
        from harness.analysis.apidiff import Change

        return cls(
            severity=Severity(d["severity"]),
            category=Category(d["category"]),
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
            changes=tuple(Change.from_dict(c) for c in d.get("changes") or ()),
            keywords=tuple(d.get("keywords") or ()),
            imported=d.get("imported"),
            attribute=d.get("attribute"),
            argument=d.get("argument"),
            origin_line=d.get("origin_line"),
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

    def count(self, severity: Severity | str) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "caller": self.caller,
            "caller_version": self.caller_version,
            "callees": self.callees,
            "baseline": self.baseline,
            "summary": {s.value: self.count(s) for s in Severity},
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
