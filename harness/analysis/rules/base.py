"""What a ``harness check`` rule is, and what it reads and hands on -- nothing is shared mutably.

A rule reads the :class:`Context` (the scan, the installed and baseline symbols) and what the
rules it runs after produced (:class:`Earlier`), and returns :class:`Produced`: its findings
and, for the imports rule, the imports that failed. Each rule declares the categories it emits
(one rule per category, so "who says missing-attribute?" has one answer) and the rules it runs
after (what it reads from them is typed, never a side channel).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from harness.analysis.apidiff import Change
from harness.analysis.carried import SeriesFacts
from harness.analysis.facts import Fits
from harness.analysis.findings import Category, Finding, Severity
from harness.analysis.scan import Callee, Lookup, Scan
from harness.analysis.serve import ServeFacts
from harness.analysis.uses import Site
from harness.models import Symbol, SymbolKind


@dataclass(frozen=True)
class Context:
    """What every rule reads: the scan, the symbols (installed and baseline), the versions."""

    scan: Scan
    versions: Mapping[str, str | None]
    baseline: Mapping[str, Lookup] | None = None
    baseline_fits: Mapping[str, Fits] | None = None
    #: a step's ``vllm serve`` command and what the chosen vLLM accepts (``check --step``)
    serve: ServeFacts | None = None
    #: what the patch series say about this release (``--with-patches``)
    series: SeriesFacts | None = None

    @property
    def symbols(self) -> Mapping[str, Lookup]:
        return self.scan.symbols

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

    def finding(
        self,
        severity: Severity,
        category: Category,
        site: Site,
        symbol: str,
        message: str,
        fix: str,
        sym: Callee | Symbol | None = None,
        changes: tuple[Change, ...] = (),
        *,
        keywords: tuple[str, ...] = (),
        imported: str | None = None,
        attribute: str | None = None,
        argument: int | None = None,
        origin_line: int | None = None,
    ) -> Finding:
        """A finding at ``site``, pointing at the callee ``sym`` where there is one."""
        s = sym.symbol if isinstance(sym, Callee) else sym
        sig = None
        if s is not None:
            sig = f"{s.qualname}{s.signature}" if s.kind != SymbolKind.VARIABLE else s.qualname
        return Finding(
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
            keywords=keywords,
            imported=imported,
            attribute=attribute,
            argument=argument,
            origin_line=origin_line,
        )


@dataclass(frozen=True)
class FailedImports:
    """``(caller file, "module:name")`` of each ``from module import name`` that fails: a
    later rule says nothing more about a use of that name (the import already says it)."""

    pairs: frozenset[tuple[str, str]] = frozenset()

    def covers(self, file: str, key: str) -> bool:
        """Pure: is ``key`` (or a member of it) a name a failed import in ``file`` binds?"""
        return any(f == file and (key == k or key.startswith(k + ".")) for f, k in self.pairs)

    def __or__(self, other: FailedImports) -> FailedImports:
        return FailedImports(self.pairs | other.pairs)


@dataclass(frozen=True)
class Produced:
    """A rule's output: its findings, and (the imports rule only) the imports that failed."""

    findings: tuple[Finding, ...] = ()
    failed_imports: FailedImports = field(default_factory=FailedImports)


@dataclass(frozen=True)
class Earlier:
    """What the rules a rule runs after produced -- only those it names in ``after``."""

    findings: tuple[Finding, ...] = ()
    failed_imports: FailedImports = field(default_factory=FailedImports)

    @classmethod
    def of(cls, outputs: Iterable[Produced]) -> Earlier:
        findings: list[Finding] = []
        failed = FailedImports()
        for out in outputs:
            findings += out.findings
            failed |= out.failed_imports
        return cls(tuple(findings), failed)


@dataclass(frozen=True)
class Rule:
    """One entry of the registry: a name, the categories it alone emits, the rules whose
    output it reads (it runs after them), and the check itself."""

    name: str
    emits: frozenset[Category]
    check: Callable[[Context, Earlier], Produced]
    after: tuple[str, ...] = ()
