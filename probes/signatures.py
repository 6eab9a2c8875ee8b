"""Probe: signatures and locations of a module's functions and classes, without importing.

args: {"module": "vllm.config", "qualname": "SchedulerConfig" | null, "source": bool,
       "paths": [import roots] | null (null: this interpreter's sys.path)}
"""

from __future__ import annotations

import ast
import difflib
import os
import sys
from collections.abc import Callable
from typing import Any

from probes._astindex import Hop, Index, ModuleSummary, Resolved
from probes._bound import wrapped
from probes._describe import ClassDescriber, describe_function, module_overloads
from probes._finder import Dists, Finder, ProbeFailure, default_paths
from probes._resolvable import compiled, in_stubs, missing, stub_members, unreadable
from probes._stdsigs import stdlib_class
from probes._typeddict import TYPEDDICT_BASES, flavour_names


def run(args: dict[str, Any], warn: Callable[[str], None]) -> dict[str, Any]:
    finder = Finder(args.get("paths") or default_paths())
    index = Index(finder)
    return Probe(index, warn).describe(
        args["module"], args.get("qualname"), bool(args.get("source"))
    )


class Probe:
    def __init__(self, index: Index, warn: Callable[[str], None]) -> None:
        self.index = index
        self.dists = Dists(index.finder)
        self.classes = ClassDescriber(index)
        self.warn = warn

    def _owner(self, mod: ModuleSummary) -> dict[str, Any]:
        top = mod.name.split(".")[0]
        got = self.dists.owner(mod.loc.root, top)
        return {"dist": got[0] if got else None, "version": got[1] if got else None}

    def _module_info(self, mod: ModuleSummary) -> dict[str, Any]:
        return {
            "module": mod.name,
            "file": self.index.rel(mod.loc.file) if mod.loc.file else None,
            "root": mod.loc.root,
            "is_package": mod.loc.is_package,
            **self._owner(mod),
        }

    def _symbol(
        self, mod: ModuleSummary, node: ast.AST, qualname: str, attributes: bool = True
    ) -> dict[str, Any]:
        if isinstance(node, ast.ClassDef):
            d = self.classes.describe(mod, node, qualname, attributes)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            in_class = "." in qualname
            ovl = [] if in_class else module_overloads(mod, node.name)
            d = describe_function(node, qualname, in_class, ovl, mod.src)
            if node.decorator_list:  # ``@functools.wraps(f)``: f's signature (_bound)
                d = wrapped(self.classes, mod, node, d)
        else:
            d = {
                "qualname": qualname,
                "kind": "variable",
                "is_async": False,
                "line": getattr(node, "lineno", 1),
                "end_line": getattr(node, "end_lineno", None) or getattr(node, "lineno", 1),
                "decorators": [],
                "parameters": None,
                "returns": None,
                "overloads": [],
                "annotation": mod.src.text(node.annotation)
                if isinstance(node, ast.AnnAssign)
                else None,
                "doc": None,
            }
        d["module"] = mod.name
        d["file"] = self.index.rel(mod.loc.file)
        d.update(self._owner(mod))
        return d

    def describe(self, module: str, qualname: str | None, source: bool) -> dict[str, Any]:
        mod = self.index.module(module)
        if mod is None:
            raise unreadable(self.index.finder, module)
        out: dict[str, Any] = {**self._module_info(mod), "python": _python()}
        if not qualname:
            out["symbols"] = self._listing(mod)
            out["reexports"] = self._reexports(mod)
            out["chain"] = []
            return out
        try:
            node, owner_mod, final_qual = self._resolve_qualname(mod, qualname)
        except ProbeFailure as exc:  # only a stub declares it: describe the stub's def
            got = in_stubs(self.index, mod, qualname) if exc.details.get("stub") else None
            if got is None or "." in qualname:
                raise
            (owner_mod, node), final_qual, self._chain = got, qualname, []
        if node is None:  # the qualname named a submodule: describe it as a module
            return {
                **self.describe(owner_mod.name, None, False),
                "chain": [h.to_dict() for h in self._chain],
            }
        sym = self._symbol(owner_mod, node, final_qual)
        out["symbols"] = [sym]
        out["chain"] = [h.to_dict() for h in self._chain]
        out["defined_in"] = self._module_info(owner_mod)
        if source:
            out["source"] = self._source(owner_mod, node)
        return out

    def _resolve_qualname(
        self, mod: ModuleSummary, qualname: str
    ) -> tuple[ast.AST | None, ModuleSummary, str]:
        parts = qualname.split(".")
        got: Resolved | None = self.index.resolve(mod.name, parts[0])
        if got is None:
            raise self._missing(mod, parts[0])
        self._chain: list[Hop] = got.chain
        cur_mod, node, qual = got.module, got.node, got.name
        for part in parts[1:]:
            if node is None:  # a module: resolve the next name inside it
                nxt = self.index.resolve(cur_mod.name, part)
                if nxt is None:
                    raise self._missing(cur_mod, part)
                self._chain += nxt.chain
                cur_mod, node, qual = nxt.module, nxt.node, nxt.name
                continue
            if not isinstance(node, ast.ClassDef):
                raise ProbeFailure(
                    "symbol-not-found",
                    f"{cur_mod.name}:{qual} is not a class; it has no {part!r}",
                    {"module": cur_mod.name, "suggestions": []},
                )
            found = self._member(cur_mod, node, part)
            if found is None:
                names = [getattr(s, "name", "") for s in node.body]
                raise ProbeFailure(
                    "symbol-not-found",
                    f"{cur_mod.name}:{qual} has no member {part!r}",
                    {
                        "module": cur_mod.name,
                        "suggestions": [
                            f"{qual}.{n}"
                            for n in difflib.get_close_matches(part, [n for n in names if n])
                        ],
                    },
                )
            owner_mod, owner_cls, member = found
            if owner_cls is not node:
                self._chain.append(
                    Hop(
                        owner_mod.name,
                        f"{owner_cls.name}.{part}",
                        self.index.rel(owner_mod.loc.file),
                        member.lineno,
                        "inherited",
                    )
                )
            cur_mod, node = owner_mod, member
            qual = f"{owner_cls.name}.{part}" if owner_cls is not None else part
        return node, cur_mod, qual

    def _member(
        self, mod: ModuleSummary, cls: ast.ClassDef, name: str, depth: int = 0
    ) -> tuple[ModuleSummary, ast.ClassDef, ast.stmt] | None:
        """Find ``name`` in a class body or, like the MRO, in its bases."""
        for st in reversed(cls.body):
            if (
                isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and st.name == name
                and not _overload(st)
            ):
                return mod, cls, st
            if isinstance(st, (ast.Assign, ast.AnnAssign)):
                targets = st.targets if isinstance(st, ast.Assign) else [st.target]
                if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                    return mod, cls, st
        if depth < 10:
            from probes._astindex import dotted

            for b in cls.bases:
                base = self.classes._resolve_class(mod.name, dotted(b))
                if base is not None:
                    got = self._member(base[0], base[1], name, depth + 1)
                    if got is not None:
                        return got
        return None

    def _missing(self, mod: ModuleSummary, name: str) -> ProbeFailure:
        return missing(self.index, mod, name)

    def _listing(self, mod: ModuleSummary) -> list[dict[str, Any]]:
        from probes._bound import listing  # defs, classes, and second names of them

        return listing(self, mod)

    def _reexports(self, mod: ModuleSummary) -> list[dict[str, Any]]:
        """Public names this module only passes through (``__all__``, imports, lazy tables)."""
        names = mod.all_names if mod.all_names is not None else []
        names = list(names) + [n for n in mod.lazy if n not in names]
        out = []
        for n in names:
            if n in mod.defs and n not in mod.imports:
                continue
            src = mod.imports.get(n) or mod.lazy.get(n)
            if src is None:
                continue
            out.append(
                {
                    "name": n,
                    "target": f"{src[0]}:{src[1]}" if src[1] else src[0],
                    "line": src[2],
                    "lazy": n in mod.lazy,
                }
            )
        return out

    def _source(self, mod: ModuleSummary, node: ast.AST) -> dict[str, Any]:
        start = min(
            [getattr(node, "lineno", 1)] + [d.lineno for d in getattr(node, "decorator_list", [])]
        )
        end = getattr(node, "end_lineno", None) or start
        return {
            "file": self.index.rel(mod.loc.file),
            "start": start,
            "end": end,
            "text": "\n".join(mod.lines[start - 1 : end]),
        }


