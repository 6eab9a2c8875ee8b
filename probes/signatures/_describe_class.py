"""Describe classes as plain dicts: members, attributes, and the constructor a caller binds to.

The constructor is the class's own ``__new__``/``__init__``, the one a library synthesises
from its fields (the flavour, :mod:`probes.signatures._class_flavour`), an enum's or a stdlib
base's (:mod:`probes.signatures._stdsigs`), or the nearest base's -- and the describer says
which rule gave it.
"""

from __future__ import annotations

import ast

from probes._walk import walk
from probes.signatures._bound import extend
from probes.signatures._class_flavour import (
    FIELD_FUNCS,
    IGNORED_BASES,
    ClassFlavours,
    field_call,
)
from probes.signatures._decorated import decorated_ctor
from probes.signatures._describe import (
    KW_ONLY,
    POS_OR_KW,
    VAR_KW,
    VAR_POS,
    after_self,
    always_raises,
    body_functions,
    describe_function,
    docstring,
    is_overload,
    param,
    parameters,
)
from probes.signatures._stdsigs import ENUMS, enum_ctor, stdlib_class_params, stdlib_ctor
from probes.signatures._syntax import ModuleSummary, dotted
from probes.signatures._typeddict import key_default


class ClassDescriber(ClassFlavours):
    """Describes classes, resolving bases and decorators through the shared Index."""

    # -- fields ---------------------------------------------------------------------------
    def fields(
        self, mod: ModuleSummary, cls: ast.ClassDef, flavour: str, opts: dict, depth: int = 0
    ) -> list[dict]:
        """Constructor parameters from annotated class attributes, bases' fields first."""
        inherited: list[dict] = []
        if depth < 8:
            for b in reversed(cls.bases):
                base = self.base_class(mod, b)
                if base is None:
                    continue
                bf = self.flavour(*base)
                if bf is not None:
                    for f in self.fields(base[0], base[1], bf[0], bf[1], depth + 1):
                        inherited = [x for x in inherited if x["name"] != f["name"]] + [f]
        own: list[dict] = []
        kw_only = opts.get("kw_only") == "True" or flavour in ("pydantic-model", "typeddict")
        for st in cls.body:
            if not isinstance(st, ast.AnnAssign) or not isinstance(st.target, ast.Name):
                continue
            name = st.target.id
            head = dotted(st.annotation).split(".")[-1]
            if head == "KW_ONLY":
                kw_only = True
                continue
            if head == "ClassVar" or (flavour.startswith("pydantic") and name.startswith("_")):
                continue
            default: str | None = None
            init = True
            field_kw_only = kw_only
            if st.value is not None:
                default = mod.src.text(st.value)
                if (
                    isinstance(st.value, ast.Call)
                    and dotted(st.value.func).split(".")[-1] in FIELD_FUNCS
                ):
                    default, init, fko, alias = field_call(st.value, mod.src)
                    if fko is not None:
                        field_kw_only = fko
                    if alias and flavour == "pydantic-model":
                        name = alias
            if flavour == "typeddict":
                default = key_default(cls, st.annotation)  # total=, Required/NotRequired
            if not init:
                inherited = [x for x in inherited if x["name"] != name]
                continue
            p = param(name, KW_ONLY if field_kw_only else POS_OR_KW, None, st.annotation, mod.src)
            p["default"] = default
            if head == "InitVar":
                p["init_var"] = True
            if flavour != "attrs" and any(x["name"] == name for x in inherited):
                # redeclared: keeps its base's place (dataclasses, msgspec; attrs moves it)
                inherited = [p if x["name"] == name else x for x in inherited]
                continue
            inherited = [x for x in inherited if x["name"] != name]
            own.append(p)
        return inherited + own

    # -- constructor ----------------------------------------------------------------------
    def constructor(self, mod: ModuleSummary, cls: ast.ClassDef, depth: int = 0) -> dict:
        """``{"via", "from", "parameters", "extra"}``: the signature ``Cls(...)`` binds to."""
        made = decorated_ctor(self, mod, cls)  # ``cls.__init__ = ...`` in a class decorator
        if made is not None:
            return made
        enum = self.enum_base(mod, cls)
        if enum is not None:  # the metaclass signs it, whatever __init__/__new__ it writes
            got = enum_ctor(enum[0], cls, self.index.python)  # for the target's Python
            return {**got, "inherited": True} if enum[1] else got
        funcs = body_functions(cls.body)
        qual = f"{mod.name}.{cls.name}"
        flav = self.flavour(mod, cls)
        for meth in ("__new__", "__init__"):  # inspect's order: a class's own __new__ first
            if meth in funcs:
                impl, ovl = funcs[meth]
                assert isinstance(impl, (ast.FunctionDef, ast.AsyncFunctionDef))
                params = after_self(parameters(impl.args, mod.src))
                got = {
                    "via": meth,
                    "from": qual,
                    "line": impl.lineno,
                    "parameters": params,
                    "overloads": [
                        after_self(parameters(o.args, mod.src))  # type: ignore[attr-defined]
                        for o in ovl
                        if o is not impl or is_overload(o)
                    ],
                    "extra": "forbid",
                }
                if always_raises(impl):  # transformers' AutoModel: "use from_pretrained"
                    got["raises"] = True
                if meth == "__new__" and "__init__" in funcs:
                    # a call must bind to both; ``__new__(cls, *a, **k)`` alone says nothing
                    init = funcs["__init__"][0]
                    got["init_parameters"] = after_self(parameters(init.args, mod.src))  # type: ignore[attr-defined]
                return got
        if flav is not None:
            kind, opts = flav
            if opts.get("init") == "False":
                pass  # no synthesised __init__: fall through to the bases
            else:
                extra = "forbid"
                if kind in ("pydantic-model", "pydantic-dataclass"):
                    extra = self.pydantic_extra(mod, cls, opts)
                elif self.accepts_kwargs(mod, cls):
                    extra = "allow"
                if self._unread_base(mod, cls):
                    extra = "unknown"  # a base we cannot read may add fields, before ours
                params = self.fields(mod, cls, kind, opts)
                if kind not in ("pydantic-model", "typeddict", "namedtuple", "msgspec"):
                    # dataclasses: every positional field first, then the keyword-only ones
                    params = [p for p in params if p["kind"] != KW_ONLY] + [
                        p for p in params if p["kind"] == KW_ONLY
                    ]
                if kind == "pydantic-model" and extra == "allow":
                    params.append(param("extra_data", VAR_KW, None, None))
                got = {
                    "via": kind,
                    "from": qual,
                    "line": cls.lineno,
                    "parameters": params,
                    "overloads": [],
                    "extra": extra,
                }
                if opts.get("wrapper"):
                    got["wrapper"] = opts["wrapper"]
                return got
        if depth < 8:
            for b in cls.bases:
                full = self.index.resolve_dotted(mod.name, dotted(b))
                if full in PROTOCOLS:  # typing gives protocols a catch-all __init__
                    return stdlib_ctor("protocol", full, _VARIADIC)
                if full in IGNORED_BASES or full.startswith("typing.Generic"):
                    continue
                base = self.base_class(mod, b)
                if base is None:
                    std = stdlib_class_params(full)
                    if std is not None:
                        return stdlib_ctor("stdlib", full, std)
                    return {
                        "via": "unknown",
                        "from": full,
                        "parameters": None,
                        "overloads": [],
                        "extra": "unknown",
                    }
                got = self.constructor(base[0], base[1], depth + 1)
                if got["via"] != "object":
                    return {**got, "inherited": True}
        return {
            "via": "object",
            "from": "object",
            "parameters": [],
            "overloads": [],
            "extra": "forbid",
        }

    def enum_base(
        self, mod: ModuleSummary, cls: ast.ClassDef, depth: int = 0
    ) -> tuple[str, bool] | None:
        """``(enum.Enum or the like, through a base of ours)`` when ``cls`` is an enum class:
        a stdlib enum among its bases (``class Kind(str, Enum)``: the mixin does not decide),
        or a base class that is one."""
        for b in cls.bases:
            full = self.index.resolve_dotted(mod.name, dotted(b))
            if full in ENUMS:
                return full, depth > 0
        for b in cls.bases if depth < 8 else []:
            base = self.base_class(mod, b)
            got = self.enum_base(base[0], base[1], depth + 1) if base else None
            if got is not None:
                return got
        return None

    def describe(
        self, mod: ModuleSummary, cls: ast.ClassDef, qualname: str, attributes: bool = True
    ) -> dict:
        funcs = body_functions(cls.body)
        members = []
        for name, (impl, ovl) in funcs.items():
            assert isinstance(impl, (ast.FunctionDef, ast.AsyncFunctionDef))
            members.append(describe_function(impl, f"{qualname}.{name}", True, ovl, mod.src))
        for st in cls.body:
            if isinstance(st, ast.ClassDef):
                members.append(self.describe(mod, st, f"{qualname}.{st.name}", attributes))
        ctor = self.constructor(mod, cls)
        made = _made_init(ctor, f"{qualname}.__init__", cls.lineno)
        if made is not None and "__init__" not in funcs:
            members.append(made)
        extend(self, mod, cls, qualname, members)  # set after the body or by a decorator
        return {
            "qualname": qualname,
            "kind": "class",
            "is_async": False,
            "line": cls.lineno,
            "end_line": cls.end_lineno or cls.lineno,
            "decorators": [mod.src.text(d) for d in cls.decorator_list],
            "bases": [mod.src.text(b) for b in cls.bases],
            "resolved_bases": [self.index.resolve_dotted(mod.name, dotted(b)) for b in cls.bases],
            "parameters": ctor["parameters"],
            "returns": None,
            "constructor": {k: v for k, v in ctor.items() if k != "parameters"},
            **({"made_by": cls.made_by} if hasattr(cls, "made_by") else {}),
            "members": members,
            "attributes": class_attributes(cls) if attributes else [],
            "overloads": [],
            "doc": docstring(cls),
        }


