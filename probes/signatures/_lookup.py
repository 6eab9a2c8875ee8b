"""Many ``module:qualname`` references resolved in one run (``harness check``, ``diff``), each
with what the checker reads beyond a signature: every member name through the MRO (and why
that list may be incomplete), and, where asked, return paths, ``**kwargs`` forwarding and
the literals ``__post_init__`` and validators assign.

:class:`Lookup` extends the ``signatures`` probe's :class:`probes.signatures.signatures.Probe`;
it never raises for a miss, it says why the reference is missing.
"""

from __future__ import annotations

import ast
from typing import Any

from probes._finder import ProbeFailure
from probes._walk import walk
from probes.signatures._dynamic_names import literal_names, serves_items
from probes.signatures._resolvable import compiled, in_stubs, stub_members
from probes.signatures._stdsigs import stdlib_class
from probes.signatures._syntax import ModuleSummary
from probes.signatures._typeddict import TYPEDDICT_BASES, flavour_names
from probes.signatures.signatures import Probe


class Lookup(Probe):
    """Resolve many ``module:qualname`` references in one run (``harness check``/``diff``)."""

    #: ``harness check`` also wants, for these ``module:qualname`` keys only (they cost a
    #: walk each), a function's return paths and a class's ``__post_init__`` resolutions.
    returns_for: frozenset[str] = frozenset()
    resolve_for: frozenset[str] = frozenset()
    forwards_for: frozenset[str] = frozenset()
    #: callee classes a caller class with its own machinery derives from (``_hierarchy``)
    hierarchy_for: frozenset[str] = frozenset()
    #: callee methods a caller class overrides: how the callee itself calls them
    overrides_for: frozenset[str] = frozenset()
    #: callee classes whose dict views (``to_dict()``, ``asdict``) a caller reads keys of
    views_for: frozenset[str] = frozenset()
    #: callee classes a caller class derives from: each MRO method's first body line
    subclassed_for: frozenset[str] = frozenset()

    def ref(self, module: str, qualname: str) -> dict[str, Any]:
        """The referenced symbol, or why it is missing; never raises for a miss."""
        mod = self.index.module(module)
        if mod is None:
            why = compiled(self.index.finder, module)
            if why:
                return {"found": not qualname, "reason": why, "dynamic": True, "opaque": why}
            return {"found": False, "reason": f"no module named {module!r}"}
        if not qualname:
            return {"found": True, "module_only": True, "file": self.index.rel(mod.loc.file)}
        try:
            node, owner_mod, final_qual = self._resolve_qualname(mod, qualname)
        except ProbeFailure as exc:
            if exc.details.get("stub"):
                stubbed = in_stubs(self.index, mod, qualname) if "." not in qualname else None
                if stubbed is None:  # declared, but not as a def or class we can describe
                    return {"found": True, "stub": exc.details["stub"], "chain": []}
                (owner_mod, node), final_qual, self._chain = stubbed, qualname, []
            else:
                if qualname.endswith((".__init__", ".__new__")):
                    got = self._synthesised_init(mod, qualname)
                    if got is not None:
                        return got
                return {
                    "found": False,
                    "reason": str(exc),
                    "suggestions": exc.details.get("suggestions") or [],
                    "dynamic": bool(exc.details.get("dynamic")),
                    "opaque": exc.details.get("opaque") or "",
                    "passed_over": exc.details.get("passed_over") or "",
                }
        chain = [h.to_dict() for h in self._chain]
        if node is None:
            return {
                "found": True,
                "module_only": True,
                "module": owner_mod.name,
                "file": self.index.rel(owner_mod.loc.file),
                "chain": chain,
            }
        # the checker reads a class's members through mro_members: skip the attribute walk
        sym = self._symbol(owner_mod, node, final_qual, attributes=False)
        key = f"{module}:{qualname}"
        if key in self.returns_for and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            from probes.callsites._returns import return_paths  # shipped with the callsites probe

            sym["return_paths"] = return_paths(node)
        if key in self.resolve_for and isinstance(node, ast.ClassDef):
            sym["resolutions"] = resolutions(node)
        if key in self.forwards_for:
            fw = self._forwards_of(owner_mod, node, final_qual)
            if fw is not None:
                sym["forwards"] = fw
        if key in self.overrides_for and "." in qualname:
            sym["self_calls"] = self._self_calls(mod, qualname)
        if key in self.hierarchy_for and isinstance(node, ast.ClassDef):
            from probes.callsites._hierarchy import construction  # shipped with the callsites probe

            sym["construction"] = construction(self.index, owner_mod, node)
        if key in self.views_for and isinstance(node, ast.ClassDef):
            from probes.signatures._views import class_views

            sym["views"] = class_views(self, owner_mod, node)
        if isinstance(node, ast.ClassDef):
            names, opaque = self.mro_names(owner_mod, node)
            sym["mro_members"] = sorted(names)
            sym["mro_complete"] = not opaque
            sym["mro_opaque"] = opaque
            if key in self.subclassed_for:
                from probes.signatures._inherited import method_heads

                sym["heads"] = method_heads(self, owner_mod, node)
                from probes.signatures._literals import class_literals

                rel = self.index.rel(owner_mod.loc.file)
                sym["literals"] = class_literals(owner_mod.tree, node, rel)
        return {"found": True, "symbol": sym, "chain": chain}

    def _self_calls(self, mod: ModuleSummary, qualname: str) -> list[dict[str, Any]]:
        """``self.meth(...)`` calls in the class ``qualname`` names the method of (and its
        bases): how the callee calls the method a caller overrides."""
        from probes.callsites._hierarchy import self_calls_of

        owner, _, name = qualname.rpartition(".")
        try:
            node, owner_mod, _ = self._resolve_qualname(mod, owner)
        except ProbeFailure:
            return []
        if not isinstance(node, ast.ClassDef):
            return []
        return self_calls_of(self.index, owner_mod, node).get(name, [])

    def _forwards_of(self, mod: ModuleSummary, node: ast.AST, qual: str) -> dict[str, Any] | None:
        """Where a called function or constructor passes its ``**kwargs`` on (see _forwards)."""
        from probes.callsites._forwards import Forwards

        fw = Forwards(self)
        if isinstance(node, ast.ClassDef):
            init = fw._init_of(self.classes.constructor(mod, node))
            return None if init is None else fw.of_function(*init)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        owner = None
        if "." in qual:
            got = self.index.resolve(mod.name, qual.split(".")[0])
            if got is not None and isinstance(got.node, ast.ClassDef):
                owner = got.node
        return fw.of_function(mod, node, owner)

    def _synthesised_init(self, mod: ModuleSummary, qualname: str) -> dict[str, Any] | None:
        """``Cls.__init__`` of a class that writes none (a dataclass, or object's): its
        constructor's parameters after ``self`` -- every class has an ``__init__``."""
        owner, _, dunder = qualname.rpartition(".")
        try:
            node, owner_mod, final_qual = self._resolve_qualname(mod, owner)
        except ProbeFailure:
            return None
        if not isinstance(node, ast.ClassDef):
            return None
        cls = self._symbol(owner_mod, node, final_qual, attributes=False)
        if cls.get("parameters") is None:
            return None
        this = {
            "name": "self",
            "kind": "positional-or-keyword",
            "default": None,
            "annotation": None,
        }
        sym = {
            **{k: cls.get(k) for k in ("module", "file", "line", "end_line", "dist", "version")},
            "qualname": f"{final_qual}.{dunder}",
            "kind": "method",
            "is_async": False,
            "decorators": [],
            "parameters": [this, *cls["parameters"]],
            "returns": None,
            "overloads": [],
            "doc": f"synthesised: constructor via {(cls.get('constructor') or {}).get('via')}",
        }
        return {"found": True, "symbol": sym, "chain": [h.to_dict() for h in self._chain]}

    def mro_names(
        self, mod: ModuleSummary, cls: ast.ClassDef, depth: int = 0
    ) -> tuple[set[str], list[dict[str, str]]]:
        """Every member/attribute name on the class and its bases, and why that list may be
        incomplete: ``{"why": "base", "name": "torch.nn.Module"}`` (a base we cannot read),
        ``{"why": "getattr" | "open", "name": "pkg.Cls"}`` (attributes made at run time:
        ``__getattr__``, or ``setattr(self, key, ...)`` over the constructor's kwargs), or
        ``{"why": "items", ...}`` (a ``__getattr__`` serving only ``self[name]``: data)."""
        memo = self.__dict__.setdefault("_mro_memo", {})
        key = (mod.name, cls.name, cls.lineno)
        if key not in memo:
            memo[key] = ({"__cycle__"}, [])  # a cyclic base reads as known, not opaque
            got = self._mro_names(mod, cls, depth)
            memo[key] = got
        names, opaque = memo[key]
        return set(names) - {"__cycle__"}, list(opaque)

    def _mro_names(
        self, mod: ModuleSummary, cls: ast.ClassDef, depth: int = 0
    ) -> tuple[set[str], list[dict[str, str]]]:
        from probes.signatures._class_flavour import IGNORED_BASES
        from probes.signatures._describe_class import class_attributes
        from probes.signatures._syntax import dotted

        names = set(class_attributes(cls)) | stub_members(self.index, mod, cls.name)
        opaque: list[dict[str, str]] = []
        where = f"{mod.name}.{cls.name}"
        for st in cls.body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(st.name)
                if st.name == "__getattr__" and serves_items(st):
                    opaque.append({"why": "items", "name": where})  # data, not API
                elif st.name in ("__getattr__", "__getattribute__"):
                    opaque.append({"why": "getattr", "name": where})
                elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) and _sets_any(
                    st, mod.lines, cls, names
                ):
                    opaque.append({"why": "open", "name": f"{where}.{st.name}"})
        names.update(flavour_names(self.classes.flavour(mod, cls)))  # model_dump, dict's, ...
        for b in cls.bases:
            full = self.index.resolve_dotted(mod.name, dotted(b))
            if full in IGNORED_BASES | TYPEDDICT_BASES or full.startswith(("typing.", "abc.")):
                continue
            base = self.classes.base_class(mod, b)
            if base is None and full in KNOWN_APIS:
                names.update(KNOWN_APIS[full])  # pydantic's BaseModel: a published API
                continue
            if base is None and _stdlib_names(full) is not None:
                names.update(_stdlib_names(full) or ())  # enum.Enum & co: this Python's own
                continue
            if base is None or depth > 12:
                top = (full or dotted(b)).split(".")[0]
                missing = "" if self.index.finder.find(top) is not None else top
                opaque.append({"why": "base", "name": full or dotted(b), "missing": missing})
                continue
            more, why = self.mro_names(base[0], base[1], depth + 1)
            names |= more
            opaque += [w for w in why if w not in opaque]
        return names, opaque


