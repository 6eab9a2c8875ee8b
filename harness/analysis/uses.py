"""The caller's uses of its callees, as the callsites probe reports them (frozen models).

Every use has a :class:`Site` (what a finding points at) and, where it names a callee
symbol, a :class:`Ref`. Parsed by :meth:`harness.analysis.scan.Scan.from_dict`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.analysis.bind import CallShape
from harness.analysis.facts import parameters_of
from harness.analysis.gates import VersionGate
from harness.analysis.hierarchy import Machinery
from harness.models import Parameter, SymbolKind

Json = dict[str, Any]


@dataclass(frozen=True)
class Ref:
    """What a use refers to: a symbol (``module:qualname``) or a whole module."""

    kind: str  # symbol | module
    module: str
    qualname: str = ""

    @property
    def key(self) -> str:
        return self.module if self.kind == "module" else f"{self.module}:{self.qualname}"

    @classmethod
    def from_wire(cls, raw: Sequence[Any]) -> Ref:
        """The probe's ``("symbol", module, qualname)`` / ``("module", module)``."""
        return cls(str(raw[0]), str(raw[1]), str(raw[2]) if len(raw) > 2 else "")


def ref_key(ref: Sequence[Any]) -> str:
    """``module:qualname`` of a probe reference (``("symbol", module, qualname)``)."""
    return Ref.from_wire(ref).key


@dataclass(frozen=True)
class Site:
    """Where a use is in the caller: what a finding points at."""

    file: str
    line: int
    source: str = ""
    scope: str = ""

    @staticmethod
    def fields_of(d: Json) -> Json:
        return {
            "file": d["file"],
            "line": int(d["line"]),
            "source": d.get("source", ""),
            "scope": d.get("scope", ""),
        }


# -- uses ----------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class NameUse(Site):
    """A use of a bare name (left unbound by a failed guarded import)."""

    name: str
    via: int | None = None  # the later line of the ``try`` that binds it, skipped by the failure

    @classmethod
    def from_dict(cls, d: Json) -> NameUse:
        return cls(**Site.fields_of(d), name=d["name"], via=d.get("via"))


@dataclass(frozen=True)
class Fallback:
    """What the ``except ImportError`` branch binds: ``none``, ``def`` (with its parameters)..."""

    kind: str
    line: int | None = None
    parameters: tuple[Parameter, ...] = ()

    @classmethod
    def from_dict(cls, d: Json | None) -> Fallback | None:
        if not d:
            return None
        return cls(d.get("kind", ""), d.get("line"), parameters_of(d.get("parameters")))


@dataclass(frozen=True, kw_only=True)
class ImportUse(Site):
    """``import m`` / ``from m import name``, and whether it resolves on the installed callee."""

    module: str
    name: str | None = None
    local: str = ""
    ok: bool = True
    guarded: bool = False
    dynamic: bool = False
    opaque: str = ""  # why a name no source defines may still exist (the probe's words)
    suggestions: tuple[str, ...] = ()
    fallback: Fallback | None = None
    unbound_uses: tuple[NameUse, ...] = ()
    fallback_of: int | None = None  # the line of the try body's import it stands in for
    narrow_guard: int | None = None  # the line of a try whose except ModuleNotFoundError it passes
    ref: Ref | None = None
    deprecated: str = ""  # "file:line" of the warning a module __getattr__ serves it with
    now: str = ""  # what the shim returns, "module:name"
    gates: tuple[VersionGate, ...] = ()  # the version tests its branch runs under (a failed one)
    passed_over: str = ""  # module __getattr__s that cannot serve it, in the probe's words

    @classmethod
    def from_dict(cls, d: Json) -> ImportUse:
        chain = d.get("chain") or []
        # the shim's own hop, then the name it returns (as its import says it)
        warns = [chain[i : i + 2] for i, h in enumerate(chain) if h.get("how") == "deprecated"]
        return cls(
            **Site.fields_of(d),
            module=d["module"],
            name=d.get("name"),
            local=d.get("local", ""),
            ok=bool(d.get("ok")),
            guarded=bool(d.get("guarded")),
            dynamic=bool(d.get("dynamic")),
            opaque=d.get("opaque") or "",
            suggestions=tuple(d.get("suggestions") or ()),
            fallback=Fallback.from_dict(d.get("fallback")),
            unbound_uses=tuple(NameUse.from_dict(u) for u in d.get("unbound_uses") or ()),
            fallback_of=d.get("fallback_of"),
            narrow_guard=d.get("narrow_guard"),
            ref=Ref.from_wire(d["ref"]) if d.get("ref") else None,
            deprecated=f"{warns[0][0]['file']}:{warns[0][0]['line']}" if warns else "",
            now=f"{warns[0][-1]['module']}:{warns[0][-1]['name']}" if warns else "",
            gates=tuple(VersionGate.from_dict(g) for g in d.get("gates") or ()),
            passed_over=d.get("passed_over") or "",
        )


