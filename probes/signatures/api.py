"""Probe: the public API of one installed dist -- every public module's functions and classes.

args: {"dist": "vllm", "paths": [...] | null}
Used by ``harness diff`` when no caller narrows the question. Parses every public module of the
dist (vLLM: ~1,400 files, a few seconds), so the controller caches the result by fingerprint.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable
from typing import Any

from probes._finder import Finder, ProbeFailure, default_paths, dist_files
from probes.signatures._astindex import Index
from probes.signatures._platform import target_python
from probes.signatures.signatures import Probe

KEEP = (
    "qualname",
    "kind",
    "module",
    "file",
    "line",
    "parameters",
    "returns",
    "constructor",
    "is_async",
)


def _slim(sym: dict[str, Any]) -> dict[str, Any]:
    out = {k: sym.get(k) for k in KEEP}
    if sym.get("constructor"):
        out["constructor"] = {"via": sym["constructor"].get("via")}
    members = [
        _slim(m)
        for m in sym.get("members") or []
        if not m["qualname"].rsplit(".", 1)[-1].startswith("_")
        or m["qualname"].endswith(".__init__")
    ]
    if members:
        out["members"] = members
    return out


def run(args: dict[str, Any], warn: Callable[[str], None]) -> dict[str, Any]:
    finder = Finder(args.get("paths") or default_paths())
    index = Index(finder, target_python(args))
    probe = Probe(index, warn)
    found = dist_files(finder, args["dist"])
    if found is None:
        raise ProbeFailure(
            "dist-not-installed",
            f"{args['dist']} is not installed on this import path",
            {
                "searched": finder.paths,
                "suggestions": finder.close_dists(args["dist"]),
                "executable": sys.executable,
            },
        )
    meta, files = found
    symbols: dict[str, Any] = {}
    skipped = 0
    for module, _path, _rel in files:
        if any(part.startswith("_") for part in module.split(".")):
            continue
        try:
            mod = index.module(module)
        except ProbeFailure as exc:
            warn(str(exc))
            skipped += 1
            continue
        if mod is None:
            continue
        for name, node in mod.defs.items():
            if name.startswith("_") or not isinstance(
                node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
            ):
                continue
            symbols[f"{module}:{name}"] = _slim(probe._symbol(mod, node, name, attributes=False))
    return {
        "dist": meta.get("name") or args["dist"],
        "version": meta.get("version"),
        "symbols": symbols,
        "skipped": skipped,
    }
