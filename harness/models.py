"""Plain frozen records that probes produce and every renderer consumes.

``to_dict`` is the ``--json`` output (documented in the README); ``from_dict`` reads a probe's
payload. Both are kept exact inverses (round-trip tested), so JSON is never a second model.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

from harness.vocab import Word

T = TypeVar("T")
R = TypeVar("R", bound="FlatRecord")


class ParameterKind(Word):
    """How a parameter is bound (``inspect.Parameter.kind``, in the probe's words)."""

    star: str  # what Python writes before the name: "*", "**" or ""

    POSITIONAL_ONLY = ("positional-only",)
    POSITIONAL_OR_KEYWORD = ("positional-or-keyword",)
    VAR_POSITIONAL = ("var-positional", "*")
    KEYWORD_ONLY = ("keyword-only",)
    VAR_KEYWORD = ("var-keyword", "**")

    @property
    def variadic(self) -> bool:
        return bool(self.star)


POSITIONAL_ONLY = ParameterKind.POSITIONAL_ONLY
POSITIONAL_OR_KEYWORD = ParameterKind.POSITIONAL_OR_KEYWORD
VAR_POSITIONAL = ParameterKind.VAR_POSITIONAL
KEYWORD_ONLY = ParameterKind.KEYWORD_ONLY
VAR_KEYWORD = ParameterKind.VAR_KEYWORD


def pick_fields(cls: type[T], data: dict[str, Any] | None) -> dict[str, Any]:
    """The entries of ``data`` that are fields of ``cls`` (newer payloads may carry more)."""
    names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    return {k: v for k, v in (data or {}).items() if k in names}


class FlatRecord:
    """``to_dict``/``from_dict`` for frozen dataclasses whose fields are all JSON scalars."""

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}  # type: ignore[arg-type]

    @classmethod
    def from_dict(cls: type[R], d: dict[str, Any]) -> R:
        return cls(**pick_fields(cls, d))


@dataclass(frozen=True)
class Parameter:
    name: str
    kind: ParameterKind
    default: str | None = None  # source text; None means required
    annotation: str | None = None
    init_var: bool = False  # a dataclass ``InitVar``: an __init__ argument, not a field
    #: a keyword a decorator's wrapper takes before the def runs (probes/signatures/_absorbed):
    #: the decorator, not the def, takes it -- an override need not
    absorbed_by: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", ParameterKind(self.kind))

    @property
    def required(self) -> bool:
        return self.default is None and not self.kind.variadic

    def render(self) -> str:
        """``name: ann = default`` as Python writes it (``*args``, ``**kw`` included)."""
        text = self.kind.star + self.name
        if self.annotation:
            text += f": {self.annotation}"
        if self.default is not None:
            text += f" = {self.default}" if self.annotation else f"={self.default}"
        return text

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "name": self.name,
            "kind": self.kind.value,
            "default": self.default,
            "annotation": self.annotation,
        }
        if self.init_var:
            d["init_var"] = True
        if self.absorbed_by:
            d["absorbed_by"] = self.absorbed_by
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Parameter:
        return cls(**pick_fields(cls, d))


def after_self(params: tuple[Parameter, ...]) -> tuple[Parameter, ...]:
    """What a bound call fills: the parameters after ``self``/``cls``; a first ``*args`` takes
    ``self`` and every positional after it (datasets' ``Features.__init__(*args, **kwargs)``)."""
    return params if params and params[0].kind == VAR_POSITIONAL else params[1:]


def render_parameters(params: tuple[Parameter, ...]) -> str:
    """Insert ``/`` and ``*`` markers where Python's syntax needs them."""
    parts: list[str] = []
    seen_star = False
    for i, p in enumerate(params):
        if p.kind == VAR_POSITIONAL:
            seen_star = True
        if p.kind == KEYWORD_ONLY and not seen_star:
            parts.append("*")
            seen_star = True
        parts.append(p.render())
        nxt = params[i + 1] if i + 1 < len(params) else None
        if p.kind == POSITIONAL_ONLY and (nxt is None or nxt.kind != POSITIONAL_ONLY):
            parts.append("/")
    return ", ".join(parts)


@dataclass(frozen=True)
class Overload:
    parameters: tuple[Parameter, ...]
    returns: str | None = None
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "parameters": [p.to_dict() for p in self.parameters],
            "returns": self.returns,
            "line": self.line,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Overload:
        return cls(
            tuple(Parameter.from_dict(p) for p in d.get("parameters") or ()),
            d.get("returns"),
            d.get("line"),
        )


class SymbolKind(Word):
    """What a definition is, in the probe's words (``probes/_describe.py``'s
    ``function_kind``, ``class``, ``variable``)."""

    keyword: str  # what Python writes before its name: "def", "class" or ""

    FUNCTION = ("function", "def")
    METHOD = ("method", "def")
    STATICMETHOD = ("staticmethod", "def")
    CLASSMETHOD = ("classmethod", "def")
    PROPERTY = ("property", "def")
    CLASS = ("class", "class")
    VARIABLE = ("variable",)


