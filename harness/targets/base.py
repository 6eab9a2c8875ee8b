"""The one interface every target kind implements.

A target is *where Python packages live*: this machine, a venv, a host over SSH, or wheels
unpacked from PyPI. Everything above ``harness.targets`` works on what these methods return and
never talks to the outside world itself.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType


@dataclass(frozen=True)
class CommandResult:
    """What one command on a target did; bytes are kept raw (decoding is the caller's choice)."""

    argv: tuple[str, ...]
    exit_code: int
    stdout: bytes
    stderr: bytes
    duration: float

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


@dataclass(frozen=True)
class FileStat:
    path: str
    size: int
    mode: int
    mtime: float


class Target(ABC):
    """Base class: run argv lists, read files, and say how to start the target's Python."""

    #: Short human label used in every message ("gpu (root@10.0.0.5:22)", "pypi:vllm==0.16.0").
    label: str = "target"
    #: False for read-only targets (``pypi:``), which refuse writes and process launches.
    writable: bool = True
    #: True when what the probes read can never change (``pypi:`` unpacks each version once,
    #: read-only): a cached probe result is then served without asking the target at all.
    immutable: bool = False

    @abstractmethod
    def run(
        self,
        argv: Sequence[str],
        *,
        stdin: bytes | None = None,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> CommandResult:
        """Run an argv list (never shell text) and wait for it; ``env`` adds variables."""

    def run_python(self, code: str, stdin: bytes, timeout: float | None = None) -> CommandResult:
        """Run Python source with the target's interpreter (how probes run).

        A target may do this faster than a plain exec: over a kept SSH connection a warm
        worker forks per probe instead of starting a login shell and an interpreter.
        """
        return self.run([*self.python_argv(), "-B", "-c", code], stdin=stdin, timeout=timeout)

    @abstractmethod
    def python_argv(self) -> list[str]:
        """The argv prefix that starts the interpreter whose packages this target means."""

    def probe_paths(self) -> list[str] | None:
        """Import roots the probes search instead of the interpreter's ``sys.path``.

        ``None`` means: use the target interpreter's own ``sys.path`` (local, venv, SSH).
        The ``pypi:`` target returns its unpacked wheel folders.
        """
        return None

    @abstractmethod
    def read_bytes(self, path: str) -> bytes:
        """Read a whole file from the target."""

    @abstractmethod
    def stat(self, path: str) -> FileStat | None:
        """Stat a file on the target; ``None`` when it does not exist."""

    def close(self) -> None:  # noqa: B027 - a no-op is right for most targets
        """Release connections; safe to call twice."""

    def __enter__(self) -> Target:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
