"""What ``check --fix`` decides from: the two callee versions, and what it decides.

Everything here is a frozen record; the rules are pure functions from a
:class:`~harness.analysis.findings.Finding` and :class:`Facts` to a :data:`Decision`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.analysis.findings import Finding
from harness.models import Parameter, Symbol, SymbolKind

Json = dict[str, Any]


@dataclass(frozen=True)
class ModuleDefs:
    """One module's functions and classes, and which of them an importing module re-exports."""

    names: frozenset[str]  # every function and class defined there
    defs: Mapping[str, Symbol]  # described ones (the new side skips what the old one had)
    exported: Mapping[str, frozenset[str]] = field(default_factory=dict)  # via module -> names


@dataclass(frozen=True)
class Side:
    """One version of the callee, as the ``locate`` probe read it."""

    label: str  # "vllm 0.11.0"
    symbols: Mapping[str, Symbol] = field(default_factory=dict)  # "module:qualname" -> symbol
    #: parameters each symbol's body reads; None where that cannot be known (decorators, ...)
    reads: Mapping[str, frozenset[str] | None] = field(default_factory=dict)
    defined: Mapping[str, tuple[Symbol, ...]] = field(default_factory=dict)  # name -> defs
    modules: Mapping[str, ModuleDefs] = field(default_factory=dict)


@dataclass(frozen=True)
class Facts:
    """Both versions, and the symbols an earlier fix already moved (new key -> old key)."""

    old: Side
    new: Side
    moved_from: Mapping[str, str] = field(default_factory=dict)

    def old_key(self, key: str) -> str:
        return self.moved_from.get(key, key)

    def old_symbol(self, key: str) -> Symbol | None:
        return self.old.symbols.get(self.old_key(key))

    def old_reads(self, key: str) -> frozenset[str] | None:
        return self.old.reads.get(self.old_key(key))


@dataclass(frozen=True)
class ImportEdit:
    """``from MODULE import NAME`` (the statement at LINE) becomes ``from NEW_MODULE import
    NEW_NAME``; a renamed name is renamed where the file uses it too."""

    line: int
    module: str
    name: str
    new_module: str
    new_name: str


@dataclass(frozen=True)
class KeywordEdit:
    """The call that starts at LINE passes KEYWORD: rename it to ``new``, or drop it (None).

    ``only_if``: drop it only when the value's source is this text (the old default) -- the
    edit checks it on the very text it edits.
    """

    line: int
    keyword: str
    new: str | None
    only_if: str | None = None
    #: the keyword is a key a dict spread with ``**`` gets at LINE: ``{"k": v}``,
    #: ``dict(k=v)``, ``d.update(k=v)`` or ``d["k"] = v`` (renamed only) is edited there
    in_dict: bool = False


@dataclass(frozen=True)
class ArgumentsEdit:
    """The call of FUNC that starts at LINE with FIRST + len(NAMES) positional arguments:
    from argument FIRST on, each is passed by name (``names[i]``) or dropped (None) --
    ``only_if[i]``: drop it only when its source is this text (the old default)."""

    line: int
    func: str
    first: int
    names: tuple[str | None, ...]
    only_if: tuple[str | None, ...]


Edit = ImportEdit | KeywordEdit | ArgumentsEdit


@dataclass(frozen=True)
class Fix:
    """A finding whose fix is certain, the edit, and the proof in one line."""

    finding: Finding
    kind: str  # a rule's kind: moved-import | renamed-symbol | renamed-keyword | dropped-keyword
    edit: Edit
    summary: str
    dist: str | None = None  # the callee dist whose new API the edit relies on
    version: str | None = None
    moved: tuple[str, str] | None = None  # (new key, old key) of a symbol the edit re-points
    #: the break in a few words, for when the edit is refused: "<context>, but <why not>"
    context: str = ""
    symbol: Symbol | None = None  # what a moved/renamed use points to now (for the next round)

    def to_dict(self) -> Json:
        return {
            "kind": self.kind,
            "file": self.finding.file,
            "line": self.finding.line,
            "category": self.finding.category,
            "symbol": self.finding.symbol,
            "message": self.finding.message,
            "summary": self.summary,
            "dist": self.dist,
            "version": self.version,
        }


@dataclass(frozen=True)
class Manual:
    """A finding left to a person: why it is not mechanical, and what the callee looks like."""

    finding: Finding
    reason: str
    signature: str | None = None
    location: str | None = None  # "vllm/v1/request.py:60 (vllm 0.33.0)"

    def to_dict(self) -> Json:
        return {
            "file": self.finding.file,
            "line": self.finding.line,
            "category": self.finding.category,
            "symbol": self.finding.symbol,
            "message": self.finding.message,
            "reason": self.reason,
            "signature": self.signature,
            "location": self.location,
        }


Decision = Fix | Manual


@dataclass(frozen=True)
class Refusal:
    """An edit the source did not allow (the call is not where the finding says, ...)."""

    edit: Edit
    reason: str


def signature_of(sym: Symbol) -> str:
    """``qualname(params) -> ret`` as the check prints it."""
    return f"{sym.qualname}{sym.signature}" if sym.kind != SymbolKind.VARIABLE else sym.qualname


def location_of(sym: Symbol) -> str:
    where = f"{sym.file}:{sym.line}"
    return f"{where} ({sym.dist} {sym.version})" if sym.dist and sym.version else where


def own_parameters(sym: Symbol) -> tuple[Parameter, ...]:
    """The parameters a caller passes: ``self``/``cls`` of methods left out."""
    params = sym.parameters or ()
    if sym.kind in (SymbolKind.METHOD, SymbolKind.CLASSMETHOD, SymbolKind.PROPERTY) and params:
        return params[1:]
    return params


def parameter(sym: Symbol, name: str) -> Parameter | None:
    return next((p for p in own_parameters(sym) if p.name == name), None)


@dataclass(frozen=True)
class FileFix:
    """One caller file: the series' result and the text with the edits."""

    path: str  # relative to site-packages
    before: str
    after: str

    def diff(self) -> str:
        from harness.patching.diffs import unified

        return unified(self.path, self.before, self.after)


@dataclass(frozen=True)
class FixReport:
    """What ``check --fix`` did: the fixes, what is left to a person, the patch (if written)."""

    target: str
    caller: str
    caller_version: str | None
    callees: Mapping[str, str | None]
    baseline: Mapping[str, str | None]
    fixed: tuple[Fix, ...]
    manual: tuple[Manual, ...]
    files: tuple[FileFix, ...]
    requires: Mapping[str, str] = field(default_factory=dict)
    why: str = ""
    patch: str | None = None  # the patch file written (None: dry run, or nothing to write)
    dry_run: bool = False
    notes: tuple[str, ...] = ()
    stats: Mapping[str, Any] = field(default_factory=dict)

    def diff(self) -> str:
        return "".join(f.diff() for f in self.files)

    def to_dict(self) -> Json:
        return {
            "target": self.target,
            "caller": self.caller,
            "caller_version": self.caller_version,
            "callees": dict(self.callees),
            "baseline": dict(self.baseline),
            "fixed": [f.to_dict() for f in self.fixed],
            "manual": [m.to_dict() for m in self.manual],
            "files": [f.path for f in self.files],
            "diff": self.diff(),
            "requires": dict(self.requires),
            "why": self.why,
            "patch": self.patch,
            "dry_run": self.dry_run,
            "notes": list(self.notes),
            "stats": dict(self.stats),
        }