@dataclass(frozen=True)
class ResultUse:
    """What the caller does with a call's result: ``x[0]``, ``for _ in x``, ``len(x)``..."""

    how: str  # subscript | iterate | len | attribute | unpack | truth | compare
    line: int
    text: str
    source: str = ""  # the caller's line the use is on

    @classmethod
    def from_dict(cls, d: Json) -> ResultUse:
        return cls(d["how"], int(d["line"]), d.get("text", ""), d.get("source", ""))


@dataclass(frozen=True)
class PassedTo:
    """The call's result is handed to another callee call as ``keyword=``."""

    symbol: str  # module:qualname of the receiving callee
    keyword: str

    @classmethod
    def from_dict(cls, d: Json | None) -> PassedTo | None:
        return None if not d else cls(d["symbol"], d["keyword"])


@dataclass(frozen=True)
class SpreadKey:
    """A key of a dict spread with ``**`` whose keys are known; ``when``: the condition that
    adds it (``None``: always there)."""

    key: str
    when: str | None = None
    line: int | None = None  # the line that puts it in the dict


@dataclass(frozen=True, kw_only=True)
class CallUse(Site):
    """A call of a callee symbol: its argument shape, literal values, and the result's uses."""

    ref: Ref
    shape: CallShape
    spread: tuple[SpreadKey, ...] | None = None  # f(**opts) with opts' keys known
    on_instance: bool = False
    arg_values: tuple[str | None, ...] = ()  # literal source text of each positional, else None
    kwarg_values: Mapping[str, str | None] = field(default_factory=dict)
    result: tuple[ResultUse, ...] = ()
    passed_to: PassedTo | None = None

    @property
    def symbol(self) -> str:
        return self.ref.key

    @property
    def positional(self) -> int:
        return self.shape.positional

    @property
    def keywords(self) -> tuple[str, ...]:
        return self.shape.keywords

    @property
    def star(self) -> bool:
        return self.shape.star

    @property
    def double_star(self) -> bool:
        return self.shape.double_star

    @classmethod
    def from_dict(cls, d: Json) -> CallUse:
        shape = d["shape"]
        values = d.get("values") or {}
        spread = shape.get("spread_keys")
        return cls(
            **Site.fields_of(d),
            ref=Ref.from_wire(d["ref"]),
            shape=CallShape(
                int(shape["positional"]),
                tuple(shape["keywords"]),
                bool(shape["star"]),
                bool(shape["double_star"]),
            ),
            spread=None
            if spread is None
            else tuple(SpreadKey(k["key"], k.get("when") or None, k.get("line")) for k in spread),
            on_instance=bool(d.get("on_instance")),
            arg_values=tuple(values.get("args") or ()),
            kwarg_values=dict(values.get("kwargs") or {}),
            result=tuple(ResultUse.from_dict(u) for u in d.get("result") or ()),
            passed_to=PassedTo.from_dict(d.get("passed_to")),
        )


#: CallUse under the name the drift rules first used.
CallSite = CallUse


