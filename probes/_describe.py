"""Turn ``ast`` definitions into plain dicts: signatures, decorators, and class constructors.

A class's constructor is what a caller binds against, and it is often not written anywhere:
dataclasses (with ``InitVar`` and ``field(init=False)``), decorators marked with PEP 681
``dataclass_transform`` (vLLM's ``@config``), pydantic models and dataclasses, attrs,
``msgspec.Struct``, ``NamedTuple``, or a base class's ``__init__``. We synthesise it from the
class body the way those libraries do, and say which rule produced it.
"""

from __future__ import annotations

import ast
from typing import Any

from probes._astindex import Index, ModuleSummary, Source, dotted
from probes._bound import extend
from probes._decorated import decorated_ctor
from probes._stdsigs import ENUMS, enum_ctor, stdlib_class_params, stdlib_ctor
from probes._typeddict import key_default

POS_ONLY = "positional-only"
POS_OR_KW = "positional-or-keyword"
VAR_POS = "var-positional"
KW_ONLY = "keyword-only"
VAR_KW = "var-keyword"

DATACLASS_DECORATORS = {
    "dataclasses.dataclass": "dataclass",
    "pydantic.dataclasses.dataclass": "pydantic-dataclass",
    "attr.s": "attrs",
    "attr.attrs": "attrs",
    "attr.define": "attrs",
    "attr.frozen": "attrs",
    "attr.mutable": "attrs",
    "attr.dataclass": "attrs",
    "attrs.define": "attrs",
    "attrs.frozen": "attrs",
    "attrs.mutable": "attrs",
}
FIELD_BASES = {
    "pydantic.BaseModel": "pydantic-model",
    "pydantic.main.BaseModel": "pydantic-model",
    "msgspec.Struct": "msgspec",
    "typing.NamedTuple": "namedtuple",
    "typing_extensions.NamedTuple": "namedtuple",
    "typing.TypedDict": "typeddict",
    "typing_extensions.TypedDict": "typeddict",
}
TRANSFORM = {"typing.dataclass_transform", "typing_extensions.dataclass_transform"}
HF_STRICT = {"huggingface_hub.dataclasses.strict"}
IGNORED_BASES = {
    "object",
    "typing.Generic",
    "typing.Protocol",
    "abc.ABC",
    "typing_extensions.Protocol",
    "builtins.object",
}
FIELD_FUNCS = ("field", "Field", "ib", "attrib", "PrivateAttr")


def unparse(node: ast.AST | None, src: Source | None = None) -> str | None:
    if node is None:
        return None
    return src.text(node) if src is not None else ast.unparse(node)


def parameters(args: ast.arguments, src: Source | None = None) -> list[dict[str, Any]]:
    """Every parameter with its kind, default and annotation, as written in the source."""
    out: list[dict[str, Any]] = []
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    defaults += list(args.defaults)
    for i, a in enumerate(positional):
        kind = POS_ONLY if i < len(args.posonlyargs) else POS_OR_KW
        out.append(_param(a.arg, kind, defaults[i], a.annotation, src))
    if args.vararg:
        out.append(_param(args.vararg.arg, VAR_POS, None, args.vararg.annotation, src))
    for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        out.append(_param(a.arg, KW_ONLY, d, a.annotation, src))
    if args.kwarg:
        out.append(_param(args.kwarg.arg, VAR_KW, None, args.kwarg.annotation, src))
    return out


def _param(
    name: str, kind: str, default: ast.AST | None, ann: ast.AST | None, src: Source | None = None
) -> dict:
    return {
        "name": name,
        "kind": kind,
        "default": unparse(default, src),
        "annotation": unparse(ann, src),
    }


