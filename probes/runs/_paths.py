"""What the preflight asks of the paths a step names (stdlib only): the command it starts, the
script a ``python`` command runs, and what would stop its folder from being made."""

from __future__ import annotations

import os
from typing import Any

from probes.runs._rundir import space_left


def resolve_command(argv0: str, cwd: str, path: str | None) -> str | None:
    import shutil

    if "/" in argv0:
        full = argv0 if os.path.isabs(argv0) else os.path.join(cwd, argv0)
        return full if os.path.isfile(full) and os.access(full, os.X_OK) else None
    return shutil.which(argv0, path=path)


def script_of(argv: list[str]) -> str | None:
    """``python [opts] SCRIPT.py ...`` -> SCRIPT.py (checked too: a typo costs a model load)."""
    if not argv or not os.path.basename(argv[0]).startswith("python"):
        return None
    for arg in argv[1:]:
        if arg in ("-c", "-m"):
            return None
        if arg.startswith("-"):
            continue
        return arg if arg.endswith(".py") else None
    return None


def in_the_way(folder: str) -> dict[str, Any]:
    """What would stop ``os.makedirs(folder)``: a file at it or above it (``not_a_folder``),
    or a nearest existing folder that cannot be written (``parent_writable`` false)."""
    path = folder
    while not os.path.isdir(path):
        if os.path.lexists(path):
            return {"not_a_folder": path}
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return {
        "not_a_folder": None,
        "parent": path,
        "parent_writable": os.access(path, os.W_OK),
        "space_left": space_left(path),
    }