@dataclass(frozen=True, kw_only=True)
class AttributeUse(Site):
    """``mod.name``, ``Cls.name`` or ``obj.name`` on a callee module, class or instance."""

    ref: Ref
    attr: str
    # module | class | instance | narrowed (an instance known by narrowing past an exit) |
    # inherited (``self.x`` in a caller class deriving from the callee class) | forwarded
    # (through a caller wrapper's ``__getattr__`` to the callee object it wraps)
    on: str
    via: str = ""  # inherited: the caller's class; forwarded: its __getattr__ and attribute
    #: inherited: no subclass of the caller's class defines the name (nor may): the callee
    #: base alone decides whether the object has it, with no baseline needed
    closed: bool = False
    #: where the callee's own source stores the name on an object other than ``self``
    #: ("file:line"): the instance may have it whatever its class binds
    stored: str = ""
    #: inherited: the chain's other callee bases, (module, class) each: the name is gone
    #: only if every one of them lacks it
    also: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_dict(cls, d: Json) -> AttributeUse:
        return cls(
            **Site.fields_of(d),
            ref=Ref.from_wire(d["ref"]),
            attr=d["attr"],
            on=d.get("on", ""),
            via=d.get("via", ""),
            closed=bool(d.get("closed", False)),
            stored=d.get("stored", ""),
            also=tuple((str(m), str(q)) for m, q in d.get("also") or ()),
        )


@dataclass(frozen=True)
class Method:
    """A method a caller subclass defines (an override candidate)."""

    name: str
    line: int
    kind: SymbolKind
    parameters: tuple[Parameter, ...]

    @classmethod
    def from_dict(cls, d: Json) -> Method:
        return cls(
            d["name"],
            int(d["line"]),
            SymbolKind(d.get("kind") or SymbolKind.METHOD),
            parameters_of(d.get("parameters")),
        )


@dataclass(frozen=True, kw_only=True)
class Subclass(Site):
    """A caller class deriving from callee classes, with the methods it defines."""

    name: str
    bases: tuple[Ref, ...] = ()
    methods: tuple[Method, ...] = ()
    positions: tuple[int, ...] = ()  # each callee base's index among the class's bases
    others: tuple[Machinery, ...] = ()  # bases that bring their own machinery

    def position(self, base: Ref) -> int:
        """Where ``base`` stands among the class's bases (its MRO order); -1: unknown."""
        i = self.bases.index(base)
        return self.positions[i] if i < len(self.positions) else -1

    @classmethod
    def from_dict(cls, d: Json) -> Subclass:
        return cls(
            **Site.fields_of(d),
            name=d["class"],
            bases=tuple(Ref.from_wire(b) for b in d.get("bases") or ()),
            methods=tuple(Method.from_dict(m) for m in d.get("methods") or ()),
            positions=tuple(int(p) for p in d.get("positions") or ()),
            others=tuple(Machinery.from_dict(o) for o in d.get("others") or ()),
        )


@dataclass(frozen=True, kw_only=True)
class Install(Site):
    """A caller function installed as a method: ``obj.forward = MethodType(f, obj)``."""

    function: str
    function_line: int
    attrs: tuple[str, ...] = ()  # read on ``self`` in the function, not set by the caller
    attr_lines: Mapping[str, int] = field(default_factory=dict)
    replaces: str = ""
    obj: str = ""
    target: str | None = None  # module:qualname when the class is known exactly

    @property
    def key(self) -> str:
        return ",".join(sorted(self.attrs))

    @classmethod
    def from_dict(cls, d: Json) -> Install:
        return cls(
            **Site.fields_of(d),
            function=d["function"],
            function_line=int(d["function_line"]),
            attrs=tuple(d.get("attrs") or ()),
            attr_lines={k: int(v) for k, v in (d.get("attr_lines") or {}).items()},
            replaces=d.get("replaces", ""),
            obj=d.get("object", ""),
            target=ref_key(d["target"]) if d.get("target") else None,
        )


@dataclass(frozen=True, kw_only=True)
class KeyUse(Site):
    """A key read from a dict view of a callee object that raises when the key is not there:
    ``cfg.to_dict()["field"]``, ``d.pop("field")``, ``del d["field"]`` (``d`` bound to it)."""

    ref: Ref  # the object's class
    view: str  # to_dict | model_dump | dict | asdict | vars | __dict__
    key: str
    how: str  # subscript | pop | del
    view_line: int = 0  # where the view is taken

    @property
    def symbol(self) -> str:
        return self.ref.key

    @classmethod
    def from_dict(cls, d: Json) -> KeyUse:
        return cls(
            **Site.fields_of(d),
            ref=Ref.from_wire(d["ref"]),
            view=d["view"],
            key=d["key"],
            how=d.get("how", "subscript"),
            view_line=int(d.get("view_line") or 0),
        )
