"""Whether a name resolves, and when it does not, whether it may still exist: stdlib only,
shipped with the probes that resolve names (signatures, callsites, api, locate).

A module ``__getattr__`` can serve any name; so can a compiled module no stub describes,
for the names imported from it by name or by ``*`` (``numpy.random`` star-imports
``mtrand``; ``sklearn.utils.sparsefuncs_fast`` is compiled). Such a name is
"unverifiable", never "missing". A stub beside the source (``numpy/__init__.pyi``) is what
type checkers read: a name it declares exists, and a class's members there are members.
"""

from __future__ import annotations

import ast
import dataclasses
import os
from typing import Any

from probes._finder import ProbeFailure, close_names
from probes._walk import walk
from probes.signatures._astindex import read_source, summarize
from probes.signatures._getattr_verdict import GONE, getattr_verdict


def compiled(finder: Any, module: str) -> str:
    """The reason, if ``module`` is a compiled module with no source or stub to read."""
    return f"{module} is compiled, with no stub to read" if finder.is_extension(module) else ""


def unreadable(finder: Any, module: str) -> ProbeFailure:
    """A module with no source to describe: compiled (named as such), or not there at all."""
    ext = finder.is_extension(module)
    if not ext:
        return finder.not_found(module)
    return ProbeFailure(
        "no-source",
        f"{module} is a compiled extension ({ext}); there is no Python source to read",
        {"file": ext},
    )


def opaque(
    index: Any,
    mod: Any,
    name: str,
    depth: int = 0,
    asked: bool = True,
    passed: list[str] | None = None,
) -> str:
    """Why ``mod.name`` may exist though no source defines it ("" if nothing can hide it).

    ``asked``: whether Python asks ``mod``'s own ``__getattr__`` for the name -- a module
    ``__getattr__`` serves its own module alone, and a ``from mod import *`` asks it only for
    the names ``mod.__all__`` lists (without ``__all__`` the star copies the globals).
    ``passed`` collects the ``__getattr__`` modules passed over that way, in words."""
    shims = mod.shims
    if not asked and mod.has_getattr and passed is not None:
        passed.append(
            f"{mod.name}'s __getattr__ serves {mod.name} alone: a star import of it copies its "
            "globals (it has no __all__)"
        )
    if (
        asked
        and mod.has_getattr
        and (shims is None or not shims.readable or name in shims.unsure or name in mod.lazy)
    ):  # a readable one that serves no such name raises AttributeError: missing
        gone = getattr_verdict(index, mod, name) if name not in mod.lazy else None
        if gone is None or gone.word != GONE:
            return f"{mod.name} has a __getattr__" + (" we cannot read for it" if shims else "")
        if passed is not None:  # evaluated for this name, it raises: missing
            passed.append(
                f"{mod.name}'s __getattr__ raises for {name!r} ({index.rel(gone.file)}:{gone.line})"
            )
        if gone.named:
            return ""
    if depth > 8:
        return ""
    named = mod.imports[name][0] if name in mod.imports else None
    for src in ([named] if named else []) + mod.star_imports:
        target = index.module(src)
        listed = star_exports(target) if target is not None and src != named else None
        if listed is not None and listed and name not in listed:
            if target is not None and target.has_getattr and passed is not None:
                passed.append(
                    f"{target.name}'s __getattr__ serves {target.name} alone: a star import of "
                    f"it asks it only for what its __all__ lists, not {name!r}"
                )
            continue  # the star binds only what __all__ lists
        if target is not None:
            asks = listed is None or bool(listed)
            got = opaque(index, target, name, depth + 1, asks, passed)
        else:
            top = src.split(".")[0]
            got = compiled(index.finder, src) or (
                f"{mod.name} imports it from {top}, which is not installed here"
                if src == named and index.finder.find(top) is None
                else ""
            )
        if got:
            return got
    return ""


def star_exports(mod: Any) -> frozenset[str] | None:
    """What ``from mod import *`` takes by name: ``mod.__all__`` when only literal lists of
    strings make it (empty when there is no ``__all__``: the star copies the globals); None
    when anything else touches ``__all__`` (``+= sub.__all__``, ``.extend``) -- unsure."""
    memo = mod.__dict__.setdefault("_star_exports", [])
    if memo:
        return memo[0]
    names: set[str] = set()
    got: frozenset[str] | None = frozenset()
    for node in walk(mod.tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                value = node.value
                elts = value.elts if isinstance(value, (ast.List, ast.Tuple)) else None
                if elts is None or not all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str) for e in elts
                ):
                    got = None
                    break
                names.update(e.value for e in elts if isinstance(e, ast.Constant))
        elif isinstance(node, ast.Name) and node.id == "__all__" and isinstance(node.ctx, ast.Load):
            got = None  # read back, mutated or extended: not a literal list
            break
    if got is not None and names:
        got = frozenset(names)
    memo.append(got)
    return got


