"""Probe: what a server's command line accepts, read from its installed source, never imported.

args: {"classes": ["module:Qualname", ...], "parsers": ["module", ...],
       "prepend": [folders] | null, "venv": "/opt/env" | null, "paths": [...] | null}
returns {"dist": "vllm", "version": "0.26.0",
         "classes": {ref: {"found": bool, "fields": [name, ...], "booleans": [name, ...],
                           "open": bool, "file": rel, "line": N, "reason": str}},
         "options": {module: {"found": bool, "file": rel, "flags": {"--flag": line}}}}

``harness check --step`` reads ``vllm serve``'s vocabulary with it: the fields of the dataclasses
its flags and JSON configs are made from (``fields``: the constructor's keyword parameters, the
inherited ones too; ``booleans``: those annotated ``bool`` (alone or in a union), which vLLM's
parser turns into ``--flag``/``--no-flag`` pairs; ``open``: it also takes ``**kwargs``, so any key
binds), and every literal
option string an ``add_argument(...)`` call in the parser modules spells. ``venv``: the prefix
of the interpreter the command names (``/opt/env/bin/vllm``): its site-packages are read first.
"""

from __future__ import annotations

import ast
import glob
import os
import re
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
        front += sorted(glob.glob(os.path.join(venv, "lib", "python*", "site-packages")))
    return front + [p for p in args.get("paths") or default_paths() if p not in front]


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
    return {
        "dist": owner[0] if owner else None,
        "version": owner[1] if owner else None,
        "classes": classes,
        "options": options,
    }
