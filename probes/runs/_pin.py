"""The files a user's own output check runs from, pinned at launch (``verify`` in pipeline.toml).

harness's shipped checks are pinned by the bytes it copies (``verifiers_sha256``); a user's
check is a script in their tree -- which the step can rewrite: a step that replaced the script
its ``verify.command`` names with one that prints a pass got ``succeeded · verified 1/1`` over a
bad output. So launch hashes what the command names -- its script (``python check.py``,
``bash check.sh``, ``./check.sh``), its ``-m`` module when found under the cwd or PYTHONPATH --
and the supervisor refuses a check whose files changed since (:func:`moved`). What the script
imports, and a module of site-packages, are not pinned (the README says so).
"""

from __future__ import annotations

import hashlib
import os
import re

#: interpreter options that take the next argument (``python -W error check.py``)
_TAKES_ARG = ("-W", "-X", "-Q")
_SCRIPT = (".py", ".sh", ".bash")


def _sha256(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def _is_file(path: str) -> bool:
    return os.path.isfile(path)


def _module(name: str, roots: list[str]) -> str | None:
    """``-m a.b``: ``a/b.py`` or ``a/b/__main__.py`` under the first root that has it."""
    rel = os.path.join(*name.split("."))
    for root in roots:
        for cand in (rel + ".py", os.path.join(rel, "__main__.py")):
            if _is_file(path := os.path.join(root, cand)):
                return path
    return None


def named(argv: list[str], cwd: str, pythonpath: str = "") -> list[str]:
    """The files ``argv`` runs from: a script of its own, a python script or ``-m`` module,
    or the first ``.py``/``.sh`` argument of another runner (``bash``, ``torchrun``)."""
    if not argv:
        return []

    def at(p: str) -> str:
        return os.path.normpath(os.path.join(cwd, os.path.expanduser(p)))

    head = at(argv[0]) if "/" in argv[0] else ""
    if head and _is_file(head) and not re.match(r"python[0-9.]*$", os.path.basename(head)):
        with open(head, "rb") as f:
            if f.read(2) == b"#!":
                return [head]  # a script of its own: what follows are its arguments
    if re.match(r"python[0-9.]*$", os.path.basename(argv[0])):
        args = iter(argv[1:])
        for arg in args:
            if arg == "-c":
                return []
            if arg == "-m":
                roots = [cwd, *filter(None, pythonpath.split(os.pathsep))]
                found = _module(next(args, ""), [at(r) for r in roots])
                return [found] if found else []
            if arg in _TAKES_ARG:
                next(args, None)
            elif not arg.startswith("-"):
                return [at(arg)] if _is_file(at(arg)) else []
        return []
    for arg in argv[1:]:
        if arg.endswith(_SCRIPT) and _is_file(at(arg)):
            return [at(arg)]
    return []


def pin(argv: list[str], cwd: str, pythonpath: str = "", skip: str = "") -> dict[str, str]:
    """Path -> sha256 of each file the check runs from (those under ``skip`` are pinned
    another way: the run's shipped checks)."""
    out = {}
    for path in named(argv, cwd, pythonpath):
        if skip and path.startswith(skip):
            continue
        if (digest := _sha256(path)) is not None:
            out[path] = digest
    return out


def moved(pinned: dict[str, str]) -> str | None:
    """Why the check may not run (a file it runs from changed since launch), or None."""
    for path, digest in sorted(pinned.items()):
        got = _sha256(path)
        if got != digest:
            was = "gone" if got is None else f"{got[:12]} now"
            return (
                f"the check's file {path} was changed after launch (sha256 {digest[:12]} at "
                f"launch, {was}); not run"
            )
    return None