def _overload(node: ast.AST) -> bool:
    from probes._astindex import dotted

    return any(dotted(d).split(".")[-1] == "overload" for d in getattr(node, "decorator_list", []))


def _python() -> dict[str, Any]:
    return {
        "executable": sys.executable,
        "version": ".".join(map(str, sys.version_info[:3])),
        "prefix": sys.prefix,
        "cwd": os.getcwd(),
    }


class Lookup(Probe):
    """Resolve many ``module:qualname`` references in one run (``harness check``/``diff``)."""

    #: ``harness check`` also wants, for these ``module:qualname`` keys only (they cost a
    #: walk each), a function's return paths and a class's ``__post_init__`` resolutions.
    returns_for: frozenset[str] = frozenset()
    resolve_for: frozenset[str] = frozenset()
    forwards_for: frozenset[str] = frozenset()

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
            from probes._returns import return_paths  # shipped with the callsites probe

            sym["return_paths"] = return_paths(node)
        if key in self.resolve_for and isinstance(node, ast.ClassDef):
            sym["resolutions"] = resolutions(node)
        if key in self.forwards_for:
            fw = self._forwards_of(owner_mod, node, final_qual)
            if fw is not None:
                sym["forwards"] = fw
        if isinstance(node, ast.ClassDef):
            names, opaque = self.mro_names(owner_mod, node)
            sym["mro_members"] = sorted(names)
            sym["mro_complete"] = not opaque
            sym["mro_opaque"] = opaque
        return {"found": True, "symbol": sym, "chain": chain}

    def _forwards_of(self, mod: ModuleSummary, node: ast.AST, qual: str) -> dict[str, Any] | None:
        """Where a called function or constructor passes its ``**kwargs`` on (see _forwards)."""
        from probes._forwards import Forwards

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
        ``__getattr__``, or ``setattr(self, key, ...)`` over the constructor's kwargs)."""
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
        from probes._astindex import dotted
        from probes._describe import IGNORED_BASES, class_attributes

        names = set(class_attributes(cls)) | stub_members(self.index, mod, cls.name)
        opaque: list[dict[str, str]] = []
        where = f"{mod.name}.{cls.name}"
        for st in cls.body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(st.name)
                if st.name in ("__getattr__", "__getattribute__"):
                    opaque.append({"why": "getattr", "name": where})
                elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) and _sets_any(
                    st, mod.lines
                ):
                    opaque.append({"why": "open", "name": f"{where}.{st.name}"})
        names.update(flavour_names(self.classes.flavour(mod, cls)))  # model_dump, dict's, ...
        for b in cls.bases:
            full = self.index.resolve_dotted(mod.name, dotted(b))
            if full in IGNORED_BASES | TYPEDDICT_BASES or full.startswith(("typing.", "abc.")):
                continue
            base = self.classes._resolve_class(mod.name, dotted(b))
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


def _sets_any(fn: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> bool:
    """``setattr(self, name, ...)`` with a computed name, or ``self.__dict__.update(...)``:
    the instance takes attributes from data (transformers' ``PretrainedConfig(**kwargs)``)."""
    text = "\n".join(lines[fn.lineno - 1 : fn.end_lineno or fn.lineno])
    if "setattr" not in text and "__dict__" not in text:
        return False
    for n in ast.walk(fn):
        if not isinstance(n, ast.Call):
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
            return True
        if (
            isinstance(f, ast.Attribute)
            and f.attr == "update"
            and isinstance(f.value, ast.Attribute)
            and f.value.attr == "__dict__"
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
        for n in ast.walk(st):
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
