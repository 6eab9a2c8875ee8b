"""Environment variables a caller sets and values a callee refuses, as the callsites probe
read them (``probes/signatures/_environ.py``), and the pure decision joining the two."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class EnvSet:
    """``os.environ["NAME"] = "value"`` (or setdefault/update/putenv) in the caller."""

    name: str
    value: str
    file: str
    line: int
    source: str = ""
    patch: str = ""  # set by a series' patch: its id ("" for the caller's own code)
    gate: str = ""  # that patch's gate, where it leaves the release checked out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EnvSet:
        return cls(d["name"], str(d["value"]), d["file"], int(d["line"]), d.get("source") or "")


@dataclass(frozen=True)
class EnvRefusal:
    """A callee ``raise`` under ``NAME op values`` (``op``: ==, !=, in, not in)."""

    name: str
    op: str
    values: tuple[str, ...]
    file: str
    line: int
    source: str = ""
    conditional: bool = False  # the guard tests something else too: it raises only then

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EnvRefusal:
        return cls(
            d["name"],
            d["op"],
            tuple(str(v) for v in d.get("values") or ()),
            d["file"],
            int(d["line"]),
            d.get("source") or "",
            bool(d.get("conditional")),
        )

    def refuses(self, value: str) -> bool:
        """Pure: does the guard hold (and so the raise run) for ``value``?"""
        inside = value in self.values
        return inside if self.op in ("==", "in") else not inside


@dataclass(frozen=True)
class Environ:
    sets: tuple[EnvSet, ...] = ()
    refusals: tuple[EnvRefusal, ...] = ()

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> Environ:
        d = d or {}
        return cls(
            tuple(EnvSet.from_dict(s) for s in d.get("sets") or ()),
            tuple(EnvRefusal.from_dict(r) for r in d.get("refusals") or ()),
        )


def refused(environ: Environ, more: tuple[EnvSet, ...] = ()) -> list[tuple[EnvSet, EnvRefusal]]:
    """Pure: each value the caller (or ``more``: its series) sets that a callee guard raises
    for (one refusal each)."""
    out = []
    for s in environ.sets + more:
        hits = [r for r in environ.refusals if r.name == s.name and r.refuses(s.value)]
        hit = min(hits, key=lambda r: r.conditional, default=None)  # an unconditional first
        if hit is not None:
            out.append((s, hit))
    return out


@dataclass(frozen=True)
class MethodHead:
    """A method along a callee class's MRO: where it is defined, its body's first line."""

    owner: str
    at: str
    head: str

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MethodHead:
        return cls(d.get("owner") or "", d.get("at") or "", d.get("head") or "")
