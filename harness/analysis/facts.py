"""What the callsites probe says about a callee symbol beyond its signature, as frozen models.

Constructors (how a class is built), the classes an installed method could be patched onto
(:class:`Fits`), where ``**kwargs`` are forwarded (:class:`Forwards`), why a class's member
list may be incomplete (:class:`Opaque`), its return paths and what its ``__post_init__`` /
validators assign (:class:`Resolution`). Parsed by :mod:`harness.analysis.scan`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.models import Parameter

Json = dict[str, Any]


def parameters_of(raw: Any) -> tuple[Parameter, ...]:
    return tuple(Parameter.from_dict(p) for p in raw or ())


@dataclass(frozen=True)
class Constructor:
    """How a class is built: the rule (``via``), its overloads, what extra keywords do."""

    via: str | None = None
    origin: str | None = None  # the qualname the rule came from
    overloads: tuple[tuple[Parameter, ...], ...] = ()
    extra: str | None = None  # forbid | ignore | allow | unknown
    init_parameters: tuple[Parameter, ...] | None = None  # __init__ behind a __new__(*a, **k)
    #: its ``__init__``/``__new__`` only raises: no object is ever of this class (AutoModel)
    raises: bool = False

    @property
    def lenient(self) -> bool:
        """Unknown keywords are accepted (pydantic ``extra=``, fields we cannot read)."""
        return self.extra in ("ignore", "allow", "unknown")

    @classmethod
    def from_dict(cls, d: Json) -> Constructor:
        init = d.get("init_parameters")
        return cls(
            via=d.get("via"),
            origin=d.get("from"),
            overloads=tuple(parameters_of(o) for o in d.get("overloads") or ()),
            extra=d.get("extra"),
            init_parameters=None if init is None else parameters_of(init),
            raises=bool(d.get("raises")),
        )


@dataclass(frozen=True)
class Opaque:
    """Why a class's members may not all be known: ``getattr``/``open`` (made at run time),
    ``items`` (a ``__getattr__`` serving only ``self[name]``: data, not API) or
    ``base`` (a base that cannot be read; ``missing``: the dist that would hold it)."""

    why: str
    name: str = "?"
    missing: str = ""

    @classmethod
    def from_dict(cls, d: Json) -> Opaque:
        return cls(d.get("why", ""), d.get("name", "?"), d.get("missing") or "")


@dataclass(frozen=True)
class DictView:
    """The keys of one dict view of a class (``asdict``, ``to_dict``, ``__dict__``...), each
    with where it is set ("file:line"); ``closed``: they are all it can hold."""

    keys: Mapping[str, str]
    closed: bool
    how: str  # what makes the keys: "the dataclass's fields", "what to_dict() at f:9 builds"

    @classmethod
    def from_dict(cls, d: Json) -> DictView:
        return cls(dict(d.get("keys") or {}), bool(d.get("closed")), d.get("how") or "")


@dataclass(frozen=True)
class ForwardSite:
    """One call inside the callee that receives its ``**kwargs``."""

    target: str
    file: str
    line: int
    keywords: tuple[str, ...] = ()  # passed explicitly as well
    parameters: tuple[Parameter, ...] = ()
    extra: str | None = None
    forwards: Forwards | None = None  # where the target hands its own **kwargs on

    @classmethod
    def from_dict(cls, d: Json) -> ForwardSite:
        return cls(
            d["target"],
            d["file"],
            int(d["line"]),
            tuple(d.get("keywords") or ()),
            parameters_of(d.get("parameters")),
            d.get("extra"),
            Forwards.from_dict(d["forwards"]) if d.get("forwards") else None,
        )


@dataclass(frozen=True)
class Forwards:
    """Where a callee's ``**kwargs`` go; ``removed``: keys it pops before handing them on."""

    sites: tuple[ForwardSite, ...] = ()
    removed: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, d: Json) -> Forwards:
        return cls(
            tuple(ForwardSite.from_dict(s) for s in d.get("sites") or ()),
            tuple(d.get("removed") or ()),
        )


@dataclass(frozen=True)
class ReturnPath:
    """One return expression and the conditions (over parameters) that select it."""

    expr: str
    line: int
    when: tuple[str, ...]
    via: tuple[str, ...]  # local functions inlined on the way (``aggregate``, ``get_response``)
    shape: str = "?"  # list | item(list) | call:Name | param:x | None | ... | ? (unknown)

    @classmethod
    def from_dict(cls, d: Json) -> ReturnPath:
        return cls(
            d["expr"],
            int(d["line"]),
            tuple(d.get("when") or ()),
            tuple(d.get("via") or ()),
            d.get("shape") or "?",
        )


@dataclass(frozen=True)
class Resolution:
    """A literal a class's ``__post_init__``/validator assigns: ``self.x = True``."""

    target: str  # "async_scheduling" or "scheduler_config.async_scheduling"
    value: str
    line: int
    method: str

    @classmethod
    def from_dict(cls, d: Json) -> Resolution:
        return cls(d["target"], d["value"], int(d["line"]), d.get("method", ""))


@dataclass(frozen=True)
class FitClass:
    """A class whose body defines all (or all but ``missing``) of an install's attributes."""

    module: str
    qualname: str
    file: str
    line: int
    bases: str
    missing: tuple[str, ...]
    methods: Mapping[str, str] = field(default_factory=dict)  # name -> parameter text
    inherits: bool | None = False  # may a base provide the missing one? None: a base unfound

    @property
    def key(self) -> str:
        return f"{self.module}:{self.qualname}"

    @classmethod
    def from_dict(cls, d: Json) -> FitClass:
        return cls(
            d["module"],
            d["qualname"],
            d["file"],
            int(d["line"]),
            d.get("bases", ""),
            tuple(d.get("missing") or ()),
            dict(d.get("methods") or {}),
            d.get("inherits", False),
        )


@dataclass(frozen=True)
class Fits:
    full: tuple[FitClass, ...]
    near: tuple[FitClass, ...]

    @classmethod
    def from_dict(cls, d: Json | None) -> Fits:
        d = d or {}
        return cls(
            tuple(FitClass.from_dict(c) for c in d.get("full") or ()),
            tuple(FitClass.from_dict(c) for c in d.get("near") or ()),
        )
