"""Typed views of the callsites probe's payload, parsed once where the rules read them.

The probe speaks JSON; the newer rules take these frozen records instead of dicts, so a
renamed key fails in one ``from_dict`` rather than deep inside a rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.models import Parameter

Json = dict[str, Any]


def ref_key(ref: list[Any] | tuple[Any, ...]) -> str:
    """``module:qualname`` of a probe reference (``("symbol", module, qualname)``)."""
    return f"{ref[1]}:{ref[2]}" if ref[0] != "module" else str(ref[1])


@dataclass(frozen=True)
class ResultUse:
    """What the caller does with a call's result: ``x[0]``, ``for _ in x``, ``len(x)``..."""

    how: str  # subscript | iterate | len | attribute | unpack | truth
    line: int
    text: str

    @classmethod
    def from_dict(cls, d: Json) -> ResultUse:
        return cls(d["how"], int(d["line"]), d.get("text", ""))


@dataclass(frozen=True)
class PassedTo:
    """The call's result is handed to another callee call as ``keyword=``."""

    symbol: str  # module:qualname of the receiving callee
    keyword: str

    @classmethod
    def from_dict(cls, d: Json | None) -> PassedTo | None:
        return None if not d else cls(d["symbol"], d["keyword"])


@dataclass(frozen=True)
class CallSite:
    file: str
    line: int
    source: str
    scope: str
    symbol: str  # module:qualname
    on_instance: bool
    positional: int
    keywords: tuple[str, ...]
    star: bool
    double_star: bool
    arg_values: tuple[str | None, ...]  # literal source text of each positional, else None
    kwarg_values: dict[str, str | None]
    result: tuple[ResultUse, ...]
    passed_to: PassedTo | None
    raw: Json  # the probe's record, for Checker._add

    @classmethod
    def from_dict(cls, d: Json) -> CallSite:
        shape = d["shape"]
        values = d.get("values") or {}
        return cls(
            file=d["file"],
            line=int(d["line"]),
            source=d.get("source", ""),
            scope=d.get("scope", ""),
            symbol=ref_key(d["ref"]),
            on_instance=bool(d.get("on_instance")),
            positional=int(shape["positional"]),
            keywords=tuple(shape["keywords"]),
            star=bool(shape["star"]),
            double_star=bool(shape["double_star"]),
            arg_values=tuple(values.get("args") or ()),
            kwarg_values=dict(values.get("kwargs") or {}),
            result=tuple(ResultUse.from_dict(u) for u in d.get("result") or ()),
            passed_to=PassedTo.from_dict(d.get("passed_to")),
            raw=d,
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


def return_paths(sym: Json) -> tuple[ReturnPath, ...] | None:
    raw = sym.get("return_paths")
    return None if raw is None else tuple(ReturnPath.from_dict(p) for p in raw)


def parameters(sym: Json, *, bound: bool) -> tuple[Parameter, ...]:
    """The parameters a call binds to; ``bound`` drops ``self``/``cls`` of methods."""
    params = tuple(Parameter.from_dict(p) for p in sym.get("parameters") or ())
    kind = sym.get("kind")
    if params and (kind == "classmethod" or (kind == "method" and bound)):
        return params[1:]
    return params


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


def resolutions(sym: Json) -> tuple[Resolution, ...]:
    return tuple(Resolution.from_dict(r) for r in sym.get("resolutions") or ())


@dataclass(frozen=True)
class Install:
    """A caller function installed as a method: ``obj.forward = MethodType(f, obj)``."""

    file: str
    line: int
    source: str
    scope: str
    function: str
    function_line: int
    attrs: tuple[str, ...]  # read on ``self`` in the function, not set by the caller
    attr_lines: dict[str, int]
    replaces: str
    obj: str
    target: str | None  # module:qualname when the class is known exactly
    raw: Json

    @property
    def key(self) -> str:
        return ",".join(sorted(self.attrs))

    @classmethod
    def from_dict(cls, d: Json) -> Install:
        return cls(
            file=d["file"],
            line=int(d["line"]),
            source=d.get("source", ""),
            scope=d.get("scope", ""),
            function=d["function"],
            function_line=int(d["function_line"]),
            attrs=tuple(d.get("attrs") or ()),
            attr_lines={k: int(v) for k, v in (d.get("attr_lines") or {}).items()},
            replaces=d.get("replaces", ""),
            obj=d.get("object", ""),
            target=ref_key(d["target"]) if d.get("target") else None,
            raw=d,
        )


@dataclass(frozen=True)
class FitClass:
    """A class whose body defines all (or all but ``missing``) of an install's attributes."""

    module: str
    qualname: str
    file: str
    line: int
    bases: str
    missing: tuple[str, ...]
    methods: dict[str, str]  # method name -> parameter text
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