def stub_of(index: Any, mod: Any) -> Any:
    """The ``.pyi`` beside a module's ``.py``, summarised (None if there is none)."""
    f = mod.loc.file
    memo = index.__dict__.setdefault("_stubs", {})
    if f in memo:
        return memo[f]
    got = None
    if f.endswith(".py") and os.path.basename(f) + "i" in index.finder.listdir(os.path.dirname(f)):
        try:
            got = summarize(
                mod.name,
                dataclasses.replace(mod.loc, file=f + "i"),
                read_source(f + "i"),
                index.python,
            )
        except (SyntaxError, OSError, ValueError):
            got = None
    memo[f] = got
    return got


def stub_declares(index: Any, mod: Any, name: str) -> str:
    """The stub's path if the module's stub declares ``name`` ("" otherwise)."""
    stub = stub_of(index, mod)
    if stub is None or not (name in stub.defs or name in stub.imports):
        return ""
    return index.rel(stub.loc.file)


def in_stubs(index: Any, mod: Any, name: str, depth: int = 0) -> tuple[Any, ast.AST] | None:
    """``name``'s def or class, followed through stubs only (``numpy/__init__.pyi``: ``from
    numpy._core.multiarray import array`` -> ``multiarray.pyi``), as type checkers do."""
    stub = mod if mod.loc.file.endswith(".pyi") else stub_of(index, mod)
    if stub is None or depth > 8:
        return None
    node = stub.defs.get(name)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return stub, node
    src, attr, _ = stub.imports.get(name, ("", None, 0))
    target = index.module(src) if src and attr else None
    return in_stubs(index, target, attr, depth + 1) if target is not None else None


def stub_members(index: Any, mod: Any, cls: str) -> set[str]:
    """What the module's stub declares on class ``cls`` (methods, attributes)."""
    stub = stub_of(index, mod)
    node = stub.defs.get(cls) if stub is not None else None
    out: set[str] = set()
    for st in node.body if isinstance(node, ast.ClassDef) else ():
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(st.name)
        for t in st.targets if isinstance(st, ast.Assign) else [getattr(st, "target", None)]:
            if isinstance(t, ast.Name):
                out.add(t.id)
    return out


def missing(index: Any, mod: Any, name: str) -> ProbeFailure:
    """``mod.name`` does not resolve: close names, and whether it may exist all the same."""
    names = set(mod.defs) | set(mod.imports) | set(mod.lazy)
    if mod.loc.is_package:
        names |= set(index.finder.submodules(mod.loc))
    close = close_names(name, sorted(names))
    passed: list[str] = []
    why = opaque(index, mod, name, passed=passed)
    if not why:  # a lazy table read in full: it is where the name is no longer served
        passed[:0] = served_by(index, mod, name)
    stub = stub_declares(index, mod, name)
    return ProbeFailure(
        "symbol-not-found",
        f"{mod.name}:{name} is declared in {stub} only: its code is compiled, no source to read"
        if stub
        else f"{mod.name} has no attribute {name!r} that resolves statically",
        {
            "module": mod.name,
            "file": index.rel(mod.loc.file),
            "suggestions": [] if stub else [f"{mod.name}:{c}" for c in close],
            "dynamic": bool(why),
            "opaque": why,
            "stub": stub,  # declared there: it exists, with no source to read
            "passed_over": "" if why else "; ".join(dict.fromkeys(passed)),
        },
    )


def served_by(index: Any, mod: Any, name: str) -> list[str]:
    """Words for a name a module's readable ``__getattr__`` or lazy import structure does
    not serve: what serves the module's names, and where."""
    at = index.rel(mod.loc.file) if mod.loc.file else mod.name
    if mod.has_getattr and mod.shims is not None and mod.shims.readable and mod.shims.served:
        return [
            f"{mod.name}'s __getattr__ ({at}) serves {len(mod.shims.served)} names and "
            f"raises AttributeError for {name!r}"
        ]
    if mod.lazy:
        return [f"{mod.name}'s lazy export table ({at}) lists no {name!r}"]
    return []


def from_import(finder: Any, lookup: Any, module: str, name: str) -> dict[str, Any]:
    """Does ``from module import name`` work? A submodule counts, lazily served too."""
    if finder.find(module) is None:
        why = compiled(finder, module)  # a compiled module: its names cannot be read
        if why:
            return {"ok": False, "reason": why, "dynamic": True, "opaque": why}
        return {"ok": False, "reason": f"no module named {module!r}"}
    if finder.find(f"{module}.{name}") is not None or compiled(finder, f"{module}.{name}"):
        return {"ok": True}
    got = lookup.ref(module, name)
    if got.get("found"):
        return {"ok": True, "chain": got.get("chain", [])}
    return {
        "ok": False,
        "reason": got.get("reason"),
        "dynamic": got.get("dynamic", False),
        "opaque": got.get("opaque", ""),
        "suggestions": got.get("suggestions", []),
        "passed_over": got.get("passed_over", ""),
    }