def function_kind(node: ast.FunctionDef | ast.AsyncFunctionDef, in_class: bool) -> str:
    names = [dotted(d).split(".")[-1] for d in node.decorator_list]
    full = [dotted(d) for d in node.decorator_list]
    if "staticmethod" in names:
        return "staticmethod"
    if "classmethod" in names:
        return "classmethod"
    if (
        "property" in names
        or "cached_property" in names
        or any(f.endswith((".setter", ".getter", ".deleter")) for f in full)
    ):
        return "property"
    return "method" if in_class else "function"


def describe_function(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    qualname: str,
    in_class: bool,
    overloads: list[ast.AST] | None = None,
    src: Source | None = None,
) -> dict:
    return {
        "qualname": qualname,
        "kind": function_kind(node, in_class),
        "is_async": isinstance(node, ast.AsyncFunctionDef),
        "line": node.lineno,
        "end_line": node.end_lineno or node.lineno,
        "decorators": [unparse(d, src) for d in node.decorator_list],
        "parameters": parameters(node.args, src),
        "returns": unparse(node.returns, src),
        "overloads": [
            {
                "parameters": parameters(o.args, src),
                "returns": unparse(o.returns, src),
                "line": o.lineno,
            }
            for o in (overloads or [])
            if isinstance(o, (ast.FunctionDef, ast.AsyncFunctionDef))
        ],
        "doc": _doc(node),
    }


def _doc(node: ast.AST) -> str | None:
    try:
        doc = ast.get_docstring(node)  # type: ignore[arg-type]
    except TypeError:
        return None
    return doc.strip().splitlines()[0] if doc and doc.strip() else None


def _is_overload(node: ast.AST) -> bool:
    return any(dotted(d).split(".")[-1] == "overload" for d in getattr(node, "decorator_list", []))


def _body_functions(body: list[ast.stmt]) -> dict[str, tuple[ast.AST, list[ast.AST]]]:
    """name -> (implementation, overload stubs), in body order (the last impl wins, as at run)."""
    out: dict[str, tuple[ast.AST, list[ast.AST]]] = {}
    for st in body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            impl, ovl = out.get(st.name, (None, []))
            if _is_overload(st):
                out[st.name] = (impl or st, [*ovl, st])
            else:
                out[st.name] = (st, ovl)
    return out


def module_overloads(mod: ModuleSummary, name: str) -> list[ast.AST]:
    return _body_functions(mod.tree.body).get(name, (None, []))[1]


