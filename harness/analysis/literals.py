"""The literals a subclassed callee class's code depends on, as the callsites probe read them
(``probes/signatures/_literals.py``), and the pure comparison with the baseline's."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class FunctionLiterals:
    at: str  # "file:line"
    literals: tuple[str, ...]


@dataclass(frozen=True)
class ClassLiterals:
    """The class's own methods and the module functions they call (qualname -> literals),
    and the module constants they read (NAME -> (where, repr))."""

    functions: Mapping[str, FunctionLiterals] = field(default_factory=dict)
    constants: Mapping[str, tuple[str, str]] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ClassLiterals:
        fns = d.get("functions") or {}
        consts = d.get("constants") or {}
        return cls(
            {
                k: FunctionLiterals(v.get("at") or "", tuple(v.get("literals") or ()))
                for k, v in fns.items()
            },
            {k: (v.get("at") or "", v.get("value") or "") for k, v in consts.items()},
        )


@dataclass(frozen=True)
class LiteralChange:
    """One function (or constant) whose literals changed: where it is now, old -> new."""

    name: str
    at: str
    changes: tuple[str, ...]  # "'NHD' -> 'LBNHC'"


def _side(items: list[str]) -> str:
    return ", ".join(items) if items else "(none)"


def changed(old: ClassLiterals, new: ClassLiterals, most: int = 3) -> list[LiteralChange]:
    """Pure: the functions and constants in both whose literals differ, each change old -> new
    (at most ``most`` per function, then how many more)."""
    out: list[LiteralChange] = []
    for name in sorted(set(old.functions) & set(new.functions)):
        a, b = list(old.functions[name].literals), list(new.functions[name].literals)
        if a == b:
            continue
        ops = difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
        said = [
            f"{_side(a[i1:i2])} -> {_side(b[j1:j2])}" for op, i1, i2, j1, j2 in ops if op != "equal"
        ]
        more = f"(+{len(said) - most} more)" if len(said) > most else ""
        out.append(
            LiteralChange(
                name, new.functions[name].at, tuple(said[:most]) + ((more,) if more else ())
            )
        )
    for name in sorted(set(old.constants) & set(new.constants)):
        (_, was), (at, now) = old.constants[name], new.constants[name]
        if was != now:
            out.append(LiteralChange(name, at, (f"{was} -> {now}",)))
    return out
