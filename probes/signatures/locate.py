"""Probe: what ``harness check --fix`` must know about one callee version beyond the check.

args: {"tops": ["vllm"], "names": ["get_kv_cache_config_from_groups"],
       "modules": [["vllm.v1.core.kv_cache_utils", ["vllm.v1.core"], [skip]]],  # home, vias
       "refs": [["vllm.v1.request", "Request"]], "reads": true | false,
       "overrides": {abs path: text}, "paths": [...] | null}

* ``defined``: every module-level ``def``/``class`` with one of ``names`` in the ``tops``
  packages -- where a symbol that left its module lives now. Files are read as text first and
  parsed only when a ``def NAME``/``class NAME`` line is in them, so vLLM's ~2,000 files cost
  one read each.
* ``modules``: each defining module's functions and classes (a rename is a removed name and a
  new one of the same shape in the same module), and which of them the import-via module
  re-exports.
* ``symbols``: each ref described as ``harness check`` describes it; with ``reads``, also the
  parameters its body reads (a keyword the old version never read can be dropped safely), or
  null where that cannot be known (decorators, ``locals()``, a synthesised constructor).
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable
from typing import Any

from probes._finder import Finder, ProbeFailure, default_paths, touch
from probes._walk import walk
from probes.signatures._astindex import Index, read_source
from probes.signatures._lookup import Lookup
from probes.signatures._platform import target_python
from probes.signatures._syntax import ModuleSummary
from probes.signatures.api import _slim

DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
#: Decorators that do not see the call's arguments: a body that ignores a parameter then
#: really ignores it.
TRANSPARENT = {"staticmethod", "classmethod", "property", "cached_property", "override"}
TEST_DIRS = {"tests", "test", "testing"}
DYNAMIC = {"locals", "vars", "currentframe", "_getframe", "getcallargs", "signature"}


def run(args: dict[str, Any], warn: Callable[[str], None]) -> dict[str, Any]:
    from probes.signatures import _astindex

    _astindex.OVERRIDES.update(args.get("overrides") or {})
    finder = Finder(args.get("paths") or default_paths())
    index = Index(finder, target_python(args))
    lookup = Lookup(index, warn)
    return {
        "defined": _defined(index, lookup, args.get("tops") or [], args.get("names") or [], warn),
        "modules": {
            m: _module(index, lookup, m, vias, set(skip))
            for m, vias, skip in args.get("modules") or []
        },
        "symbols": {
            f"{m}:{q}": _ref(index, lookup, m, q, bool(args.get("reads")))
            for m, q in args.get("refs") or []
        },
    }


def _py_files(finder: Finder, top: str) -> list[tuple[str, str]]:
    """(module name, path) of every .py file in a top-level package."""
    loc = finder.find(top)
    if loc is None:
        return []
    if not loc.is_package:
        return [(top, loc.file)]
    out: list[tuple[str, str]] = []
    for base in loc.search_dirs:
        for d, dirs, files in os.walk(base):
            # a test package is nobody's API: a name defined there is no place it moved to
            dirs[:] = sorted(x for x in dirs if x.isidentifier() and x not in TEST_DIRS)
            rel = os.path.relpath(d, base)
            prefix = top if rel == "." else top + "." + rel.replace(os.sep, ".")
            for f in sorted(files):
                if f.endswith(".py") and f[:-3].isidentifier():
                    mod = prefix if f == "__init__.py" else prefix + "." + f[:-3]
                    out.append((mod, os.path.join(d, f)))
    return out


def _defined(
    index: Index, lookup: Lookup, tops: list[str], names: list[str], warn: Callable[[str], None]
) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    if not names:
        return found
    alt = "|".join(re.escape(n) for n in sorted(set(names)))
    raw = [n.encode() for n in names]
    pattern = re.compile(rf"^[ \t]*(?:async[ \t]+def|def|class)[ \t]+({alt})\b", re.MULTILINE)
    for top in tops:
        for mod_name, path in _py_files(index.finder, top):
            if not _mentions(path, raw):
                continue
            try:
                hits = set(pattern.findall(read_source(path)))
            except ProbeFailure:
                continue
            if not hits:
                continue
            try:
                mod = index.module(mod_name)
            except ProbeFailure as exc:
                warn(str(exc))
                continue
            if mod is None:
                continue
            for name in sorted(hits):
                node = mod.defs.get(name)
                if isinstance(node, DEFS):
                    found[name].append(_brief(lookup, mod, node, name))
    return found


def _mentions(path: str, names: list[bytes]) -> bool:
    """Does the file hold any of the names at all? A byte search: most files do not, and
    decoding plus a line-anchored regex costs ~100x more. Every file is fingerprinted."""
    from probes.signatures import _astindex

    touch(path)
    if _astindex.override_for(path) is not None:
        return True
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return False
    return any(n in data for n in names)


def _module(
    index: Index, lookup: Lookup, module: str, vias: list[str], skip: set[str]
) -> dict[str, Any] | None:
    """The module's function and class names; those not in ``skip`` described; and for each
    importing module (``via``) which of the described ones it serves (``from via import name``
    reaches this module's definition)."""
    try:
        mod = index.module(module)
    except ProbeFailure:
        return None
    if mod is None:
        return None
    names = sorted(n for n, node in mod.defs.items() if isinstance(node, DEFS))
    defs = {n: _brief(lookup, mod, mod.defs[n], n) for n in names if n not in skip}
    exported: dict[str, list[str]] = {}
    for via in vias:
        if via == module:
            exported[via] = sorted(defs)
            continue
        exported[via] = []
        for name in defs:
            got = lookup.ref(via, name)
            sym = got.get("symbol") or {}
            if got.get("found") and sym.get("module") == module:
                exported[via].append(name)
    return {"names": names, "defs": defs, "exported": exported}


def _brief(lookup: Lookup, mod: ModuleSummary, node: ast.AST, name: str) -> dict[str, Any]:
    """A symbol as ``harness diff`` keeps it, plus the dist and version it belongs to."""
    full = lookup._symbol(mod, node, name, attributes=False)
    return {**_slim(full), "dist": full.get("dist"), "version": full.get("version")}


def _ref(index: Index, lookup: Lookup, module: str, qualname: str, reads: bool) -> dict[str, Any]:
    got = lookup.ref(module, qualname)
    sym = got.get("symbol")
    if reads and got.get("found") and sym:
        got["reads"] = _reads(index, sym)
    return got


def _reads(index: Index, sym: dict[str, Any]) -> list[str] | None:
    """Parameters the body of a function (or a class's own ``__init__``) reads, if knowable."""
    try:
        mod = index.module(sym["module"])
    except ProbeFailure:
        return None
    node = _node(mod, sym["qualname"]) if mod is not None else None
    if isinstance(node, ast.ClassDef):
        ctor = sym.get("constructor") or {}
        if ctor.get("via") != "__init__" or ctor.get("inherited"):
            return None  # synthesised (dataclass fields are all stored) or a base's __init__
        node = next(
            (
                n
                for n in node.body
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "__init__"
            ),
            None,
        )
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        leaf = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if leaf not in TRANSPARENT:
            return None
    params = {
        a.arg
        for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
        + [x for x in (node.args.vararg, node.args.kwarg) if x is not None]
    }
    used: set[str] = set()
    for stmt in node.body:
        for n in walk(stmt):
            if isinstance(n, ast.Name):
                if n.id in DYNAMIC:
                    return None
                if isinstance(n.ctx, (ast.Load, ast.Del)):
                    used.add(n.id)
            elif isinstance(n, ast.Attribute) and n.attr in DYNAMIC:
                return None
    return sorted(used & params)


def _node(mod: ModuleSummary, qualname: str) -> ast.AST | None:
    head, *rest = qualname.split(".")
    node = mod.defs.get(head)
    for part in rest:
        if not isinstance(node, ast.ClassDef):
            return None
        node = next(
            (n for n in node.body if isinstance(n, DEFS) and n.name == part),
            None,
        )
    return node
