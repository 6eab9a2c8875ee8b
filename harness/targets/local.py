"""Targets on this machine: the interpreter harness runs in, another one, or a venv."""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.errors import RunError, TargetError, TimedOut
from harness.targets.base import MAX_STDERR, ByteStream, CommandResult, Target

#: Bytes taken from a pipe per read.
RECV_CHUNK = 1 << 20


class LocalTarget(Target):
    """Runs commands with ``subprocess`` (argv lists, never a shell)."""

    kind = "local"

    def __init__(
        self, python: str | None = None, label: str | None = None, kind: str = "local"
    ) -> None:
        self.python = python or sys.executable
        self.label = label or ("local" if python is None else f"local:{python}")
        self.kind = kind

    def python_argv(self) -> list[str]:
        return [self.python]

    def identity(self) -> dict[str, Any]:
        return {"kind": self.kind, "python": self.python}

    def stream(self, argv: Sequence[str]) -> ByteStream:
        return LocalStream(list(argv))

    def run(
        self,
        argv: Sequence[str],
        *,
        stdin: bytes | None = None,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> CommandResult:
        full_env = {**os.environ, **env} if env else None
        start = time.perf_counter()
        try:
            cp = subprocess.run(
                list(argv),
                input=stdin if stdin is not None else b"",
                capture_output=True,
                timeout=timeout,
                env=full_env,
                cwd=cwd,
                check=False,
            )
        except FileNotFoundError:
            return CommandResult(
                tuple(argv), 127, b"", f"{argv[0]}: not found".encode(), time.perf_counter() - start
            )
        except PermissionError as exc:
            return CommandResult(
                tuple(argv), 126, b"", str(exc).encode(), time.perf_counter() - start
            )
        except subprocess.TimeoutExpired:
            from harness.targets.timeouts import TIMEOUT_ENV

            raise TimedOut(
                f"{self.label}: {Path(argv[0]).name} did not finish in {timeout:g}s "
                "(it was killed)",
                f"allow more time if it is just slow: {TIMEOUT_ENV}=SECONDS for one command",
            ) from None
        return CommandResult(
            tuple(argv), cp.returncode, cp.stdout, cp.stderr, time.perf_counter() - start
        )


def from_spec(rest: str | None) -> LocalTarget:
    """``local`` (this interpreter; ``rest`` is ``None``) or ``local:PYTHON``."""
    return LocalTarget(rest)


def venv_target(path: str) -> LocalTarget:
    """``venv:PATH`` -- the venv's own interpreter (``bin/python`` or ``Scripts/python.exe``)."""
    root = Path(path).expanduser()
    for cand in (root / "bin" / "python", root / "Scripts" / "python.exe"):
        if cand.exists():
            return LocalTarget(str(cand), label=f"venv:{path}", kind="venv")
    raise TargetError(
        f"venv:{path}: no bin/python in {root}",
        "create it with `python3 -m venv PATH`, or pass the venv's root folder",
    )


class LocalStream(ByteStream):
    """A command as a child process of this one: its stdout as it comes, then its stderr."""

    def __init__(self, argv: list[str]) -> None:
        try:
            self._proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        except OSError as e:
            raise RunError(f"cannot start {argv[0]}: {e.strerror or e}") from None
        assert self._proc.stdout is not None and self._proc.stderr is not None
        self._out, self._errf = self._proc.stdout.fileno(), self._proc.stderr.fileno()
        self._open = {self._out, self._errf}
        self._err = bytearray()

    def read(self, timeout: float) -> tuple[bytes, bool]:
        if not self._open:
            self._proc.wait()
            return b"", True
        ready, _, _ = select.select(list(self._open), [], [], timeout)
        data = b""
        for fd in ready:
            got = os.read(fd, RECV_CHUNK)
            if not got:
                self._open.discard(fd)
            elif fd == self._out:
                data = got
            else:
                self._err += got
                del self._err[:-MAX_STDERR]
        if not data and not self._open:
            self._proc.wait()
            return b"", True
        return data, False

    def stderr(self) -> bytes:
        return bytes(self._err)

    def close(self) -> None:
        if self._proc.poll() is None:
            with contextlib.suppress(OSError):
                self._proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=5)
        for f in (self._proc.stdout, self._proc.stderr):
            if f is not None:
                with contextlib.suppress(OSError):
                    f.close()
