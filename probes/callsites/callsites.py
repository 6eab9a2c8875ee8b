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
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from probes._finder import Dists, Finder, ProbeFailure, default_paths, dist_files
from probes.callsites._callees import Callees
from probes.callsites._calls_env import TypeEnv
from probes.callsites._calls_imports import imported_tops, is_stdlib, walk_imports
from probes.callsites._calls_record import FileVisitor
from probes.callsites._reached import mark_stored, reached_members
from probes.callsites._receivers import OwnClasses
from probes.callsites._uses import (
    KIND_SENSITIVE,
    early_install_queries,
)
from probes.signatures._astindex import Index, read_source
from probes.signatures._lookup import Lookup
from probes.signatures._platform import target_python

#: The index :func:`prepare` warmed, under the key of the paths and Python it read for.
_PREPARED: dict[str, tuple[str, Index]] = {}


def _index_key(args: dict[str, Any]) -> str:
    return repr((args.get("paths"), args.get("python")))


def prepare(args: dict[str, Any]) -> None:
    """Before the arguments (the bootstrap's ``then``): read the modules that ``prefetch``
    names, ``[[module, name], ...]`` -- the callee names the caller imports, which the
    baseline reads once the caller's scan says what it uses. A module that fails to read here
    is left to the run (it raises there what it raises)."""
    index = Index(Finder(args.get("paths") or default_paths()), target_python(args))
    for module, name in args.get("prefetch") or []:
        try:
            index.resolve(module, name)
        except Exception:  # read again, and reported, by the run
            continue
    _PREPARED["index"] = (_index_key(args), index)


def _early(path: str, obj: dict[str, Any]) -> None:
    """What the controller reads while the probe runs on (``args["early"]``: a file on its
    machine, written whole); one it cannot write only costs it the overlap."""
    try:
        with open(path + ".part", "w", encoding="utf-8") as f:
            json.dump(obj, f)
        os.replace(path + ".part", path)
    except OSError:
        pass


def run(args: dict[str, Any], warn: Callable[[str], None]) -> dict[str, Any]:
    from probes.signatures import _astindex

    _astindex.OVERRIDES.update(args.get("overrides") or {})
    warm = _PREPARED.pop("index", None)
    if warm is not None and warm[0] == _index_key(args) and not args.get("overrides"):
        index = warm[1]
        finder = index.finder
    else:
        finder = Finder(args.get("paths") or default_paths())
        index = Index(finder, target_python(args))
    lookup = Lookup(index, warn)
    lookup.returns_for = frozenset(args.get("returns_for") or ())
    lookup.resolve_for = frozenset(args.get("resolve_for") or ())
    lookup.hierarchy_for = frozenset(args.get("hierarchy_for") or ())
    lookup.overrides_for = frozenset(args.get("overrides_for") or ())
    lookup.views_for = frozenset(args.get("views_for") or ())
    lookup.subclassed_for = frozenset(args.get("subclassed_for") or ())
    if not args.get("caller"):
        out: dict[str, Any] = {
            "symbols": {f"{m}:{q}": lookup.ref(m, q) for m, q in args.get("refs") or []}
        }
        if args.get("fits"):  # the classes a patched-in method fitted, read in this version
            out["fits"] = _fits_in(finder, args["fits"])
        return out
    early = (lambda obj: _early(args["early"], obj)) if args.get("early") else None
    scanner = Scanner(index, lookup, warn, early)
    scanner.environ_names = set(args.get("environ_names") or ())  # its series' sets
    return scanner.scan(args["caller"], args.get("callees"))


def _callee_imports(parsed: list, tops: set[str]) -> list[list[str]]:
    """``[[module, name], ...]`` of every ``from CALLEE... import name`` in the caller."""
    got = set()
    for _, _, tree, _ in parsed:
        for node, _ in walk_imports(tree):
            module = node.module if isinstance(node, ast.ImportFrom) and not node.level else None
            if module and module.split(".")[0] in tops:
                got |= {(module, a.name) for a in node.names if a.name != "*"}
    return [list(pair) for pair in sorted(got)]


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
        elif any(u["how"] in KIND_SENSITIVE for u in c.get("result") or ()):
            returns.add(key)  # the kind of object it returns decides what the use does
        if not c.get("on_instance"):
            resolve.add(key)
        if c.get("passed_to"):
            resolve.add(c["passed_to"]["symbol"])
    return frozenset(returns), frozenset(resolve)


