"""Probe: what a server's command line accepts, read from its installed source, never imported.

args: {"classes": ["module:Qualname", ...], "parsers": ["module", ...],
       "connectors": {"factory": "module", "module": "module" | null} | null,
       "prepend": [folders] | null, "venv": "/opt/env" | null, "python": path | null,
       "paths": [...] | null}
returns {"dist": "vllm", "version": "0.26.0",
         "classes": {ref: {"found": bool, "fields": [name, ...], "booleans": [name, ...],
                           "open": bool, "file": rel, "line": N, "reason": str}},
         "options": {module: {"found": bool, "file": rel, "flags": {"--flag": line}}},
         "connectors": {"registered": {name: line} | null, "file": rel | null,
                        "module": {"name", "found", "file", "classes": {name: line}} | null}}

``harness check --step`` reads ``vllm serve``'s vocabulary with it: the fields of the dataclasses
its flags and JSON configs are made from (``fields``: the constructor's keyword parameters, the
inherited ones too; ``booleans``: those annotated ``bool`` (alone or in a union), which vLLM's
parser turns into ``--flag``/``--no-flag`` pairs; ``open``: it also takes ``**kwargs``, so any key
binds), and every literal
option string an ``add_argument(...)`` call in the parser modules spells. ``venv``: the prefix
of the interpreter the command names (``/opt/env/bin/vllm``): its site-packages are read first;
where that folder has none and the command names a ``python`` (``python``: a wrapper script that
sets ``PYTHONPATH``), that interpreter is asked for its ``sys.path`` (run, importing nothing).
``connectors``: the names the factory module registers (``register_connector("Name", ...)``
literals), and the step's ``kv_connector_module_path`` as that same environment has it (the
server imports it: hs-connectors must be installed where vLLM is, not only beside speculators).
"""

from __future__ import annotations

import ast
import glob
import json
import os
import re
import subprocess
from collections.abc import Callable
from typing import Any

from probes._finder import Finder, default_paths
from probes._walk import walk
from probes.signatures._astindex import Index
from probes.signatures._lookup import Lookup
from probes.signatures._platform import target_python


def _roots(args: dict[str, Any]) -> list[str]:
    front = [p for p in args.get("prepend") or [] if os.path.isdir(p)]
    venv = args.get("venv")
    if venv:
        sites = sorted(glob.glob(os.path.join(venv, "lib", "python*", "site-packages")))
        if not sites and args.get("python"):  # not a venv's layout (a wrapper script, a shim)
            sites = asked_paths(str(args["python"]))
        front += [p for p in sites if p not in front]
    return front + [p for p in args.get("paths") or default_paths() if p not in front]


def asked_paths(python: str, timeout: float = 30.0) -> list[str]:
    """The folders ``python`` imports from, as it says itself: a script that sets
    ``PYTHONPATH`` and execs an interpreter has no site-packages of its own to glob, and
    reading the probe's own instead would check against another vLLM. Nothing is imported."""
    ask = "import json, sys; print(json.dumps([p for p in sys.path if p]))"
    try:
        got = subprocess.run([python, "-c", ask], capture_output=True, text=True, timeout=timeout)
        paths = json.loads(got.stdout.strip().splitlines()[-1]) if got.returncode == 0 else []
    except (OSError, ValueError, IndexError, subprocess.TimeoutExpired):
        return []
    return [p for p in paths if isinstance(p, str) and os.path.isdir(p)]


def _fields(lookup: Lookup, ref: str) -> dict[str, Any]:
    module, _, qualname = ref.partition(":")
    got = lookup.ref(module, qualname)
    sym = got.get("symbol")
    if not got.get("found") or not sym or sym.get("kind") != "class":
        return {"found": False, "reason": got.get("reason") or f"{ref} is not a class"}
    params = [
        p
        for p in sym.get("parameters") or []
        if p.get("kind") in ("positional-or-keyword", "keyword-only") and p["name"] != "self"
    ]
    return {
        "found": True,
        "fields": [p["name"] for p in params],
        "booleans": [p["name"] for p in params if _is_bool(p.get("annotation"))],
        "open": any(p.get("kind") == "var-keyword" for p in params),
        "file": sym.get("file"),
        "line": sym.get("line"),
    }


def _is_bool(annotation: object) -> bool:
    """``bool``, ``bool | None``, ``Optional[bool]``: what vLLM gives BooleanOptionalAction."""
    if not isinstance(annotation, str):
        return False
    text = annotation.replace("Optional[", "").replace("]", "").replace("Union[", "")
    return "bool" in {part.strip().strip("'\"") for part in re.split(r"[|,]", text)}


def option_strings(tree: ast.AST) -> dict[str, int]:
    """Every literal ``-x``/``--name`` an ``add_argument(...)`` call names -> its line."""
    out: dict[str, int] = {}
    for node in walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "add_argument"
        ):
            continue
        for arg in node.args:
            value = arg.value if isinstance(arg, ast.Constant) else None
            if isinstance(value, str) and value.startswith("-"):
                out.setdefault(value, node.lineno)
    return out


def registered(tree: ast.AST) -> dict[str, int]:
    """Every ``X.register_connector("Name", ...)`` literal name -> its line."""
    out: dict[str, int] = {}
    for node in walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "register_connector"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            out.setdefault(node.args[0].value, node.lineno)
    return out


def top_classes(body: list[ast.stmt], out: dict[str, int] | None = None) -> dict[str, int]:
    """The classes a module defines at its top level (inside ``if``/``try`` too) -> line."""
    out = {} if out is None else out
    for node in body:
        if isinstance(node, ast.ClassDef):
            out.setdefault(node.name, node.lineno)
        elif isinstance(node, ast.If):
            top_classes([*node.body, *node.orelse], out)
        elif isinstance(node, ast.Try):
            handlers = [st for h in node.handlers for st in h.body]
            top_classes([*node.body, *handlers, *node.orelse, *node.finalbody], out)
    return out


def _connectors(lookup: Lookup, spec: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"registered": None, "file": None, "module": None}
    factory = lookup.index.module(str(spec.get("factory") or ""))
    if factory is not None and factory.loc.file:
        out["registered"] = registered(factory.tree)
        out["file"] = lookup.index.rel(factory.loc.file)
    name = spec.get("module")
    if isinstance(name, str) and name:
        mod = lookup.index.module(name)
        out["module"] = {"name": name, "found": False, "file": None, "classes": {}}
        if mod is not None and mod.loc.file:
            out["module"].update(found=True, file=lookup.index.rel(mod.loc.file),
                                 classes=top_classes(mod.tree.body))  # fmt: skip
    return out


def run(args: dict[str, Any], warn: Callable[[str], None]) -> dict[str, Any]:
    lookup = Lookup(Index(Finder(_roots(args)), target_python(args)), warn)
    classes = {ref: _fields(lookup, ref) for ref in args.get("classes") or []}
    options: dict[str, Any] = {}
    owner: tuple[str, str] | None = None
    for name in args.get("parsers") or []:
        mod = lookup.index.module(name)
        if mod is None or not mod.loc.file:
            options[name] = {"found": False}
            continue
        owner = owner or lookup.dists.owner(mod.loc.root, name.split(".")[0])
        options[name] = {
            "found": True,
            "file": lookup.index.rel(mod.loc.file),
            "flags": option_strings(mod.tree),
        }
    spec = args.get("connectors")
    return {
        "dist": owner[0] if owner else None,
        "version": owner[1] if owner else None,
        "classes": classes,
        "options": options,
        "connectors": _connectors(lookup, spec) if isinstance(spec, dict) else None,
    }