#: Bases whose members are a published API we can name without reading them.
_PYDANTIC = [
    "model_config",
    "model_fields",
    "model_computed_fields",
    "model_extra",
    "model_fields_set",
    "model_construct",
    "model_copy",
    "model_dump",
    "model_dump_json",
    "model_json_schema",
    "model_parametrized_name",
    "model_post_init",
    "model_rebuild",
    "model_validate",
    "model_validate_json",
    "model_validate_strings",
    "dict",
    "json",
    "parse_obj",
    "parse_raw",
    "parse_file",
    "from_orm",
    "construct",
    "copy",
    "schema",
    "schema_json",
    "validate",
    "update_forward_refs",
    "__fields__",
]
KNOWN_APIS = {"pydantic.BaseModel": _PYDANTIC, "pydantic.main.BaseModel": _PYDANTIC}


def _stdlib_names(full: str) -> list[str] | None:
    """Attribute names of a stdlib class (``enum.Enum``), from the Python running the probe."""
    obj = stdlib_class(full)
    if obj is None:
        return None
    # not dir(): EnumType.__dir__ hides ``name``/``value``; the MRO's dicts have them all
    return sorted({n for c in obj.__mro__ for n in vars(c)})


def _sets_any(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    lines: list[str],
    cls: ast.ClassDef | None = None,
    names: set[str] | None = None,
) -> bool:
    """``setattr(self, name, ...)`` with a computed name, or ``self.__dict__.update(...)``:
    the instance takes attributes from data (transformers' ``PretrainedConfig(**kwargs)``).
    A name looped over literal strings (``for f in self._FIELDS:``, the class's own list)
    makes only those: they join ``names`` (transformers 5's ``TrainingArguments``), and so
    does a name a method of the class is annotated to return as ``Literal[...]``; a name
    checked as known first, or a pickled state restored, makes none (``_guarded``)."""
    text = "\n".join(lines[fn.lineno - 1 : fn.end_lineno or fn.lineno])
    if "setattr" not in text and "__dict__" not in text:
        return False
    from probes.signatures._guarded import RESTORERS, guarded_setattrs
    from probes.signatures._loops import looped_literals

    looped = looped_literals(fn, cls)
    guarded = guarded_setattrs(fn) if "setattr" in text else set()
    for n in walk(fn):
        if not isinstance(n, ast.Call) or id(n) in guarded:
            continue
        f = n.func
        if (
            isinstance(f, ast.Name)
            and f.id == "setattr"
            and len(n.args) >= 2
            and isinstance(n.args[0], ast.Name)
            and n.args[0].id == "self"
            and not isinstance(n.args[1], ast.Constant)
        ):
            if isinstance(n.args[1], ast.Name):
                made = looped.get(n.args[1].id)
            else:  # ``self._get_axis_name(axis)``, annotated ``-> Literal["index", ...]``
                made = literal_names(n.args[1], cls)
            if made is None:
                return True
            if names is not None:
                names.update(made)
        if (
            isinstance(f, ast.Attribute)
            and f.attr == "update"
            and isinstance(f.value, ast.Attribute)
            and f.value.attr == "__dict__"
            and fn.name not in RESTORERS
        ):
            return True
    return False