PROTOCOLS = {"typing.Protocol", "typing_extensions.Protocol"}
_VARIADIC = [param("args", VAR_POS, None, None), param("kwargs", VAR_KW, None, None)]


SYNTHESISED = ("dataclass", "attrs", "dataclass_transform:", "hf-strict", "pydantic-dataclass")


def _made_init(ctor: dict, qualname: str, line: int) -> dict | None:
    """The ``__init__`` a decorator or base writes into the class itself (not inherited)."""
    if ctor.get("inherited") or ctor.get("parameters") is None:
        return None
    via = ctor.get("via") or ""
    this = param("self", POS_OR_KW, None, None)
    if via == "pydantic-dataclass" or ctor.get("wrapper") == "pydantic":  # pydantic's wrapper
        params = [param("__dataclass_self__", POS_OR_KW, None, None), *_VARIADIC]
    elif via == "protocol":
        params = [this, *_VARIADIC]
    elif via.startswith(SYNTHESISED):
        params = [this, *ctor["parameters"]]
    else:
        return None
    return {
        "qualname": qualname,
        "kind": "method",
        "is_async": False,
        "line": line,
        "end_line": line,
        "decorators": [],
        "parameters": params,
        "returns": "None",
        "overloads": [],
        "doc": f"synthesised by {via}",
    }


def class_attributes(cls: ast.ClassDef) -> list[str]:
    """Names set on the class body or on ``self`` in its methods (instances' attributes)."""
    names: set[str] = set()
    for st in cls.body:
        if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
            names.add(st.target.id)
        elif isinstance(st, ast.Assign):
            names.update(t.id for t in st.targets if isinstance(t, ast.Name))
        elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in walk(st):
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.ctx, ast.Store)
                    and (isinstance(node.value, ast.Name) and node.value.id == "self")
                ):
                    names.add(node.attr)
    return sorted(names)
