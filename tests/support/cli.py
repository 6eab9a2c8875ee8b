"""Run ``harness`` the way a user does: a fresh process, its stdout, stderr and exit code."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.wheels import Wheels, cache_root


@dataclass(frozen=True)
class CliResult:
    code: int
    out: str
    err: str


def run_cli(
    *args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None, timeout: float = 300
) -> CliResult:
    full = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", **(env or {})}
    cp = subprocess.run(
        [sys.executable, "-m", "harness", *args],
        capture_output=True,
        text=True,
        env=full,
        cwd=cwd,
        timeout=timeout,
        check=False,
    )
    return CliResult(cp.returncode, cp.stdout, cp.stderr)


@pytest.fixture(scope="session")
def harness_cache(wheels: Wheels) -> Path:
    """A harness cache whose ``wheels/`` is the test wheel cache: one download serves both."""
    root = cache_root() / "harness"
    root.mkdir(parents=True, exist_ok=True)
    link = root / "wheels"
    if not link.exists():
        link.symlink_to(cache_root() / "wheels", target_is_directory=True)
    return root


@pytest.fixture
def cli_env(harness_cache: Path, tmp_path: Path) -> Iterator[dict[str, str]]:
    """Environment for a CLI run: the shared cache, an empty hosts file, no real ~/.ssh."""
    hosts = tmp_path / "empty-hosts.toml"
    hosts.write_text("")
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    yield {
        "HARNESS_CACHE": str(harness_cache),
        "HARNESS_HOSTS": str(hosts),
        "HOME": str(home),
        "HARNESS_SSH_PERSIST": "0",
    }  # test_mux turns the connection servers on itself


def ctrl_c_when(
    proc: subprocess.Popen[str], ready: Callable[[], bool], what: str, timeout: float = 60
) -> tuple[int, str]:
    """Wait until ``ready()`` (the command got far enough), then do what a terminal's Ctrl-C
    does -- SIGINT to the whole process group (``proc`` started with
    ``start_new_session=True``) -- and return its exit code and stderr."""
    import signal
    import time

    try:
        deadline = time.monotonic() + timeout
        while not ready():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, f"{what} never started"
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
        code = proc.wait(30)
        _out, err = proc.communicate()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return code, err


def run_tty(
    *args: str, env: Mapping[str, str], cwd: Path | None = None, columns: int = 80,
    timeout: float = 120,
) -> CliResult:  # fmt: skip
    """``harness`` on a terminal ``columns`` wide (a pseudo-terminal: stdout and stderr both,
    as a user sees them); ``out`` is what the screen shows, colours taken out."""
    import fcntl
    import pty
    import re
    import struct
    import termios
    import time

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    full = {k: v for k, v in {**os.environ, **env}.items() if k != "COLUMNS"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", *args], stdin=slave, stdout=slave, stderr=slave,
        env={**full, "TERM": "xterm", "NO_COLOR": "1"}, cwd=cwd, close_fds=True,
    )  # fmt: skip
    os.close(slave)
    data = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the other end is closed
                break
            if not chunk:
                break
            data += chunk
        code = proc.wait(max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07", "", data.decode("utf-8", "replace"))
    return CliResult(code, text.replace("\r\n", "\n"), "")
