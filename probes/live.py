"""Probe (``--live``): import the module for real and ask ``inspect.signature``.

For signatures made at run time (decorators that rewrite ``__signature__``, C functions,
dynamically built classes). Costs a real import on the target -- seconds for vLLM -- so it is
opt-in. An import failure returns the tail of the target's traceback.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any

from probes._finder import ProbeFailure

KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: "positional-only",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional-or-keyword",
    inspect.Parameter.VAR_POSITIONAL: "var-positional",
    inspect.Parameter.KEYWORD_ONLY: "keyword-only",
    inspect.Parameter.VAR_KEYWORD: "var-keyword",
}


def _ann(a: Any) -> str | None:
    if a is inspect.Parameter.empty or a is inspect.Signature.empty:
        return None
    if isinstance(a, str):
        return a
    return inspect.formatannotation(a)


def _signature(obj: Any) -> tuple[list[dict[str, Any]] | None, str | None]:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None, None
    params = [
        {
            "name": p.name,
            "kind": KINDS[p.kind],
            "default": None if p.default is inspect.Parameter.empty else repr(p.default),
            "annotation": _ann(p.annotation),
        }
        for p in sig.parameters.values()
    ]
    return params, _ann(sig.return_annotation)


def _where(obj: Any, roots: list[str]) -> tuple[str, int, int]:
    try:
        f = inspect.getsourcefile(obj) or ""
        lines, start = inspect.getsourcelines(obj)
    except (TypeError, OSError):
        return "", 0, 0
    for r in sorted(roots, key=len, reverse=True):
        if f.startswith(r.rstrip(os.sep) + os.sep):
            f = os.path.relpath(f, r)
            break
    return f, start, start + len(lines) - 1


def _describe(name: str, obj: Any, module: str, roots: list[str]) -> dict[str, Any]:
    file, line, end = _where(obj, roots)
    kind = "class" if inspect.isclass(obj) else ("function" if callable(obj) else "variable")
    params, ret = _signature(obj) if callable(obj) else (None, None)
    return {
        "qualname": name,
        "kind": kind,
        "module": getattr(obj, "__module__", module) or module,
        "file": file,
        "line": line,
        "end_line": end,
        "is_async": inspect.iscoroutinefunction(obj),
        "decorators": [],
        "parameters": params,
        "returns": None if kind == "class" else ret,
        "overloads": [],
        "doc": (inspect.getdoc(obj) or "").strip().splitlines()[0] if inspect.getdoc(obj) else None,
    }


def run(args: dict[str, Any], warn: Callable[[str], None]) -> dict[str, Any]:
    if args.get("paths"):
        sys.path[:0] = args["paths"]
    module = args["module"]
    try:
        mod = importlib.import_module(module)
    except BaseException as exc:
        tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
        raise ProbeFailure(
            "import-failed",
            f"importing {module} failed: {type(exc).__name__}: {exc}",
            {"traceback": "".join(tb[-6:])},
        ) from None
    roots = [p for p in sys.path if p]
    out: dict[str, Any] = {
        "module": module,
        "file": _where(mod, roots)[0] or None,
        "root": "",
        "dist": None,
        "version": None,
        "chain": [],
        "reexports": [],
        "live": True,
    }
    qualname = args.get("qualname")
    if qualname:
        obj: Any = mod
        for part in qualname.split("."):
            if not hasattr(obj, part):
                raise ProbeFailure(
                    "symbol-not-found",
                    f"{module}:{qualname} has no {part!r}",
                    {"module": module, "suggestions": []},
                )
            obj = getattr(obj, part)
        out["symbols"] = [_describe(qualname, obj, module, roots)]
    else:
        names = getattr(mod, "__all__", None) or [n for n in vars(mod) if not n.startswith("_")]
        out["symbols"] = [
            _describe(n, getattr(mod, n), module, roots)
            for n in names
            if hasattr(mod, n)
            and (inspect.isclass(getattr(mod, n)) or inspect.isfunction(getattr(mod, n)))
            and getattr(getattr(mod, n), "__module__", None) == module
        ]
    return out
