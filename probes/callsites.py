"""Probe: every use a caller dist makes of its callee dists, and what each use refers to.

args: {"caller": "speculators", "callees": ["vllm"] | null, "paths": [...] | null,
       "refs": [["module", "qualname"], ...] | null}

One round trip does it all: the caller's installed files are parsed (never imported), every
import / call / attribute use / subclass of a callee is recorded with its file, line and
argument shape, and every referenced callee symbol is resolved and described on the same
import path. Binding calls to signatures is pure and happens on the controller.

With ``refs`` (and no ``caller``) it only describes those references -- used to read the same
symbols from a baseline version for drift.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import sys
from collections.abc import Callable
from typing import Any

from probes._astindex import Index, dotted, read_source, resolve_relative
from probes._finder import Dists, Finder, ProbeFailure, default_paths, dist_files
from probes._resolvable import compiled, from_import
from probes._uses import (
    annotation_union,
    attributes_set_on,
    early_install_queries,
    line_scopes,
    literal_text,
    result_uses,
    self_attributes,
)
from probes._values import Values
from probes.signatures import Lookup

# A reference is a tuple: ("module", name) | ("symbol", module, qualname) | ("instance", module,
# qualname) -- the last one is "an instance of that class".
Ref = tuple


def run(args: dict[str, Any], warn: Callable[[str], None]) -> dict[str, Any]:
    from probes import _astindex

    _astindex.OVERRIDES.update(args.get("overrides") or {})
    finder = Finder(args.get("paths") or default_paths())
    index = Index(finder)
    lookup = Lookup(index, warn)
    lookup.returns_for = frozenset(args.get("returns_for") or ())
    lookup.resolve_for = frozenset(args.get("resolve_for") or ())
    if not args.get("caller"):
        out: dict[str, Any] = {
            "symbols": {f"{m}:{q}": lookup.ref(m, q) for m, q in args.get("refs") or []}
        }
        if args.get("fits"):  # the classes a patched-in method fitted, read in this version
            out["fits"] = _fits_in(finder, args["fits"])
        return out
    return Scanner(index, lookup, warn).scan(args["caller"], args.get("callees"))


def behaviour_keys(calls: list[dict[str, Any]]) -> tuple[frozenset[str], frozenset[str]]:
    """Symbols whose behaviour a call can notice, as (return paths wanted, resolutions wanted):
    functions whose result it uses with arguments given; what it calls (the classes among
    them) and what receives the result as ``keyword=``."""
    returns: set[str] = set()
    resolve: set[str] = set()
    for c in calls:
        key = f"{c['ref'][1]}:{c['ref'][2]}"
        shape = c["shape"]
        if c.get("result") and (shape["positional"] or shape["keywords"]):
            returns.add(key)
        if not c.get("on_instance"):
            resolve.add(key)
        if c.get("passed_to"):
            resolve.add(c["passed_to"]["symbol"])
    return frozenset(returns), frozenset(resolve)


def _fits_in(finder: Finder, asks: list[dict[str, Any]]) -> dict[str, Any]:
    """``[{"attrs", "files"}]`` -> scan_fits over just those files (relative to the roots)."""
    from probes._fits import scan_fits

    out: dict[str, Any] = {}
    for ask in asks:
        files = []
        for rel in ask.get("files") or []:
            for root in finder.paths:
                path = os.path.join(root, rel)
                if os.path.isfile(path):
                    files.append((path, rel))
                    break
        out.update(scan_fits(files, [ask["attrs"]], bases=False))
    return out


class Scanner:
    def __init__(self, index: Index, lookup: Lookup, warn: Callable[[str], None]) -> None:
        self.index = index
        self.finder = index.finder
        self.lookup = lookup
        self.dists = Dists(index.finder)
        self.warn = warn
        self._is_class: dict[tuple[str, str], bool] = {}
        self._returns: dict[tuple[str, str], Ref | None] = {}
        self.values = Values(self)  # a callee's named values: instances of its classes

    # -- caller files ---------------------------------------------------------------------
    def caller_files(self, dist: str) -> tuple[dict[str, Any], list[tuple[str, str, str]]]:
        """(metadata, [(module, abs path, rel path)]) of the caller dist's Python files."""
        found = dist_files(self.finder, dist)
        if found is None:
            raise ProbeFailure(
                "dist-not-installed",
                f"{dist} is not installed on this import path",
                {
                    "searched": self.finder.paths,
                    "suggestions": self.finder.close_dists(dist),
                    "executable": sys.executable,
                },
            )
        return found

    def default_callees(self, imported_tops: set[str], caller_tops: set[str]) -> list[str]:
        """Top-level packages the caller imports that are installed here as Python source."""
        out = []
        for top in sorted(imported_tops - caller_tops):
            loc = self.finder.find(top)
            if loc is not None and loc.file and not _is_stdlib(loc.root):
                out.append(top)
        return out

    def import_names(self, name: str) -> list[str]:
        """``--against`` takes what a user types: an import name (``huggingface_hub``) or a
        dist name (``huggingface-hub``, ``PyYAML``), mapped through the dist's top_level.txt
        or RECORD to the packages it installs."""
        top = name.split(".")[0]
        if self.finder.find(top) is not None:
            return [top]
        got = self.dists.top_levels(name)
        return [t for t in got if self.finder.find(t) is not None] or [top]

    # -- scan -----------------------------------------------------------------------------
    def scan(self, caller: str, callees: list[str] | None) -> dict[str, Any]:
        meta, files = self.caller_files(caller)
        parsed: list[tuple[str, str, ast.Module, list[str]]] = []
        hashes: dict[str, str] = {}
        imported: set[str] = set()
        for mod, path, rel in files:
            try:
                src = read_source(path)
                tree = ast.parse(src, filename=path)
            except SyntaxError as exc:
                self.warn(f"{rel}:{exc.lineno}: cannot parse: {exc.msg}")
                continue
            except ProbeFailure as exc:
                self.warn(str(exc))
                continue
            hashes[rel] = hashlib.sha256(src.encode("utf-8")).hexdigest()
            parsed.append((mod, rel, tree, src.splitlines()))
            imported |= _imported_tops(mod, rel.endswith("__init__.py"), tree)
        caller_tops = {m.split(".")[0] for m, _, _ in files}
        tops = (
            [t for c in callees for t in self.import_names(c)]
            if callees
            else self.default_callees(imported, caller_tops)
        )
        for top in tops:
            if self.finder.find(top) is None:
                raise ProbeFailure(
                    "dist-not-installed",
                    f"{top} (the callee to check against) is not installed on this import path",
                    {
                        "searched": self.finder.paths,
                        "suggestions": [],
                        "executable": sys.executable,
                    },
                )
        # imported, not the caller's own, not stdlib, and not here: these uses go unchecked
        std = set(getattr(sys, "stdlib_module_names", ()))
        absent = sorted(
            t
            for t in imported - caller_tops - std
            if t not in tops and self.finder.find(t) is None and not t.startswith("_")
        )
        self.callee_tops = set(tops)
        self.uses: dict[str, list[dict[str, Any]]] = {
            "imports": [],
            "calls": [],
            "attributes": [],
            "subclasses": [],
            "installs": [],
        }
        background = self._start_fits(parsed, tops)  # reads the package beside the visits
        for mod, rel, tree, lines in parsed:
            FileVisitor(self, mod, rel, rel.endswith("__init__.py"), lines).run(tree)
        refs = sorted(
            {
                (u["ref"][1], u["ref"][2])
                for kind in self.uses
                for u in self.uses[kind]
                if u.get("ref") and u["ref"][0] != "module"
            }
            | {(b[1], b[2]) for s in self.uses["subclasses"] for b in s["bases"]}
            | {(a["ref"][1], a["attr"]) for a in self.uses["attributes"] if a["on"] == "module"}
            | {
                (b[1], f"{b[2]}.{m['name']}")
                for s in self.uses["subclasses"]
                for b in s["bases"]
                for m in s["methods"]
            }
        )
        refs = sorted(
            set(refs)
            | {(i["target"][1], i["target"][2]) for i in self.uses["installs"] if i["target"]}
        )
        self.lookup.returns_for, self.lookup.resolve_for = behaviour_keys(self.uses["calls"])
        self.lookup.forwards_for = frozenset(
            f"{c['ref'][1]}:{c['ref'][2]}"
            for c in self.uses["calls"]
            if c["shape"]["keywords"] or c["shape"].get("spread_keys")
        )
        symbols = {f"{m}:{q}": self.lookup.ref(m, q) for m, q in refs}
        for key in [k for k, got in symbols.items() if not got.get("found")]:
            module, _, qual = key.partition(":")
            owner = qual.rpartition(".")[0]
            if owner and f"{module}:{owner}" not in symbols:  # is the class opaque?
                symbols[f"{module}:{owner}"] = self.lookup.ref(module, owner)
        fits = background.join() if background is not None else {}
        late = [
            sorted(i["attrs"])
            for i in self.uses["installs"]
            if not i["target"] and i["attrs"] and ",".join(sorted(i["attrs"])) not in fits
        ]
        if late:  # an install the early text pass did not see: search for it now
            from probes._fits import search_packages

            fits.update(search_packages(self._folders(tops), late))
        callee_info = {}
        for top in tops:
            loc = self.finder.find(top)
            owner = self.dists.owner(loc.root, top) if loc else None
            callee_info[top] = {
                "dist": owner[0] if owner else top,
                "version": owner[1] if owner else None,
            }
        return {
            "caller": {
                "dist": meta.get("name") or caller,
                "version": meta.get("version"),
                "requires": meta.get("requires", []),
                "files": hashes,
            },
            "callees": callee_info,
            "absent": absent,
            **self.uses,
            "symbols": symbols,
            "fits": fits,
        }

    def _folders(self, tops: list[str]) -> list[str]:
        out = []
        for top in tops:
            loc = self.finder.find(top)
            if loc is not None and loc.file and loc.is_package:
                out.append(os.path.dirname(loc.file))
        return out

    def _start_fits(self, parsed: list, tops: list[str]) -> Any:
        """Start the package-wide class search as soon as the caller's text shows a
        ``types.MethodType`` install, so it runs while the caller's files are visited."""
        from probes._fits import Background

        queries: list[list[str]] = []
        for _, _, tree, lines in parsed:
            if any("MethodType" in ln for ln in lines):
                queries += early_install_queries(tree)
        unique = sorted({",".join(q): q for q in queries}.values())
        return Background(self._folders(tops), unique) if unique else None

    # -- reference helpers ----------------------------------------------------------------
    def is_callee(self, module: str) -> bool:
        return module.split(".")[0] in self.callee_tops

    def is_module(self, name: str) -> bool:
        return self.finder.find(name) is not None or bool(compiled(self.finder, name))

    def returns_class(self, module: str, qualname: str) -> Ref | None:
        """The callee class a function's return annotation names, if exactly one."""
        key = (module, qualname)
        if key in self._returns:
            return self._returns[key]
        self._returns[key] = None
        mod = self.index.module(module)
        if mod is None:
            return None
        try:  # the definition's node is enough: no need to describe the whole symbol
            fn, owner_mod, _ = self.lookup._resolve_qualname(mod, qualname)
        except ProbeFailure:
            return None
        ann = getattr(fn, "returns", None)
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or ann is None:
            return None
        names = [
            n
            for n in annotation_union(ann)
            if not (isinstance(n, ast.Constant) and n.value is None)
        ]
        if len(names) != 1 or dotted(names[0]).split(".")[-1] in ("Self", "Any"):
            return None
        full = self.index.resolve_dotted(owner_mod.name, dotted(names[0]))
        owner, _, leaf = full.rpartition(".")
        got = None
        if owner and self.is_callee(owner) and self.is_class(owner, leaf):
            got = ("instance", owner, leaf)
        self._returns[key] = got
        return got

    def is_class(self, module: str, qualname: str) -> bool:
        key = (module, qualname)
        if key not in self._is_class:
            got = self.lookup.ref(module, qualname)
            sym = got.get("symbol") or {}
            self._is_class[key] = sym.get("kind") == "class"
        return self._is_class[key]