@dataclass(frozen=True)
class Symbol:
    """A function, class, method or variable as defined in the source (not as imported)."""

    qualname: str
    kind: SymbolKind
    file: str  # relative to its site-packages root
    line: int
    end_line: int
    module: str = ""
    dist: str | None = None
    version: str | None = None
    is_async: bool = False
    decorators: tuple[str, ...] = ()
    parameters: tuple[Parameter, ...] | None = None  # class: its constructor's; None: unknown
    returns: str | None = None
    overloads: tuple[Overload, ...] = ()
    bases: tuple[str, ...] = ()
    resolved_bases: tuple[str, ...] = ()
    constructor: dict[str, Any] | None = None  # {"via": rule, "from": qualname, ...}
    members: tuple[Symbol, ...] = ()
    attributes: tuple[str, ...] = ()
    annotation: str | None = None
    doc: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", SymbolKind(self.kind))

    @property
    def signature(self) -> str:
        if self.parameters is None:
            return "(...)"
        ret = f" -> {self.returns}" if self.returns else ""
        return f"({render_parameters(self.parameters)}){ret}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "qualname": self.qualname,
            "kind": self.kind.value,
            "module": self.module,
            "file": self.file,
            "line": self.line,
            "end_line": self.end_line,
            "dist": self.dist,
            "version": self.version,
            "is_async": self.is_async,
            "decorators": list(self.decorators),
            "parameters": None
            if self.parameters is None
            else [p.to_dict() for p in self.parameters],
            "returns": self.returns,
            "overloads": [o.to_dict() for o in self.overloads],
            "bases": list(self.bases),
            "resolved_bases": list(self.resolved_bases),
            "constructor": self.constructor,
            "members": [m.to_dict() for m in self.members],
            "attributes": list(self.attributes),
            "annotation": self.annotation,
            "doc": self.doc,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Symbol:
        params = d.get("parameters")
        return cls(
            qualname=d["qualname"],
            kind=SymbolKind(d["kind"]),
            file=d.get("file") or "",
            line=int(d.get("line") or 0),
            end_line=int(d.get("end_line") or d.get("line") or 0),
            module=d.get("module") or "",
            dist=d.get("dist"),
            version=d.get("version"),
            is_async=bool(d.get("is_async")),
            decorators=tuple(d.get("decorators") or ()),
            parameters=None if params is None else tuple(Parameter.from_dict(p) for p in params),
            returns=d.get("returns"),
            overloads=tuple(Overload.from_dict(o) for o in d.get("overloads") or ()),
            bases=tuple(d.get("bases") or ()),
            resolved_bases=tuple(d.get("resolved_bases") or ()),
            constructor=d.get("constructor"),
            members=tuple(cls.from_dict(m) for m in d.get("members") or ()),
            attributes=tuple(d.get("attributes") or ()),
            annotation=d.get("annotation"),
            doc=d.get("doc"),
        )


@dataclass(frozen=True)
class Hop(FlatRecord):
    """One step of a re-export chain: ``vllm.config`` imports it from ``vllm.config.scheduler``."""

    module: str
    name: str
    file: str
    line: int
    how: str  # defined|import|lazy|submodule|module|star-import|inherited


@dataclass(frozen=True)
class SourceExcerpt(FlatRecord):
    file: str
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class ProbeReport:
    """What ``harness probe`` found: the module, its symbols, and how a name was reached."""

    target: str
    module: str
    file: str | None
    root: str
    dist: str | None
    version: str | None
    symbols: tuple[Symbol, ...]
    chain: tuple[Hop, ...] = ()
    reexports: tuple[dict[str, Any], ...] = ()
    source: SourceExcerpt | None = None
    python: dict[str, Any] = field(default_factory=dict)
    live: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "module": self.module,
            "file": self.file,
            "root": self.root,
            "dist": self.dist,
            "version": self.version,
            "symbols": [s.to_dict() for s in self.symbols],
            "chain": [h.to_dict() for h in self.chain],
            "reexports": list(self.reexports),
            "source": self.source.to_dict() if self.source else None,
            "python": self.python,
            "live": self.live,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ProbeReport:
        return cls(
            target=d.get("target", ""),
            module=d["module"],
            file=d.get("file"),
            root=d.get("root", ""),
            dist=d.get("dist"),
            version=d.get("version"),
            symbols=tuple(Symbol.from_dict(s) for s in d.get("symbols") or ()),
            chain=tuple(Hop.from_dict(h) for h in d.get("chain") or ()),
            reexports=tuple(d.get("reexports") or ()),
            source=SourceExcerpt.from_dict(d["source"]) if d.get("source") else None,
            python=d.get("python") or {},
            live=bool(d.get("live")),
        )


@dataclass(frozen=True)
class GpuInfo(FlatRecord):
    index: int | None
    name: str
    memory_total_mib: int | None
    memory_used_mib: int | None
    memory_free_mib: int | None
    driver: str = ""


@dataclass(frozen=True)
class TargetFacts:
    """``harness hosts --check``: what the target's interpreter and machine are."""

    target: str
    python: dict[str, Any]
    site_packages: tuple[str, ...]
    dists: dict[str, str | None]
    gpus: tuple[GpuInfo, ...]
    gpu_note: str | None
    connect_seconds: float | None = None
    platform: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "python": self.python,
            "site_packages": list(self.site_packages),
            "dists": self.dists,
            "gpus": [g.to_dict() for g in self.gpus],
            "gpu_note": self.gpu_note,
            "connect_seconds": self.connect_seconds,
            "platform": self.platform,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TargetFacts:
        gpus = d.get("gpus") or {}
        if isinstance(gpus, dict):  # the probe's shape
            devices, note = gpus.get("devices") or [], gpus.get("reason")
        else:
            devices, note = gpus, d.get("gpu_note")
        return cls(
            target=d.get("target", ""),
            python=d.get("python") or {},
            site_packages=tuple(d.get("site_packages") or ()),
            dists=dict(d.get("dists") or {}),
            gpus=tuple(GpuInfo.from_dict(g) for g in devices),
            gpu_note=note,
            connect_seconds=d.get("connect_seconds"),
            platform=d.get("platform") or {},
        )


@dataclass(frozen=True)
class AskedFacts:
    """Facts read for one question (``dists``: the dists whose versions were asked), so a
    reader asking the same question may use them instead of asking the target again."""

    dists: tuple[str, ...]
    facts: TargetFacts