class ClassDescriber:
    """Describes classes, resolving bases and decorators through the shared Index."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self._flavour_cache: dict[tuple[str, str], tuple[str, dict] | None] = {}

    # -- resolution helpers ---------------------------------------------------------------
    def _resolve_class(self, module: str, expr: str) -> tuple[ModuleSummary, ast.ClassDef] | None:
        full = self.index.resolve_dotted(module, expr)
        owner, _, leaf = full.rpartition(".")
        if not owner or self.index.finder.find(owner.split(".")[0]) is None:
            return None
        got = self.index.resolve(owner, leaf)
        if got is not None and isinstance(got.node, ast.ClassDef):
            return got.module, got.node
        return None

    def _is_transform(self, module: str, expr: str) -> dict | None:
        """The ``dataclass_transform(...)`` options if ``expr`` names a decorated function."""
        full = self.index.resolve_dotted(module, expr)
        owner, _, leaf = full.rpartition(".")
        if not owner or self.index.finder.find(owner.split(".")[0]) is None:
            return None
        got = self.index.resolve(owner, leaf)
        if got is None or got.node is None:
            return None
        for d in getattr(got.node, "decorator_list", []):
            if self.index.resolve_dotted(got.module.name, dotted(d)) in TRANSFORM:
                opts = _call_kwargs(d)
                for n in ast.walk(got.node):  # vLLM's @config: a pydantic dataclass inside
                    if isinstance(n, ast.Call) and (
                        self.index.resolve_dotted(got.module.name, dotted(n.func))
                        == "pydantic.dataclasses.dataclass"
                    ):
                        opts["wrapper"] = "pydantic"
                        break
                return opts
        return None

    def flavour(self, mod: ModuleSummary, cls: ast.ClassDef) -> tuple[str, dict] | None:
        """Which field-synthesising rule makes this class's ``__init__``, with its options."""
        key = (mod.name, cls.name)
        if key in self._flavour_cache:
            return self._flavour_cache[key]
        self._flavour_cache[key] = None  # cycles
        found: tuple[str, dict] | None = None
        weak: tuple[str, dict] | None = None  # huggingface_hub's @strict: fields, if nothing else
        for d in cls.decorator_list:
            full = self.index.resolve_dotted(mod.name, dotted(d))
            if full in HF_STRICT:
                weak = ("hf-strict", _call_kwargs(d))
                continue
            if full in DATACLASS_DECORATORS:
                found = (DATACLASS_DECORATORS[full], _call_kwargs(d))
                break
            opts = self._is_transform(mod.name, dotted(d))
            if opts is not None:
                kw = _call_kwargs(d)
                if opts.get("kw_only_default") == "True" and "kw_only" not in kw:
                    kw["kw_only"] = "True"
                if opts.get("wrapper"):
                    kw["wrapper"] = opts["wrapper"]
                found = ("dataclass_transform:" + full, kw)
                break
        if found is None:
            for b in cls.bases:
                full = self.index.resolve_dotted(mod.name, dotted(b))
                if full in FIELD_BASES:
                    found = (
                        FIELD_BASES[full],
                        {k.arg: ast.unparse(k.value) for k in cls.keywords if k.arg},
                    )
                    break
                base = self._resolve_class(mod.name, dotted(b))
                if base is None:
                    continue
                transform = self._base_transform(base[0], base[1])
                if transform is not None:  # PEP 681: a transform base makes its subclasses
                    kw = {"inherit": "True"}
                    if transform.get("kw_only_default") == "True":
                        kw["kw_only"] = "True"
                    found = ("dataclass_transform:" + full, kw)
                    break
                inherited = self.flavour(*base)
                if inherited is not None and (
                    inherited[1].get("inherit") == "True"
                    or not inherited[0].startswith(("dataclass", "attrs", "hf-strict"))
                ):
                    found = inherited  # model/struct/transform-by-base rules inherit
                    break
        if found is None:
            found = weak
        self._flavour_cache[key] = found
        return found

    def _base_transform(self, mod: ModuleSummary, cls: ast.ClassDef) -> dict | None:
        """The ``dataclass_transform(...)`` options when the class (or its metaclass) is
        decorated with it: PEP 681 then makes every subclass dataclass-like."""
        for d in cls.decorator_list:
            if self.index.resolve_dotted(mod.name, dotted(d)) in TRANSFORM:
                return _call_kwargs(d)
        for k in cls.keywords:
            if k.arg == "metaclass":
                meta = self._resolve_class(mod.name, dotted(k.value))
                for d in meta[1].decorator_list if meta else []:
                    if self.index.resolve_dotted(meta[0].name, dotted(d)) in TRANSFORM:  # type: ignore[index]
                        return _call_kwargs(d)
        return None

    def pydantic_extra(
        self, mod: ModuleSummary, cls: ast.ClassDef, opts: dict, depth: int = 0
    ) -> str:
        """``extra=`` from the class's config, else the nearest base's (config inherits)."""
        own = _pydantic_extra(cls, opts)
        if own is not None:
            return own
        if depth < 8:
            for b in cls.bases:
                base = self._resolve_class(mod.name, dotted(b))
                if base is not None and self.flavour(*base) is not None:
                    got = self.pydantic_extra(base[0], base[1], {}, depth + 1)
                    if got != "ignore":
                        return got
        return "ignore"

    def _unread_base(self, mod: ModuleSummary, cls: ast.ClassDef, depth: int = 0) -> bool:
        """A base outside the import path (``transformers.TrainingArguments`` under trl's
        configs when transformers is absent) somewhere up the field-bearing bases."""
        for b in cls.bases:
            full = self.index.resolve_dotted(mod.name, dotted(b))
            if full in IGNORED_BASES or full in FIELD_BASES or full.startswith("typing."):
                continue
            base = self._resolve_class(mod.name, dotted(b))
            if base is None:
                return True
            if depth < 8 and self._unread_base(base[0], base[1], depth + 1):
                return True
        return False

    def accepts_kwargs(self, mod: ModuleSummary, cls: ast.ClassDef, depth: int = 0) -> bool:
        """huggingface_hub's ``@strict(accept_kwargs=True)`` here or on a base: unknown
        keywords are kept as attributes, not rejected (transformers 5 configs)."""
        for d in cls.decorator_list:
            if self.index.resolve_dotted(mod.name, dotted(d)) in HF_STRICT and (
                _call_kwargs(d).get("accept_kwargs") == "True"
            ):
                return True
        if depth < 8:
            for b in cls.bases:
                base = self._resolve_class(mod.name, dotted(b))
                if base is not None and self.accepts_kwargs(base[0], base[1], depth + 1):
                    return True
        return False

    # -- fields ---------------------------------------------------------------------------
    def fields(
        self, mod: ModuleSummary, cls: ast.ClassDef, flavour: str, opts: dict, depth: int = 0
    ) -> list[dict]:
        """Constructor parameters from annotated class attributes, bases' fields first."""
        inherited: list[dict] = []
        if depth < 8:
            for b in reversed(cls.bases):
                base = self._resolve_class(mod.name, dotted(b))
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
                    default, init, fko, alias = _field_call(st.value, mod.src)
                    if fko is not None:
                        field_kw_only = fko
                    if alias and flavour == "pydantic-model":
                        name = alias
            if flavour == "typeddict":
                default = key_default(cls, st.annotation)  # total=, Required/NotRequired
            if not init:
                inherited = [x for x in inherited if x["name"] != name]
                continue
            p = _param(name, KW_ONLY if field_kw_only else POS_OR_KW, None, st.annotation, mod.src)
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
        funcs = _body_functions(cls.body)
        qual = f"{mod.name}.{cls.name}"
        flav = self.flavour(mod, cls)
        for meth in ("__new__", "__init__"):  # inspect's order: a class's own __new__ first
            if meth in funcs:
                impl, ovl = funcs[meth]
                assert isinstance(impl, (ast.FunctionDef, ast.AsyncFunctionDef))
                params = parameters(impl.args, mod.src)[1:]
                got = {
                    "via": meth,
                    "from": qual,
                    "line": impl.lineno,
                    "parameters": params,
                    "overloads": [
                        parameters(o.args, mod.src)[1:]  # type: ignore[attr-defined]
                        for o in ovl
                        if o is not impl or _is_overload(o)
                    ],
                    "extra": "forbid",
                }
                if meth == "__new__" and "__init__" in funcs:
                    # a call must bind to both; ``__new__(cls, *a, **k)`` alone says nothing
                    init = funcs["__init__"][0]
                    got["init_parameters"] = parameters(init.args, mod.src)[1:]  # type: ignore[attr-defined]
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
                    params.append(_param("extra_data", VAR_KW, None, None))
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
        resolved = [self.index.resolve_dotted(mod.name, dotted(b)) for b in cls.bases]
        enum_base = next((full for full in resolved if full in ENUMS), None)
        if enum_base is not None:  # ``class Kind(str, Enum)``: the mixin does not decide
            return enum_ctor(enum_base, cls)  # as this Python signs it (_stdsigs)
        if depth < 8:
            for b in cls.bases:
                full = self.index.resolve_dotted(mod.name, dotted(b))
                if full in PROTOCOLS:  # typing gives protocols a catch-all __init__
                    return stdlib_ctor("protocol", full, _VARIADIC)
                if full in IGNORED_BASES or full.startswith("typing.Generic"):
                    continue
                base = self._resolve_class(mod.name, dotted(b))
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
                if got["via"] == "enum":  # members (or none) are this class's own
                    return {**enum_ctor(got["from"], cls), "inherited": True}
                if got["via"] != "object":
                    return {**got, "inherited": True}
        return {
            "via": "object",
            "from": "object",
            "parameters": [],
            "overloads": [],
            "extra": "forbid",
        }

    def describe(
        self, mod: ModuleSummary, cls: ast.ClassDef, qualname: str, attributes: bool = True
    ) -> dict:
        funcs = _body_functions(cls.body)
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
            "doc": _doc(cls),
        }