class FileVisitor:
    """Walks one caller module, tracking what each local name refers to."""

    def __init__(self, scanner: Scanner, module: str, rel: str, is_pkg: bool, lines: list[str]):
        self.s = scanner
        self.module = module
        self.rel = rel
        self.is_pkg = is_pkg
        self.lines = lines
        self.bindings: dict[str, Ref] = {}  # file-wide: imports (any scope)
        # id(call) -> what uses its result; filled per function on its first callee call
        self.results: dict[int, list[dict[str, Any]]] = {}
        self._fn: ast.FunctionDef | ast.AsyncFunctionDef | None = None
        self._fn_done: set[int] = set()
        self._dict_facts: dict[int, Any] = {}  # id(function) -> its DictFacts, when needed

    def src(self, line: int) -> str:
        return self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""

    def site(self, node: ast.AST, scope: str) -> dict[str, Any]:
        line = getattr(node, "lineno", 0)
        return {
            "file": self.rel,
            "line": line,
            "col": getattr(node, "col_offset", 0),
            "source": self.src(line),
            "scope": scope,
        }

    # -- imports --------------------------------------------------------------------------
    def run(self, tree: ast.Module) -> None:
        self.functions = {
            st.name: st
            for st in tree.body
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef))
        }
        # ``X.attr = one_of_our_functions``: the text test that spares most functions a walk
        names = "|".join(map(re.escape, self.functions))
        self._stores_fn = re.compile(rf"\.\w+\s*=\s*(?:{names})\b(?!\s*\()") if names else None
        self.tree = tree
        for node, guard in _walk_imports(tree):
            self._import(node, guard)
        for st in tree.body:
            self._stmt(st, "<module>", {}, None)

    def _import(self, node: ast.Import | ast.ImportFrom, guard: ast.Try | None) -> None:
        guarded = guard is not None
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    self.bindings[a.asname] = ("module", a.name)
                else:
                    self.bindings[a.name.split(".")[0]] = ("module", a.name.split(".")[0])
                if self.s.is_callee(a.name):
                    ok = self.s.is_module(a.name)
                    self.s.uses["imports"].append(
                        {
                            **self.site(node, "<module>"),
                            "kind": "import",
                            "module": a.name,
                            "name": None,
                            "guarded": guarded,
                            "ok": ok,
                            "reason": None if ok else f"no module named {a.name!r}",
                            "ref": ("module", a.name),
                        }
                    )
            return
        mod = resolve_relative(self.module, self.is_pkg, node.level, node.module)
        for a in node.names:
            if a.name == "*":
                continue
            local = a.asname or a.name
            if self.s.is_module(f"{mod}.{a.name}"):
                self.bindings[local] = ("module", f"{mod}.{a.name}")
            else:
                self.bindings[local] = ("symbol", mod, a.name)
            if self.s.is_callee(mod):
                res = from_import(self.s.finder, self.s.lookup, mod, a.name)
                extra: dict[str, Any] = {}
                if guard is not None and not res.get("ok"):
                    extra = self._without(guard, local)
                self.s.uses["imports"].append(
                    {
                        **self.site(node, "<module>"),
                        "kind": "from",
                        "module": mod,
                        "name": a.name,
                        "local": local,
                        "guarded": guarded and not extra.get("reraises"),
                        **res,
                        **extra,
                        "ref": self.bindings[local],
                    }
                )

    def _without(self, guard: ast.Try, local: str) -> dict[str, Any]:
        """The module once this guarded import failed: is ``local`` bound, and where is it
        used unguarded (each a NameError when reached)?"""
        from probes._guards import fallback, unguarded_uses

        fb = fallback(self.tree, guard, local)
        out: dict[str, Any] = {"fallback": fb["shape"], "reraises": fb["reraises"]}
        if not fb["bound"] and not fb["reraises"]:
            scopes = line_scopes(self.tree)
            out["unbound_uses"] = [
                {**self.site(n, scopes.get(n.lineno, "<module>")), "name": local}
                for n in unguarded_uses(self.tree, guard, local, fb["flags"])
            ]
        return out

    # -- statements -----------------------------------------------------------------------
    def _stmt(self, st: ast.stmt, scope: str, local: dict[str, Ref], cls: dict | None) -> None:
        if isinstance(st, ast.ClassDef):
            self._class(st, scope)
            return
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self._function(st, scope, cls)
            return
        # record uses in this statement's expressions, then learn from assignments
        for node in _walk_no_defs(st):
            if isinstance(node, ast.Call):
                self._call(node, scope, local, cls)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                self._attr(node, scope, local, cls)
        if isinstance(st, (ast.Assign, ast.AnnAssign)):
            self._learn(st, local, cls)
        narrowed = self._narrowed(st, local, cls)
        for i, child in enumerate(_child_bodies(st)):
            for sub in child:
                self._stmt(sub, scope, narrowed if i == 0 and narrowed else local, cls)

    def _narrowed(self, st: ast.stmt, local: dict[str, Ref], cls: dict | None) -> dict | None:
        """``if isinstance(x, Cls):``: in that body, ``x`` is a ``Cls``."""
        test = getattr(st, "test", None) if isinstance(st, ast.If) else None
        if not (
            isinstance(test, ast.Call)
            and dotted(test.func) == "isinstance"
            and len(test.args) == 2
            and isinstance(test.args[0], ast.Name)
        ):
            return None
        r = self.ref(test.args[1], local, cls)
        if not (r and r[0] == "symbol" and self.s.is_callee(r[1]) and self.s.is_class(r[1], r[2])):
            return None
        return {**local, test.args[0].id: ("instance", r[1], r[2])}

    def _learn(
        self, st: ast.Assign | ast.AnnAssign, local: dict[str, Ref], cls: dict | None
    ) -> None:
        typ: Ref | None = None
        if isinstance(st, ast.AnnAssign):
            typ = self._annotation_type(st.annotation)
        if typ is None and st.value is not None:
            typ = self._value_type(st.value, local, cls)
        if typ is None:
            return
        targets = st.targets if isinstance(st, ast.Assign) else [st.target]
        for t in targets:
            if isinstance(t, ast.Name):
                local[t.id] = typ
            elif (
                isinstance(t, ast.Attribute)
                and isinstance(t.value, ast.Name)
                and t.value.id == "self"
                and cls is not None
            ):
                cls["attrs"][t.attr] = typ

    def _value_type(self, value: ast.expr, local: dict[str, Ref], cls: dict | None) -> Ref | None:
        """What a value is an instance of: a callee class constructed, the class a callee
        function's return annotation names (``-> Thing``, ``Optional[Thing]``), or a name
        whose type is known (``self.cfg = cfg`` with ``cfg: Config``)."""
        if isinstance(value, ast.Name):
            got = local.get(value.id)
            return got if got and got[0] == "instance" else None
        if isinstance(value, ast.Await):
            value = value.value
        if isinstance(value, ast.Call):
            r = self.ref(value.func, local, cls)
            if r and r[0] == "member":
                r = ("symbol", r[1], f"{r[2]}.{r[3]}")
            if r and r[0] == "symbol" and self.s.is_callee(r[1]):
                if self.s.is_class(r[1], r[2]):
                    return ("instance", r[1], r[2])
                return self.s.returns_class(r[1], r[2])
        return None

    def _annotation_type(self, ann: ast.expr | None) -> Ref | None:
        if ann is None:
            return None
        if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
            try:
                ann = ast.parse(ann.value, mode="eval").body
            except SyntaxError:
                return None
        if isinstance(ann, ast.BinOp):  # X | None
            return self._annotation_type(ann.left) or self._annotation_type(ann.right)
        if isinstance(ann, ast.Subscript) and dotted(ann.value).split(".")[-1] == "Optional":
            return self._annotation_type(ann.slice)
        r = self.ref(ann, {}, None)
        if r and r[0] == "symbol" and self.s.is_callee(r[1]) and self.s.is_class(r[1], r[2]):
            return ("instance", r[1], r[2])
        return None

    def _class(self, node: ast.ClassDef, scope: str) -> None:
        qual = node.name if scope == "<module>" else f"{scope}.{node.name}"
        cls: dict[str, Any] = {"name": qual, "attrs": {}, "dicts": None}
        if "**self." in "\n".join(self.lines[node.lineno - 1 : node.end_lineno or node.lineno]):
            from probes._dicts import class_dicts

            cls["dicts"] = class_dicts(node)
        # learn self.x types from every method first, so use order does not matter
        for st in node.body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                local = self._params_types(st)
                for sub in ast.walk(st):
                    if isinstance(sub, (ast.Assign, ast.AnnAssign)):
                        self._learn(sub, local, cls)
        bases = []
        for b in node.bases:
            r = self.ref(b, {}, None)
            if r and r[0] == "symbol" and self.s.is_callee(r[1]):
                bases.append(r)
        if bases:
            methods = []
            for st in node.body:
                if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    from probes._describe import function_kind, parameters

                    methods.append(
                        {
                            "name": st.name,
                            "line": st.lineno,
                            "kind": function_kind(st, True),
                            "parameters": parameters(st.args),
                        }
                    )
            self.s.uses["subclasses"].append(
                {**self.site(node, scope), "class": qual, "bases": bases, "methods": methods}
            )
        for st in node.body:
            self._stmt(st, qual, {}, cls)

    def _params_types(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, Ref]:
        local: dict[str, Ref] = {}
        args = fn.args
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
            t = self._annotation_type(a.annotation)
            if t is not None:
                local[a.arg] = t
        return local

    def _function(
        self, fn: ast.FunctionDef | ast.AsyncFunctionDef, scope: str, cls: dict | None
    ) -> None:
        qual = fn.name if scope == "<module>" else f"{scope}.{fn.name}"
        for d in fn.decorator_list:
            for node in ast.walk(d):
                if isinstance(node, ast.Call):
                    self._call(node, scope, {}, cls)
        local = self._params_types(fn)
        outer, self._fn = self._fn, fn
        try:
            for st in fn.body:
                self._stmt(st, qual, local, cls)
        finally:
            self._fn = outer
        text = "\n".join(self.lines[fn.lineno - 1 : fn.end_lineno or fn.lineno])
        if "MethodType" in text or (self._stores_fn and self._stores_fn.search(text)):
            self._installs(fn, qual, local, cls)

    # -- functions installed as methods of callee objects -------------------------------
    def _installs(
        self, fn: ast.FunctionDef | ast.AsyncFunctionDef, scope: str, local: dict, cls: dict | None
    ) -> None:
        """``obj.name = types.MethodType(f, obj)`` / ``Cls.name = f`` with ``f`` ours.

        The function then runs with a callee object as ``self``: record every attribute it
        reads there (less those it or this scope sets on the object), and the object's class
        when the source says it (a callee class patched directly, or a known instance).
        """
        for node in ast.walk(fn):
            if not isinstance(node, ast.Assign) or len(node.targets) != 1:
                continue
            target = node.targets[0]
            if not isinstance(target, ast.Attribute):
                continue
            value = node.value
            func_name = None
            if isinstance(value, ast.Call) and dotted(value.func).split(".")[-1] == "MethodType":
                if len(value.args) == 2 and isinstance(value.args[0], ast.Name):
                    func_name = value.args[0].id
            elif isinstance(value, ast.Name):
                func_name = value.id
            func = self.functions.get(func_name or "")
            if func is None or not (func.args.posonlyargs or func.args.args):
                continue
            owner = self.ref(target.value, local, cls)
            exact = None
            if (
                owner
                and owner[0] in ("symbol", "instance")
                and self.s.is_callee(owner[1])
                and self.s.is_class(owner[1], owner[2])
            ):
                exact = ("symbol", owner[1], owner[2])
            if exact is None and isinstance(value, ast.Name):
                continue  # a plain function stored on an instance gets no ``self``
            obj = ast.unparse(target.value)
            set_here = attributes_set_on(fn, obj)
            used = self_attributes(func)
            attrs = sorted(a for a in used if a not in set_here)
            self.s.uses["installs"].append(
                {
                    **self.site(node, scope),
                    "function": func.name,
                    "function_line": func.lineno,
                    "attrs": attrs,
                    "attr_lines": {a: used[a] for a in attrs},
                    "replaces": target.attr,
                    "object": obj,
                    "target": exact,
                }
            )

    # -- expressions ----------------------------------------------------------------------
    def ref(self, expr: ast.AST, local: dict[str, Ref], cls: dict | None) -> Ref | None:
        if isinstance(expr, ast.Name):
            return self.s.values.typed(local.get(expr.id) or self.bindings.get(expr.id))
        if isinstance(expr, ast.Attribute):
            if isinstance(expr.value, ast.Name) and expr.value.id == "self" and cls is not None:
                got = cls["attrs"].get(expr.attr)
                if got is not None:
                    return got
            base = self.ref(expr.value, local, cls)
            if base is None:
                return None
            if base[0] in ("module", "symbol"):  # a submodule, a member, a value's attribute
                return self.s.values.attr(base, expr.attr)
            if base[0] == "instance":
                return ("member", base[1], base[2], expr.attr)
            return None
        if isinstance(expr, ast.Call):
            return self._value_type(expr, local, cls)
        return None

    def _call(self, node: ast.Call, scope: str, local: dict[str, Ref], cls: dict | None) -> None:
        r = self.ref(node.func, local, cls)
        if r is None or r[0] == "module" or not self.s.is_callee(r[1]):
            return
        shape = {
            "positional": sum(1 for a in node.args if not isinstance(a, ast.Starred)),
            "star": any(isinstance(a, ast.Starred) for a in node.args),
            "keywords": [k.arg for k in node.keywords if k.arg],
            "double_star": any(k.arg is None for k in node.keywords),
        }
        fn = self._fn
        if fn is not None and id(fn) not in self._fn_done:
            self._fn_done.add(id(fn))  # only functions that call a callee pay for this walk
            self.results.update(result_uses(fn))
        result = self.results.get(id(node), [])
        passed_to = None
        for u in result:
            if u["how"] == "passed":
                got = self.ref(u["call"].func, local, cls)
                if got and got[0] == "symbol" and self.s.is_callee(got[1]) and passed_to is None:
                    passed_to = {"symbol": f"{got[1]}:{got[2]}", "keyword": u["keyword"]}
        spread = [k.value for k in node.keywords if k.arg is None]
        if spread:
            from probes._dicts import spread_keys

            got = spread_keys(self, spread, node.lineno, cls)
            if got is not None:  # an open dict may hold any other key: still a ** for binding
                shape = {**shape, "double_star": got[1], "spread_keys": got[0]}
        extra = {
            "values": {
                "args": [literal_text(a) for a in node.args if not isinstance(a, ast.Starred)],
                "kwargs": {k.arg: literal_text(k.value) for k in node.keywords if k.arg},
            },
            "result": [u for u in result if u["how"] != "passed"],
            "passed_to": passed_to,
        }
        if r[0] == "instance":  # calling the object itself: its class's __call__
            r = ("member", r[1], r[2], "__call__")
        if r[0] == "member":  # a method called on a known instance
            ref = ("symbol", r[1], f"{r[2]}.{r[3]}")
            self.s.uses["calls"].append(
                {
                    **self.site(node, scope),
                    "ref": ref,
                    "shape": shape,
                    "on_instance": True,
                    "instance_of": f"{r[1]}:{r[2]}",
                    **extra,
                }
            )
            return
        self.s.uses["calls"].append(
            {
                **self.site(node, scope),
                "ref": r,
                "shape": shape,
                "on_instance": False,
                "instance_of": None,
                **extra,
            }
        )

    def _attr(
        self, node: ast.Attribute, scope: str, local: dict[str, Ref], cls: dict | None
    ) -> None:
        """Attribute reads the caller relies on: on instances, classes, and modules."""
        base = self.ref(node.value, local, cls)
        if base is None or not self.s.is_callee(base[1]):
            return
        if base[0] == "instance":
            on = "instance"
        elif base[0] == "symbol" and self.s.is_class(base[1], base[2]):
            on = "class"  # e.g. RequestStatus.FINISHED_ABORTED
        elif base[0] == "module" and not self.s.is_module(f"{base[1]}.{node.attr}"):
            self.s.uses["attributes"].append(
                {
                    **self.site(node, scope),
                    "attr": node.attr,
                    "on": "module",
                    "ref": ("module", base[1]),
                }
            )
            return
        else:
            return
        self.s.uses["attributes"].append(
            {
                **self.site(node, scope),
                "attr": node.attr,
                "on": on,
                "ref": ("symbol", base[1], base[2]),
            }
        )


