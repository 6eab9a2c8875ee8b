"""Probe: does each text compile on this (the target's) Python? Nothing is written or run.

args: {"files": {rel path: text}}
returns {"python": "3.10.12", "errors": {rel path: {"line": N, "message": "..."}}}

``harness check --fix`` asks before it records an edit: the grammar that will run the patched
file is the target's, not the controller's.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any


def run(args: dict[str, Any], warn: Callable[[str], None]) -> dict[str, Any]:
    errors: dict[str, dict[str, Any]] = {}
    for rel, text in sorted((args.get("files") or {}).items()):
        if text.startswith("\ufeff"):  # a file's BOM: Python drops it when it reads the file
            text = text[1:]
        try:
            compile(text, rel, "exec", dont_inherit=True)
        except SyntaxError as exc:
            errors[rel] = {"line": exc.lineno or 1, "message": exc.msg}
        except ValueError as exc:  # e.g. a NUL byte
            errors[rel] = {"line": 1, "message": str(exc)}
    return {"python": ".".join(map(str, sys.version_info[:3])), "errors": errors}