VALIDATORS = ("model_validator", "field_validator", "validator", "root_validator")


def resolutions(cls: ast.ClassDef) -> list[dict[str, Any]]:
    """Literals that ``__post_init__`` and validators assign to ``self.x`` / ``self.a.x``.

    A field whose default became ``None`` is often resolved there (vLLM's ``VllmConfig``
    sets ``self.scheduler_config.async_scheduling = True``): the default the caller really
    gets.
    """
    out: list[dict[str, Any]] = []
    for st in cls.body:
        if not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        decos = {(d.func if isinstance(d, ast.Call) else d) for d in st.decorator_list}
        named = {getattr(d, "attr", getattr(d, "id", "")) for d in decos}
        if st.name != "__post_init__" and not named & set(VALIDATORS):
            continue
        for n in walk(st):
            if not isinstance(n, ast.Assign) or len(n.targets) != 1:
                continue
            path = []
            t = n.targets[0]
            while isinstance(t, ast.Attribute):
                path.append(t.attr)
                t = t.value
            if not (isinstance(t, ast.Name) and t.id == "self" and 0 < len(path) <= 2):
                continue
            try:
                ast.literal_eval(n.value)
            except (ValueError, TypeError, SyntaxError):
                continue
            out.append(
                {
                    "target": ".".join(reversed(path)),
                    "value": ast.unparse(n.value),
                    "line": n.lineno,
                    "method": st.name,
                }
            )
    return out
