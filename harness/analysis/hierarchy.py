"""What a class hierarchy does to a caller's class joining it (the ``_hierarchy`` probe's words).

:class:`Machinery`: a base of the caller's class (not the callee's) that brings its own way of
being built -- a pydantic model, reached through the caller's own mixins, or a metaclass --
with its place in the bases and the members it defines with required parameters.
:class:`Construction`: what the callee base does to every subclass (:class:`Hook`), the
members its class decorators add (:class:`Added`) and the calls its own methods make on
``self`` (:class:`SelfCall`) of names a machinery defines. Parsed once, at the edge.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

Json = dict[str, Any]


@dataclass(frozen=True)
class Where:
    """A place in the callee: file, line and the class or method it is in."""

    file: str
    line: int
    owner: str

    @property
    def at(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class Machinery:
    """A base of the caller's class that builds classes its own way."""

    position: int  # index in the class's bases (-1: the metaclass keyword)
    line: int  # where the base is written
    base: str  # as the caller writes it
    root: str  # the machinery: ``pydantic.BaseModel``, a metaclass
    kind: str  # pydantic-model | metaclass | ...
    members: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    source: str = ""  # the caller's line that names it

    @property
    def words(self) -> str:
        """``a pydantic model (pydantic.BaseModel, through PydMixin)``."""
        what = "a class made by the metaclass" if self.kind == "metaclass" else "a pydantic model"
        if self.kind not in ("metaclass", "pydantic-model"):
            what = f"a {self.kind} class"
        same = self.base.split(".")[-1] == self.root.split(".")[-1]
        via = "" if same else f", through {self.base}"
        return f"{what} ({self.root}{via})"

    @classmethod
    def from_dict(cls, d: Json) -> Machinery:
        return cls(
            int(d["position"]),
            int(d["line"]),
            d["base"],
            d["root"],
            d.get("kind", ""),
            {k: tuple(v) for k, v in (d.get("members") or {}).items()},
            d.get("source") or "",
        )


@dataclass(frozen=True)
class Hook:
    """An ``__init_subclass__`` that remakes every subclass (``makes``: dataclass | __init__)."""

    makes: str
    where: Where


@dataclass(frozen=True)
class Added:
    """A member a class decorator adds (``by``: the decorator's full name)."""

    by: str
    where: Where


@dataclass(frozen=True)
class SelfCall:
    """``self.name(...)`` in one of the base's own methods: its shape."""

    where: Where  # owner: the calling method's qualname
    positional: int
    keywords: tuple[str, ...] = ()
    star: bool = False

    @property
    def text(self) -> str:
        """``(2 positional, recompute_mapping=)`` -- the call's shape, for a message."""
        parts = [f"{self.positional} positional"] if self.positional else []
        parts += [f"{k}=" for k in self.keywords] + (["*..."] if self.star else [])
        return ", ".join(parts)

    @classmethod
    def from_dict(cls, v: Json) -> SelfCall:
        return cls(
            Where(v["file"], int(v["line"]), v.get("method") or ""),
            int(v.get("positional") or 0),
            tuple(v.get("keywords") or ()),
            bool(v.get("star")),
        )


@dataclass(frozen=True)
class Construction:
    hook: Hook | None = None
    added: Mapping[str, Added] = field(default_factory=dict)
    self_calls: Mapping[str, SelfCall] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Json) -> Construction:
        def where(w: Json, owner: str) -> Where:
            return Where(w["file"], int(w["line"]), w.get(owner) or "")

        h = d.get("hook")
        return cls(
            hook=Hook(h["makes"], where(h, "owner")) if h else None,
            added={k: Added(v["by"], where(v, "owner")) for k, v in (d.get("added") or {}).items()},
            self_calls={k: SelfCall.from_dict(v) for k, v in (d.get("self_calls") or {}).items()},
        )
