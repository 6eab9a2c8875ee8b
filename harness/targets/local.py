"""Targets on this machine: the interpreter harness runs in, another one, or a venv."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from harness.errors import TargetError
from harness.targets.base import CommandResult, FileStat, Target


class LocalTarget(Target):
    """Runs commands with ``subprocess`` (argv lists, never a shell)."""

    def __init__(self, python: str | None = None, label: str | None = None) -> None:
        self.python = python or sys.executable
        self.label = label or ("local" if python is None else f"local:{python}")

    def python_argv(self) -> list[str]:
        return [self.python]

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
            raise TargetError(
                f"{self.label}: {Path(argv[0]).name} did not finish in {timeout}s",
                "raise the timeout or check the target is not overloaded",
            ) from None
        return CommandResult(
            tuple(argv), cp.returncode, cp.stdout, cp.stderr, time.perf_counter() - start
        )

    def read_bytes(self, path: str) -> bytes:
        try:
            return Path(path).read_bytes()
        except OSError as exc:
            raise TargetError(f"{self.label}: cannot read {path}: {exc.strerror}") from None

    def stat(self, path: str) -> FileStat | None:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise TargetError(f"{self.label}: cannot stat {path}: {exc.strerror}") from None
        return FileStat(path, st.st_size, st.st_mode, st.st_mtime)


def venv_target(path: str) -> LocalTarget:
    """``venv:PATH`` -- the venv's own interpreter (``bin/python`` or ``Scripts/python.exe``)."""
    root = Path(path).expanduser()
    for cand in (root / "bin" / "python", root / "Scripts" / "python.exe"):
        if cand.exists():
            return LocalTarget(str(cand), label=f"venv:{path}")
    raise TargetError(
        f"venv:{path}: no bin/python in {root}",
        "create it with `python3 -m venv PATH`, or pass the venv's root folder",
    )
