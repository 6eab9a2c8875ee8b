"""Which library rule makes a class's ``__init__`` (its *flavour*), with the rule's options.

A class's constructor is what a caller binds against, and it is often not written anywhere:
dataclasses (with ``InitVar`` and ``field(init=False)``), decorators marked with PEP 681
``dataclass_transform`` (vLLM's ``@config``), pydantic models and dataclasses, attrs,
``msgspec.Struct``, ``NamedTuple``, TypedDict, huggingface_hub's ``@strict``. This module
recognises the rule through bases and decorators (resolved on the shared Index), and reads
``field(...)`` calls and pydantic's ``extra``; :mod:`probes.signatures._describe_class` then
synthesises the constructor the way the library does.
"""

from __future__ import annotations

import ast

from probes._walk import walk
from probes.signatures._astindex import Index
from probes.signatures._describe import unparse
from probes.signatures._factory import made_class
from probes.signatures._syntax import ModuleSummary, Source, dotted

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


class ClassFlavours:
    """Resolves classes' bases and decorators through the shared Index to their flavour."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self._flavour_cache: dict[tuple[str, str], tuple[str, dict] | None] = {}

    def _resolve_class(self, module: str, expr: str) -> tuple[ModuleSummary, ast.ClassDef] | None:
        full = self.index.resolve_dotted(module, expr)
        owner, _, leaf = full.rpartition(".")
        if not owner or self.index.finder.find(owner.split(".")[0]) is None:
            return None
        got = self.index.resolve(owner, leaf)
        if got is not None and isinstance(got.node, ast.ClassDef):
            return got.module, got.node
        if got is not None and isinstance(got.node, ast.Assign):  # ``X = make_class(Base)``
            value = got.node.value
            return made_class(self, got.module, value) if isinstance(value, ast.Call) else None
        return None

    def base_class(
        self, mod: ModuleSummary, base: ast.expr
    ) -> tuple[ModuleSummary, ast.ClassDef] | None:
        """The class a base expression of a class statement in ``mod`` names -- or makes:
        ``class M(as_embedding_model(LlamaForCausalLM))`` (:mod:`probes.signatures._factory`)."""
        if isinstance(base, ast.Call):
            return made_class(self, mod, base)
        return self._resolve_class(mod.name, dotted(base))

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
                for n in walk(got.node):  # vLLM's @config: a pydantic dataclass inside
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
                base = self.base_class(mod, b)
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
                base = self.base_class(mod, b)
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
            base = self.base_class(mod, b)
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
                base = self.base_class(mod, b)
                if base is not None and self.accepts_kwargs(base[0], base[1], depth + 1):
                    return True
        return False


def _call_kwargs(node: ast.AST) -> dict[str, str]:
    if not isinstance(node, ast.Call):
        return {}
    return {k.arg: ast.unparse(k.value) for k in node.keywords if k.arg}


def field_call(
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