def _fits_in(finder: Finder, asks: list[dict[str, Any]]) -> dict[str, Any]:
    """``[{"attrs", "files"}]`` -> scan_fits over just those files (relative to the roots)."""
    from probes.callsites._fits import scan_fits

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
    def __init__(
        self,
        index: Index,
        lookup: Lookup,
        warn: Callable[[str], None],
        early: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.early = early
        self.index = index
        self.finder = index.finder
        self.lookup = lookup
        self.dists = Dists(index.finder)
        self.warn = warn
        self.environ_names: set[str] = set()

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
            if loc is not None and loc.file and not is_stdlib(loc.root):
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
        import hashlib  # (~3 ms; the baseline's run, which hashes nothing, goes without)

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
            self.index.parsed[path] = (src, tree)  # a lookup into the caller parses it no more
            parsed.append((mod, rel, tree, src.splitlines()))
            imported |= imported_tops(mod, rel.endswith("__init__.py"), tree)
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
        callees = Callees(self.index, self.lookup, set(tops))
        self.uses: dict[str, list[dict[str, Any]]] = {
            "imports": [],
            "calls": [],
            "attributes": [],
            "subclasses": [],
            "installs": [],
            "keys": [],
            "gated": [],  # not uses: the version-tested branches they may sit in
        }
        callee_info = {}
        for top in tops:
            loc = self.finder.find(top)
            owner = self.dists.owner(loc.root, top) if loc else None
            callee_info[top] = {
                "dist": owner[0] if owner else top,
                "version": owner[1] if owner else None,
            }
        if self.early is not None:  # enough for the controller to start the baseline's probe
            self.early(
                {
                    "caller": {"dist": meta.get("name") or caller, "version": meta.get("version"),
                               "requires": meta.get("requires", [])},
                    "callees": callee_info,
                    "imports": _callee_imports(parsed, set(tops)),
                }
            )  # fmt: skip
        background = self._start_fits(parsed, tops)  # reads the package beside the visits
        receivers = OwnClasses(
            callees, caller_tops, [p[3] for p in parsed], [(p[0], p[2]) for p in parsed]
        )
        for mod, rel, tree, lines in parsed:
            env = TypeEnv(callees)  # per file: its imports bind its names
            env.module, env.receivers = mod, receivers
            FileVisitor(env, self.uses, mod, rel, rel.endswith("__init__.py"), lines).run(tree)
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
        self.lookup.views_for = frozenset(f"{k['ref'][1]}:{k['ref'][2]}" for k in self.uses["keys"])
        self.lookup.forwards_for = frozenset(
            f"{c['ref'][1]}:{c['ref'][2]}"
            for c in self.uses["calls"]
            if c["shape"]["keywords"] or c["shape"].get("spread_keys")
        )
        self.lookup.hierarchy_for = frozenset(
            f"{b[1]}:{b[2]}" for s in self.uses["subclasses"] if s["others"] for b in s["bases"]
        )
        self.lookup.overrides_for = frozenset(
            f"{b[1]}:{b[2]}.{m['name']}"
            for s in self.uses["subclasses"]
            for b in s["bases"]
            for m in s["methods"]
        )
        self.lookup.subclassed_for = frozenset(
            f"{b[1]}:{b[2]}" for s in self.uses["subclasses"] for b in s["bases"]
        )
        symbols = {f"{m}:{q}": self.lookup.ref(m, q) for m, q in refs}
        symbols.update(reached_members(self.uses["attributes"], symbols, self.lookup))
        mark_stored(self.uses["attributes"], symbols, self._folders(tops))
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
            from probes.callsites._fits import search_packages

            fits.update(search_packages(self._folders(tops), late))
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
            "environ": self._environ(parsed, tops),
        }

    def _environ(self, parsed: list, tops: list[str]) -> dict[str, Any]:
        """The variables the caller sets, and the callee raises under a test of them."""
        from probes.signatures._environ import caller_sets, refusals

        sets = [s for _, rel, tree, lines in parsed for s in caller_sets(tree, rel, lines)]
        names = {s["name"] for s in sets} | self.environ_names
        return {"sets": sets, "refusals": refusals(self._folders(tops), names, self.index.rel)}

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
        from probes.callsites._fits import Background

        queries: list[list[str]] = []
        for _, _, tree, lines in parsed:
            if any("MethodType" in ln for ln in lines):
                queries += early_install_queries(tree)
        unique = sorted({",".join(q): q for q in queries}.values())
        return Background(self._folders(tops), unique) if unique else None