PROTOCOLS = {"typing.Protocol", "typing_extensions.Protocol"}
_VARIADIC = [_param("args", VAR_POS, None, None), _param("kwargs", VAR_KW, None, None)]


SYNTHESISED = ("dataclass", "attrs", "dataclass_transform:", "hf-strict", "pydantic-dataclass")


def _made_init(ctor: dict, qualname: str, line: int) -> dict | None:
    """The ``__init__`` a decorator or base writes into the class itself (not inherited)."""
    if ctor.get("inherited") or ctor.get("parameters") is None:
        return None
    via = ctor.get("via") or ""
    this = _param("self", POS_OR_KW, None, None)
    if via == "pydantic-dataclass" or ctor.get("wrapper") == "pydantic":  # pydantic's wrapper
        params = [_param("__dataclass_self__", POS_OR_KW, None, None), *_VARIADIC]
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
            for node in ast.walk(st):
                if (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.ctx, ast.Store)
                    and (isinstance(node.value, ast.Name) and node.value.id == "self")
                ):
                    names.add(node.attr)
    return sorted(names)


def _call_kwargs(node: ast.AST) -> dict[str, str]:
    if not isinstance(node, ast.Call):
        return {}
    return {k.arg: ast.unparse(k.value) for k in node.keywords if k.arg}


