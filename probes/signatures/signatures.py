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

from probes._finder import Dists, Finder, ProbeFailure, default_paths
from probes.signatures._absorbed import absorb
from probes.signatures._astindex import Hop, Index, Resolved
from probes.signatures._bound import bound_method, made_symbol, wrapped
from probes.signatures._describe import (
    after_self,
    describe_function,
    is_accessor,
    module_overloads,
)
from probes.signatures._describe_class import ClassDescriber
from probes.signatures._platform import target_python
from probes.signatures._resolvable import in_stubs, missing, unreadable
from probes.signatures._syntax import ModuleSummary


def run(args: dict[str, Any], warn: Callable[[str], None]) -> dict[str, Any]:
    finder = Finder(args.get("paths") or default_paths())
    index = Index(finder, target_python(args))
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
                d = absorb(self.classes, mod, node, wrapped(self.classes, mod, node, d))
        elif isinstance(node, ast.Assign) and (made := made_symbol(self, mod, node, qualname)):
            return made  # ``f = make_function(...)``: what the factory returns (_factory)
        elif isinstance(node, ast.Assign) and (bound := bound_method(self.classes, mod, node)):
            m, fn, what = bound  # ``f = api.method``: the bound method, without self
            d = describe_function(fn, qualname, True, [], m.src)
            if fn.decorator_list:
                d = absorb(self.classes, m, fn, wrapped(self.classes, m, fn, d))
            static = d["kind"] == "staticmethod"
            d.update(
                parameters=d["parameters"] if static else after_self(d["parameters"]),
                kind="function",
                line=node.lineno,
                end_line=node.end_lineno or node.lineno,
                doc=f"{qualname} = {what}",
            )
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
                and not is_accessor(st)  # a property is shown by its getter
            ):
                return mod, cls, st
            if isinstance(st, (ast.Assign, ast.AnnAssign)):
                targets = st.targets if isinstance(st, ast.Assign) else [st.target]
                if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                    return mod, cls, st
        if depth < 10:
            for b in cls.bases:
                base = self.classes.base_class(mod, b)
                if base is not None:
                    got = self._member(base[0], base[1], name, depth + 1)
                    if got is not None:
                        return got
        return None

    def _missing(self, mod: ModuleSummary, name: str) -> ProbeFailure:
        return missing(self.index, mod, name)

    def _listing(self, mod: ModuleSummary) -> list[dict[str, Any]]:
        from probes.signatures._bound import listing  # defs, classes, and second names of them

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
    from probes.signatures._syntax import dotted

    return any(dotted(d).split(".")[-1] == "overload" for d in getattr(node, "decorator_list", []))


def _python() -> dict[str, Any]:
    return {
        "executable": sys.executable,
        "version": ".".join(map(str, sys.version_info[:3])),
        "prefix": sys.prefix,
        "cwd": os.getcwd(),
    }
