"""A probe that printed no envelope: what the target's Python (or the shell) said instead."""

from __future__ import annotations

import re

from harness.errors import TargetError
from harness.targets.base import Target
from harness.targets.shell import NOT_PYTHON_EXIT, NOT_PYTHON_MARK

_REFUSED_OPTION = re.compile(r"(illegal|invalid|unknown|unrecognized|bad) (option|switch)", re.I)


def no_envelope(target: Target, code: int, stderr: bytes) -> TargetError:
    """Why a probe answered nothing: not a Python, no such interpreter, else its stderr."""
    python = target.python_argv()[0]
    tail = stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
    detail = " | ".join(tail)
    why = None
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
