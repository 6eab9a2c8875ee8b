"""The callsites probe's payload as frozen models, parsed once at the edge (:meth:`Scan.from_dict`).

The probe speaks JSON; the checker's rules take these records, so a renamed key fails in one
``from_dict`` rather than deep inside a rule. The caller's uses are :mod:`.uses`; the callee
symbols they reach are :class:`Lookup` -> :class:`Callee` (the :class:`~harness.models.Symbol`
``harness probe`` shows, plus what only the checker reads: :mod:`.facts`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.analysis.environ import Environ, MethodHead
from harness.analysis.facts import (
    Constructor,
    DictView,
    Fits,
    Forwards,
    Opaque,
    Resolution,
    ReturnPath,
)
from harness.analysis.gates import GatedBlock
from harness.analysis.hierarchy import Construction, SelfCall
from harness.analysis.literals import ClassLiterals
from harness.analysis.uses import AttributeUse, CallUse, ImportUse, Install, KeyUse, Subclass
from harness.models import Parameter, Symbol, SymbolKind, after_self

Json = dict[str, Any]


# -- what the uses reach -------------------------------------------------------------------


@dataclass(frozen=True)
class Callee:
    """A callee symbol as the checker reads it: the Symbol, and what only rules need."""

    symbol: Symbol
    constructor: Constructor | None = None
    mro_members: tuple[str, ...] = ()
    mro_complete: bool | None = None  # None: the probe did not say
    mro_opaque: tuple[Opaque, ...] = ()
    forwards: Forwards | None = None
    return_paths: tuple[ReturnPath, ...] | None = None
    resolutions: tuple[Resolution, ...] = ()
    construction: Construction | None = None  # asked for the bases of mixed caller classes
    self_calls: tuple[SelfCall, ...] = ()  # an overridden method: how the callee calls it
    views: Mapping[str, DictView] | None = None  # a class whose dict views the caller reads
    heads: Mapping[str, MethodHead] = field(default_factory=dict)  # a subclassed class's MRO
    literals: ClassLiterals | None = None  # a subclassed class: what its code depends on

    @property
    def qualname(self) -> str:
        return self.symbol.qualname

    @property
    def kind(self) -> SymbolKind:
        return self.symbol.kind

    @property
    def file(self) -> str:
        return self.symbol.file

    @property
    def module(self) -> str:
        return self.symbol.module

    @property
    def dist(self) -> str | None:
        return self.symbol.dist

    @property
    def version(self) -> str | None:
        return self.symbol.version

    def parameters(self, *, bound: bool) -> tuple[Parameter, ...]:
        """The parameters a call binds to; ``bound`` drops ``self``/``cls`` of methods."""
        params = self.symbol.parameters or ()
        if params and (
            self.kind == SymbolKind.CLASSMETHOD or (self.kind == SymbolKind.METHOD and bound)
        ):
            return after_self(params)
        return params

    @classmethod
    def from_dict(cls, d: Json) -> Callee:
        paths = d.get("return_paths")
        ctor = d.get("constructor")
        complete = d.get("mro_complete")
        return cls(
            symbol=Symbol.from_dict(d),
            constructor=None if ctor is None else Constructor.from_dict(ctor),
            mro_members=tuple(d.get("mro_members") or ()),
            mro_complete=None if complete is None else bool(complete),
            mro_opaque=tuple(Opaque.from_dict(o) for o in d.get("mro_opaque") or ()),
            forwards=Forwards.from_dict(d["forwards"]) if d.get("forwards") else None,
            return_paths=None if paths is None else tuple(ReturnPath.from_dict(p) for p in paths),
            resolutions=tuple(Resolution.from_dict(r) for r in d.get("resolutions") or ()),
            self_calls=tuple(SelfCall.from_dict(c) for c in d.get("self_calls") or ()),
            views={k: DictView.from_dict(v) for k, v in d["views"].items()}
            if d.get("views")
            else None,
            heads={k: MethodHead.from_dict(v) for k, v in (d.get("heads") or {}).items()},
            literals=ClassLiterals.from_dict(d["literals"]) if d.get("literals") else None,
            construction=Construction.from_dict(d["construction"])
            if d.get("construction")
            else None,
        )


@dataclass(frozen=True)
class Lookup:
    """One referenced name looked up in the installed callee."""

    found: bool
    callee: Callee | None = None
    module_only: bool = False
    dynamic: bool = False
    opaque: str = ""  # why a name no source defines may still exist (the probe's words)
    suggestions: tuple[str, ...] = ()

    @property
    def symbol(self) -> Callee | None:
        """The symbol when it was found (a found module has none)."""
        return self.callee if self.found else None

    @classmethod
    def from_dict(cls, d: Json) -> Lookup:
        sym = d.get("symbol")
        return cls(
            found=bool(d.get("found")),
            callee=Callee.from_dict(sym) if sym else None,
            module_only=bool(d.get("module_only")),
            dynamic=bool(d.get("dynamic")),
            opaque=d.get("opaque") or "",
            suggestions=tuple(d.get("suggestions") or ()),
        )


def lookups_from(d: Mapping[str, Json] | None) -> dict[str, Lookup]:
    """A probe's ``symbols`` map (``module:qualname`` -> lookup)."""
    return {k: Lookup.from_dict(v) for k, v in (d or {}).items()}


