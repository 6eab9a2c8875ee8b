"""The one interface every target kind implements.

A target is *where Python packages live*: this machine, a venv, a host over SSH, or wheels
unpacked from PyPI. Everything above ``harness.targets`` works on what these methods return and
never talks to the outside world itself.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from harness.errors import TargetError


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
    """A file on an SSH host, stat'ed over SFTP (``SshTarget.stat``, the mux's ``stat``)."""

    path: str
    size: int
    mode: int
    mtime: float


class LinkLost(Exception):
    """A stream's connection dropped mid-way; the process behind it is untouched (resume)."""


class ByteStream(ABC):
    """One running command's stdout as bytes arrive, then its stderr (the end report)."""

    @abstractmethod
    def read(self, timeout: float) -> tuple[bytes, bool]:
        """Bytes received within ``timeout`` (maybe none) and whether the stream ended.

        Raises:
            LinkLost: the connection died before the command finished.
        """

    @abstractmethod
    def stderr(self) -> bytes:
        """What the command wrote on stderr so far (its last 64 KiB)."""

    @abstractmethod
    def close(self) -> None:
        """Stop reading; the command is ended if it still runs."""


#: The end of a streamed command's stderr that is kept (its end report and errors).
MAX_STDERR = 64 * 1024


class Target(ABC):
    """Base class: run argv lists and say how to start the target's Python.

    A kind writes two methods, :meth:`run` and :meth:`python_argv`; the rest is derived
    (:meth:`run_python` runs the interpreter through :meth:`run`) or has a default that a
    kind overrides where it can do better: a byte stream (:meth:`stream`), a key
    (:meth:`identity`), the environment and default working folder of runs there
    (:attr:`run_env`, :attr:`default_workdir`). Code outside ``harness.targets`` uses these,
    never a kind's own attributes; files on a target are read by probes, not through here.
    """

    #: The kind's name in the registry (``local``, ``venv``, ``pypi``, ``ssh``).
    kind: str = "target"
    #: Short name for folders on this machine (a host's name; ``local`` for this machine).
    name: str = "local"
    #: Paths on the target are paths here: ``~`` and relative folders resolve locally.
    on_this_machine: bool = True
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

    def run_python(
        self, code: str, stdin: bytes, timeout: float | None = None, python: str | None = None
    ) -> CommandResult:
        """Run Python source with the target's interpreter (how probes run), or ``python``.

        A target may do this faster than a plain exec: over a kept SSH connection a warm
        worker forks per probe instead of starting a login shell and an interpreter.
        """
        argv = [python] if python else self.python_argv()
        return self.run([*argv, "-B", "-c", code], stdin=stdin, timeout=timeout)

    @abstractmethod
    def python_argv(self) -> list[str]:
        """The argv prefix that starts the interpreter whose packages this target means."""

    def probe_paths(self) -> list[str] | None:
        """Import roots the probes search instead of the interpreter's ``sys.path``.

        ``None`` means: use the target interpreter's own ``sys.path`` (local, venv, SSH).
        The ``pypi:`` target returns its unpacked wheel folders.
        """
        return None

    def reads_for_python(self) -> str | None:
        """The Python version (``"3.12"``) the probes read for when the interpreter running
        them is not the target's (a ``pypi:`` target's ``python==`` pin); ``None``: the
        interpreter running them is the target's, and its own version decides."""
        return None

    def stream(self, argv: Sequence[str]) -> ByteStream:
        """Start ``argv`` and stream its stdout as it comes (a run's log follower)."""
        raise TargetError(f"{self.label}: cannot run commands", "use an SSH host or local")

    @property
    def run_env(self) -> Mapping[str, str]:
        """Variables a pipeline run on this target gets (hosts.toml ``env``)."""
        return {}

    @property
    def default_workdir(self) -> str | None:
        """Where runs live when ``--workdir`` is not given (hosts.toml ``workdir``)."""
        return None

    @property
    def peer_address(self) -> str:
        """Where other hosts reach this one (hosts.toml ``address``): a spread step's
        ``{head}`` when it runs on this host alone."""
        return "127.0.0.1"

    @property
    def command_timeout(self) -> float:
        """Seconds a probe here may take (``$HARNESS_TIMEOUT``, hosts.toml, 300)."""
        from harness.targets.timeouts import command_timeout

        return command_timeout()

    def setting_line(self, key: str) -> str | None:
        """``FILE:LINE`` where the inventory sets ``key`` for this target (messages)."""
        return None

    def prefix(self) -> list[str]:
        """The command every command of this target runs behind (``kind = "exec"``'s ``exec``;
        none here): what an error names when it, not the interpreter, failed."""
        return []

    def python_origin(self) -> tuple[str, str] | None:
        """Where this target's interpreter was named when not by the inventory (a pipeline
        step's ``python =``, ``-t HOST@PYTHON``), and how to change it: (where, hint)."""
        return None

    def identity(self) -> dict[str, Any]:
        """Everything that decides what this target's commands touch (JSON values)."""
        return {"kind": self.kind, "label": self.label}

    @property
    def key(self) -> str:
        """Short hash of :meth:`identity`: two targets with one key are the same place."""
        blob = json.dumps(self.identity(), sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

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