def _field_call(
    call: ast.Call, src: Source | None = None
) -> tuple[str | None, bool, bool | None, str | None]:
    """(default or None if required, init, kw_only, alias) of ``field(...)``/``Field(...)``."""
    kw = {k.arg: k.value for k in call.keywords if k.arg}
    default: str | None = None
    if call.args:
        a0 = call.args[0]
        is_required = isinstance(a0, ast.Constant) and a0.value is Ellipsis
        default = None if is_required else unparse(a0, src)
    for key in ("default", "default_factory", "factory"):
        if key in kw:
            v = kw[key]
            if not (isinstance(v, ast.Constant) and v.value is Ellipsis):
                default = unparse(v, src)
    init = not (isinstance(kw.get("init"), ast.Constant) and kw["init"].value is False)  # type: ignore[union-attr]
    if dotted(call.func).split(".")[-1] == "PrivateAttr":
        init = False
    ko = kw.get("kw_only")
    kw_only = ko.value if isinstance(ko, ast.Constant) and isinstance(ko.value, bool) else None
    al = kw.get("alias")
    alias = al.value if isinstance(al, ast.Constant) and isinstance(al.value, str) else None
    return default, init, kw_only, alias


def _pydantic_extra(cls: ast.ClassDef, opts: dict) -> str | None:
    """pydantic ignores unknown kwargs unless the config says ``extra="forbid"``."""
    texts = [
        opts.get("config", ""),
        *(ast.unparse(k.value) for k in cls.keywords if k.arg == "extra"),
    ]
    for st in cls.body:
        if isinstance(st, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "model_config" for t in st.targets
        ):
            texts.append(ast.unparse(st.value))
        if isinstance(st, ast.ClassDef) and st.name == "Config":
            texts.append(ast.unparse(st))
    joined = " ".join(texts)
    for mode in ("forbid", "allow", "ignore"):
        if f"'{mode}'" in joined or f'"{mode}"' in joined or f"Extra.{mode}" in joined:
            return mode
    return None  # not said here: inherited, else pydantic's default ("ignore")
