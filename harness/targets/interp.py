"""A target with another interpreter: the same machine, connection, files and runs, another
Python's packages (a pipeline step's ``python = ...``; ``-t HOST@/path/to/python``).

A pipeline may run its steps in two environments on one host -- vLLM's venv for the server,
speculators' for the client. Everything that reads packages (probe, check, patches, the
review) then works on :func:`with_python`'s target: commands, files and streams go through
the host's own target (its kept SSH connection included); only the interpreter differs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.targets.base import ByteStream, CommandResult, Target

#: ``-t HOST@PYTHON``: the host's target, with that interpreter.
SEPARATOR = "@"


class WithPython(Target):
    """``inner`` with ``python`` as its interpreter; closing it leaves ``inner`` open."""

    def __init__(self, inner: Target, python: str, origin: tuple[str, str] | None = None) -> None:
        self.inner, self.python, self.origin = inner, python, origin
        self.kind, self.on_this_machine = inner.kind, inner.on_this_machine
        self.writable, self.immutable = inner.writable, False

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.inner.name

    @property
    def label(self) -> str:  # type: ignore[override]
        return f"{self.inner.label}{SEPARATOR}{self.python}"

    def python_argv(self) -> list[str]:
        return [self.python]

    def run_python(
        self, code: str, stdin: bytes, timeout: float | None = None, python: str | None = None
    ) -> CommandResult:
        return self.inner.run_python(code, stdin, timeout, python=python or self.python)

    def run(
        self,
        argv: Sequence[str],
        *,
        stdin: bytes | None = None,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> CommandResult:
        return self.inner.run(argv, stdin=stdin, timeout=timeout, env=env, cwd=cwd)

    def stream(self, argv: Sequence[str]) -> ByteStream:
        return self.inner.stream(argv)

    @property
    def run_env(self) -> Mapping[str, str]:
        return self.inner.run_env

    @property
    def default_workdir(self) -> str | None:
        return self.inner.default_workdir

    @property
    def peer_address(self) -> str:
        return self.inner.peer_address

    @property
    def command_timeout(self) -> float:
        return self.inner.command_timeout

    def setting_line(self, key: str) -> str | None:
        return None if key == "python" else self.inner.setting_line(key)

    def python_origin(self) -> tuple[str, str] | None:
        return self.origin

    def prefix(self) -> list[str]:
        return self.inner.prefix()

    def identity(self) -> dict[str, Any]:
        return {**self.inner.identity(), "python": self.python}


def with_python(
    target: Target, python: str | None, origin: tuple[str, str] | None = None
) -> Target:
    """``target`` with ``python`` as its interpreter (itself when that is already its own,
    or when nothing runs there: ``pypi:`` wheels have no interpreter to swap). ``origin``:
    where it was named and how to change it, for the error when it is not there."""
    if not python or not target.writable or target.python_argv() == [python]:
        return target
    return WithPython(target, python, origin)