def fits_from(d: Mapping[str, Json] | None) -> dict[str, Fits]:
    """A probe's ``fits`` map (sorted attribute names -> the classes that fit them)."""
    return {k: Fits.from_dict(v) for k, v in (d or {}).items()}


@dataclass(frozen=True)
class CallerInfo:
    dist: str
    version: str | None
    requires: tuple[str, ...] = ()
    files: Mapping[str, str] = field(default_factory=dict)  # path -> sha256


@dataclass(frozen=True)
class Scan:
    """Everything one callsites probe run found: the caller, its uses, the callee symbols."""

    caller: CallerInfo
    callees: Mapping[str, Json]  # import name -> {"dist", "version"}
    absent: tuple[str, ...] = ()
    symbols: Mapping[str, Lookup] = field(default_factory=dict)
    imports: tuple[ImportUse, ...] = ()
    calls: tuple[CallUse, ...] = ()
    attributes: tuple[AttributeUse, ...] = ()
    subclasses: tuple[Subclass, ...] = ()
    installs: tuple[Install, ...] = ()
    keys: tuple[KeyUse, ...] = ()
    gated: tuple[GatedBlock, ...] = ()  # branches a version test decides (not uses)
    fits: Mapping[str, Fits] = field(default_factory=dict)
    environ: Environ = field(default_factory=Environ)

    def versions(self) -> dict[str, str | None]:
        """Import name -> installed version, for each callee."""
        return {top: info.get("version") for top, info in self.callees.items()}

    @classmethod
    def from_dict(cls, d: Json) -> Scan:
        caller = d.get("caller") or {}
        fits = d.get("fits") or {}
        return cls(
            caller=CallerInfo(
                caller.get("dist", ""),
                caller.get("version"),
                tuple(caller.get("requires") or ()),
                dict(caller.get("files") or {}),
            ),
            callees=dict(d.get("callees") or {}),
            absent=tuple(d.get("absent") or ()),
            symbols=lookups_from(d.get("symbols")),
            imports=tuple(ImportUse.from_dict(u) for u in d.get("imports") or ()),
            calls=tuple(CallUse.from_dict(u) for u in d.get("calls") or ()),
            attributes=tuple(AttributeUse.from_dict(u) for u in d.get("attributes") or ()),
            subclasses=tuple(Subclass.from_dict(u) for u in d.get("subclasses") or ()),
            installs=tuple(Install.from_dict(u) for u in d.get("installs") or ()),
            keys=tuple(KeyUse.from_dict(u) for u in d.get("keys") or ()),
            gated=tuple(GatedBlock.from_dict(b) for b in d.get("gated") or ()),
            fits=fits_from(fits),
            environ=Environ.from_dict(d.get("environ")),
        )
