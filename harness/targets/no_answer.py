"""A probe that printed no envelope: what the target's Python (or the shell) said instead."""

from __future__ import annotations

import posixpath
import re

from harness.errors import TargetError
from harness.targets.base import Target
from harness.targets.shell import NOT_PYTHON_EXIT, NOT_PYTHON_MARK

#: what the probe's interpreter says when a prefix passed it no stdin (closed; empty)
_NO_STDIN = ("'NoneType' object has no attribute 'buffer'", "Expecting value: line 1 column 1")
_REFUSED_OPTION = re.compile(r"(illegal|invalid|unknown|unrecognized|bad) (option|switch)", re.I)


def no_envelope(target: Target, code: int, stderr: bytes) -> TargetError:
    """Why a probe answered nothing: not a Python, no such interpreter, else its stderr."""
    python = target.python_argv()[0]
    tail = stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
    detail = " | ".join(tail)
    why = None
    if target.prefix() and (blamed := _the_prefix(target, code, detail)) is not None:
        return blamed
    if code == NOT_PYTHON_EXIT and NOT_PYTHON_MARK in stderr:
        why = "a shell ran the probe's first line, which stopped it there"
    elif code != 0 and _REFUSED_OPTION.search(detail):  # every Python takes -B
        why = f"it refused Python's -B option: {tail[-1].strip()}"
    if why is not None:
        where = target.setting_line("python")
        return TargetError(
            f"{where + ': ' if where else ''}{target.label}: "
            f"{'python = ' if where else ''}{python!r} is not a Python interpreter ({why})",
            'name the interpreter whose packages you mean, e.g. python = "/root/venv/bin/python"'
            if where
            else "name a Python interpreter, e.g. -t local:/usr/bin/python3",
        )
    if code == 127 or "not found" in detail or "No such file" in detail:
        origin = target.python_origin()
        if origin is not None:  # named by a pipeline step or -t HOST@PYTHON, not hosts.toml
            return TargetError(
                f"{origin[0]}: {target.label}: python interpreter {python!r} not found "
                f"({detail or 'exit 127'})",
                origin[1],
            )
        return TargetError(
            f"{target.label}: python interpreter {python!r} not found ({detail or 'exit 127'})",
            'set `python = "/path/to/bin/python"` for this host in hosts.toml',
        )
    return TargetError(
        f"{target.label}: the probe printed no result (exit {code}): {detail or 'no output'}",
        "run `harness hosts --check` to see whether the target's python works",
    )


def _the_prefix(target: Target, code: int, detail: str) -> TargetError | None:
    """An ``exec`` target's prefix that failed before the interpreter ran -- its program
    missing, no stdin passed on, an exit with nothing said -- named, not the interpreter."""
    from harness.targets.shell import join

    prefix = target.prefix()
    shown, head = join(prefix), prefix[0]
    where = target.setting_line("exec")
    fix = f"fix exec = [...] in {where}" if where else "fix the host's exec = [...]"
    missing = code == 127 or "not found" in detail or "No such file" in detail
    if missing and head in detail:
        return TargetError(
            f"{target.label}: the exec prefix's program {head!r} was not found "
            f"({detail or 'exit 127'})",
            f"{fix}: the command put in front of every command (e.g. docker exec -i NAME)",
        )
    if code != 0 and _REFUSED_OPTION.search(detail) and posixpath.basename(head) in detail:
        return TargetError(
            f"{target.label}: the exec prefix `{shown}` took the interpreter's options as its "
            f"own ({detail})",
            f"{fix}: a prefix that runs the command after it (docker exec -i NAME, srun ...)",
        )
    if any(x in detail for x in _NO_STDIN):
        return TargetError(
            f"{target.label}: the exec prefix `{shown}` passes the command no stdin (the "
            "interpreter read no input)",
            f"{fix}: keep stdin open (docker and kubectl exec need -i)",
        )
    if code != 0 and not detail:
        python = target.python_argv()[0]
        return TargetError(
            f"{target.label}: nothing came back through the exec prefix `{shown}` (exit {code}, "
            "no output)",
            f"try it by hand: {shown} {python} -c 'print(1)'; else {fix}",
        )
    return None