def _walk_no_defs(st: ast.stmt) -> list[ast.AST]:
    """Nodes of one statement's own expressions (not nested statements or definitions)."""
    out: list[ast.AST] = []
    todo: list[ast.AST] = [c for c in ast.iter_child_nodes(st) if not isinstance(c, ast.stmt)]
    while todo:
        n = todo.pop()
        out.append(n)
        for c in ast.iter_child_nodes(n):
            if not isinstance(c, (ast.stmt, ast.Lambda)):
                todo.append(c)
    out.sort(key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)))
    return out


def _child_bodies(st: ast.stmt) -> list[list[ast.stmt]]:
    bodies = []
    for field in ("body", "orelse", "finalbody"):
        b = getattr(st, field, None)
        if isinstance(b, list) and b and isinstance(b[0], ast.stmt):
            bodies.append(b)
    for h in getattr(st, "handlers", []) or []:
        bodies.append(h.body)
    for c in getattr(st, "cases", []) or []:
        bodies.append(c.body)
    return bodies


def _walk_imports(
    tree: ast.Module,
) -> list[tuple[ast.Import | ast.ImportFrom, ast.Try | None]]:
    """All imports with the ``try/except ImportError`` that guards each (None: unguarded)."""
    out: list[tuple[ast.Import | ast.ImportFrom, ast.Try | None]] = []

    def visit(node: ast.AST, guarded: ast.Try | None) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.append((node, guarded))
            return
        if isinstance(node, ast.Try):
            catches = any(_catches_import_error(h) for h in node.handlers)
            for c in node.body:
                visit(c, node if catches else guarded)
            for h in node.handlers:
                for c in h.body:
                    visit(c, guarded)
            for c in [*node.orelse, *node.finalbody]:
                visit(c, guarded)
            return
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for c in node.orelse:
                visit(c, guarded)
            return  # TYPE_CHECKING-only imports never run
        # imports are statements: walk statement blocks only, never into expressions
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            for c in getattr(node, field, None) or ():
                if isinstance(c, (ast.stmt, ast.excepthandler)) or type(c).__name__ == "match_case":
                    visit(c, guarded)

    key = id(tree)
    if key in _IMPORTS_SEEN:
        return _IMPORTS_SEEN[key][1]
    visit(tree, None)
    _IMPORTS_SEEN[key] = (tree, out)  # the tree is kept so its id stays its own
    return out


_IMPORTS_SEEN: dict[int, tuple[ast.Module, list]] = {}


def _is_type_checking(test: ast.expr) -> bool:
    return dotted(test).split(".")[-1] == "TYPE_CHECKING"


def _catches_import_error(h: ast.ExceptHandler) -> bool:
    if h.type is None:
        return True
    names = [dotted(e) for e in (h.type.elts if isinstance(h.type, ast.Tuple) else [h.type])]
    return any(
        n.split(".")[-1] in ("ImportError", "ModuleNotFoundError", "Exception", "BaseException")
        for n in names
    )


def _imported_tops(module: str, is_pkg: bool, tree: ast.Module) -> set[str]:
    tops: set[str] = set()
    for node, _ in _walk_imports(tree):
        if isinstance(node, ast.Import):
            tops |= {a.name.split(".")[0] for a in node.names}
        elif node.level == 0 and node.module:
            tops.add(node.module.split(".")[0])
        else:
            tops.add(resolve_relative(module, is_pkg, node.level, node.module).split(".")[0])
    return tops


def _is_stdlib(root: str) -> bool:
    import sysconfig

    std = sysconfig.get_paths().get("stdlib", "")
    return bool(std) and os.path.abspath(root) == os.path.abspath(std)
