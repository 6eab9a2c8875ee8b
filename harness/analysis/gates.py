"""Whether an import's branch runs on the release checked: the version tests around it.

The callsites probe reads each ``if`` an import sits under that tests a callee's version
(``version.parse(transformers.__version__) >= version.parse("5")``, ``is_transformers_version
(">=", "4.50")``) as a :class:`VersionGate`; a ``sys.version_info`` test it decides itself, for
the target's Python. Pure: the gate is decided with the version of the release being checked
(the installed one, or the baseline's), as ``packaging`` compares versions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from packaging.version import Version

_V = TypeVar("_V", str, "Version")


@dataclass(frozen=True)
class VersionGate:
    """The branch runs only where ``module``'s version ``op`` ``version`` is ``taken``;
    ``python`` False: a Python version test the target's Python decides against it."""

    line: int
    text: str
    module: str = ""
    op: str = ""
    version: str = ""
    taken: bool = True
    python: bool | None = None
    #: ``m.__version__ < "4.2.0"``: compared as Python compares two strings, not as versions
    strings: bool = False

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> VersionGate:
        return cls(
            line=int(d.get("line") or 0),
            text=str(d.get("text") or ""),
            module=str(d.get("module") or ""),
            op=str(d.get("op") or ""),
            version=str(d.get("version") or ""),
            taken=bool(d.get("taken", True)),
            python=d.get("python"),
            strings=bool(d.get("strings", False)),
        )


def holds(gate: VersionGate, installed: str | None) -> bool | None:
    """Pure: does the gate's test come out as its branch needs on ``installed``? None: the
    gate names no version we know, or one ``packaging`` cannot read."""
    if gate.python is not None:
        return gate.python
    if installed is None:
        return None
    from packaging.version import InvalidVersion, Version

    try:
        have, want = Version(installed), Version(gate.version)
    except InvalidVersion:
        return None
    test = (
        _compare(installed, gate.op, gate.version)
        if gate.strings
        else _compare(have, gate.op, want)
    )
    return None if test is None else test == gate.taken


def _compare(have: _V, op: str, want: _V) -> bool | None:
    return {
        "<": have < want,
        "<=": have <= want,
        ">": have > want,
        ">=": have >= want,
        "==": have == want,
        "!=": have != want,
    }.get(op)


def dead_branch(gates: Sequence[VersionGate], versions: Mapping[str, str | None]) -> str:
    """Pure: why the import's branch cannot run with these versions ("" if it may)."""
    for gate in gates:
        installed = versions.get(gate.module.split(".")[0]) if gate.module else None
        if holds(gate, installed) is False:
            on = f"{gate.module} {installed}" if gate.module else "the target's Python"
            return f"`{gate.text}` is {not gate.taken} on {on} (line {gate.line})"
    return ""


@dataclass(frozen=True)
class GatedBlock:
    """Lines ``start``..``end`` of a caller file: an ``if`` branch that runs only where its
    ``gates`` hold (a use there is no break on a release they exclude)."""

    file: str
    start: int
    end: int
    gates: tuple[VersionGate, ...]

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> GatedBlock:
        return cls(
            str(d["file"]),
            int(d["start"]),
            int(d["end"]),
            tuple(VersionGate.from_dict(g) for g in d.get("gates") or ()),
        )


def dead_lines(
    blocks: Sequence[GatedBlock], versions: Mapping[str, str | None]
) -> dict[str, list[tuple[int, int]]]:
    """Pure: file -> the line ranges that cannot run with these versions."""
    out: dict[str, list[tuple[int, int]]] = {}
    for b in blocks:
        if dead_branch(b.gates, versions):
            out.setdefault(b.file, []).append((b.start, b.end))
    return out


def decided(
    line: int, file: str, blocks: Sequence[GatedBlock], versions: Mapping[str, str | None]
) -> tuple[bool, frozenset[str]] | None:
    """Pure: the version branches a line of ``file`` sits in, as the release checked decides
    them: None where one of them cannot run; else (True, the tests that hold there, each as
    its branch reads -- ``test`` or ``not (test)``)."""
    around = [b for b in blocks if b.file == file and b.start <= line <= b.end]
    if any(dead_branch(b.gates, versions) for b in around):
        return None
    sure = {
        g.text if g.taken else f"not ({g.text})"
        for b in around
        for g in b.gates
        if holds(g, versions.get(g.module.split(".")[0]) if g.module else None)
    }
    return True, frozenset(sure)
