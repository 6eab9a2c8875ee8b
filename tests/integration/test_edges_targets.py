"""Issue 21: targets that misbehave -- a shell as ``python``, a Python that hangs.

Real processes throughout: the loopback sshd of ``tests/support/sshd.py``, the real shells,
a real interpreter made to hang; each ``harness`` is a fresh process.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.test_mux import runtime  # noqa: F401 - a fixture
from tests.support.cli import run_cli
from tests.support.sshd import SshServer


def _hosts(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "hosts.toml"
    path.write_text('default = "box"\n' + body)
    return path


# -- item 13: a non-Python interpreter runs none of the bootstrap ------------------------------


def test_a_shell_as_python_runs_none_of_the_bootstrap(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """The bootstrap's first lines are ``import json`` ...: a shell ran them as commands
    (``import`` is ImageMagick's screen grab). A fake ``import`` on PATH proves none runs."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ran = tmp_path / "import-ran"
    fake = bin_dir / "import"
    fake.write_text(f"#!/bin/sh\ntouch {ran}\n")
    fake.chmod(0o755)
    env = {**cli_env, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    for shell, why in (
        ("/bin/bash", "a shell ran the probe's first line, which stopped it there"),
        ("/bin/sh", "it refused Python's -B option: /bin/sh: 0: Illegal option -B"),  # dash
    ):
        r = run_cli("probe", "json", "-t", f"local:{shell}", env=env, timeout=60)
        assert r.code == 2, (r.out, r.err)
        assert r.err.splitlines()[0] == (
            f"error: local:{shell}: {shell!r} is not a Python interpreter ({why})"
        )
        assert "Traceback" not in r.err and "command not found" not in r.err
        assert not ran.exists(), f"{shell} ran the bootstrap's `import json`"


@pytest.mark.parametrize("persist", ["0", "600"])
def test_python_bin_bash_in_hosts_toml_names_its_line(
    sshd: SshServer,
    cli_env: dict[str, str],
    tmp_path: Path,
    runtime: Path,  # noqa: F811
    persist: str,
) -> None:
    """Over SSH, directly and through a kept connection (whose warm worker is started with
    the same first lines): the message names hosts.toml's ``python`` line."""
    hosts = _hosts(tmp_path, sshd.host_entry("box", python="/bin/bash"))
    env = {
        **cli_env, "HARNESS_HOSTS": str(hosts), "HARNESS_SSH_PERSIST": persist,
        "XDG_RUNTIME_DIR": str(runtime),
    }  # fmt: skip
    for _ in range(1 if persist == "0" else 2):  # the second through the kept connection
        r = run_cli("probe", "json", env=env, timeout=120)
        assert r.code == 2, (r.out, r.err)
        first, hint = r.err.splitlines()[:2]
        assert first.startswith(f"error: {hosts}:8: box (")
        assert first.endswith(
            "python = '/bin/bash' is not a Python interpreter (a shell ran the probe's first "
            "line, which stopped it there)"
        )
        assert hint.startswith("hint: name the interpreter whose packages you mean")
        assert "Traceback" not in r.err
    if persist != "0":
        assert list((runtime / "harness-mux").glob("*.sock")), "no kept connection was made"


# -- item 3: a Python that hangs: progress, settable timeouts, Ctrl-C ends it there -----------


def _hanging_python(tmp_path: Path) -> tuple[Path, Path]:
    """A ``python =`` whose import path holds ``hangmod.py`` as a FIFO: the probe that reads
    it blocks in ``open()`` as a hung NFS read would. (wrapper, fifo)"""
    site = tmp_path / "hang-site"
    site.mkdir()
    fifo = site / "hangmod.py"
    os.mkfifo(fifo)
    wrapper = tmp_path / "hang-python"
    wrapper.write_text(
        f'#!/bin/sh\nPYTHONPATH={site}\nexport PYTHONPATH\nexec {sys.executable} "$@"\n'
    )
    wrapper.chmod(0o755)
    return wrapper, fifo


def _reader_gone(fifo: Path, timeout: float = 10.0) -> bool:
    """True once no process has ``fifo`` open for reading (the probe on it was ended)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as e:
            if e.errno == errno.ENXIO:
                return True
            raise
        os.close(fd)
        time.sleep(0.2)
    return False


def test_a_hanging_python_shows_progress_and_honours_the_hosts_timeout(
    sshd: SshServer, cli_env: dict[str, str], tmp_path: Path
) -> None:
    """``timeout = 7`` in the host's entry: a line on stderr after 5 s, the end at 7 s (not
    300 s of silence), the process there killed, and a hint naming both ways to allow more."""
    python, fifo = _hanging_python(tmp_path)
    hosts = _hosts(tmp_path, sshd.host_entry("box", python=str(python), timeout=7))
    env = {**cli_env, "HARNESS_HOSTS": str(hosts)}
    start = time.monotonic()
    r = run_cli("probe", "hangmod", env=env, timeout=120)
    took = time.monotonic() - start
    assert r.code == 2, (r.out, r.err)
    assert 7 <= took < 30, took
    lines = r.err.splitlines()
    assert lines[0].startswith("harness: waiting for the signatures probe on box (")
    assert ": 5s so far, gives up at 7s (Ctrl-C ends it there; allow more time" in lines[0]
    assert lines[1] == f"error: {python} on {_label(lines[1])} timed out after 7s"
    assert "timeout = SECONDS in its hosts.toml entry, or HARNESS_TIMEOUT=SECONDS" in lines[2]
    assert "Traceback" not in r.err
    assert _reader_gone(fifo), "the hung probe is still running on the target"


def _label(line: str) -> str:
    return line.split(" on ", 1)[1].split(" timed out", 1)[0]


def test_harness_timeout_wins_over_the_hosts_entry(
    sshd: SshServer, cli_env: dict[str, str], tmp_path: Path
) -> None:
    python, fifo = _hanging_python(tmp_path)
    hosts = _hosts(tmp_path, sshd.host_entry("box", python=str(python), timeout=600))
    env = {**cli_env, "HARNESS_HOSTS": str(hosts), "HARNESS_TIMEOUT": "3"}
    r = run_cli("probe", "hangmod", env=env, timeout=120)
    assert r.code == 2 and "timed out after 3s" in r.err, r.err
    assert _reader_gone(fifo)


@pytest.mark.parametrize("persist", ["0", "600"])
def test_ctrl_c_ends_the_probe_on_the_target_and_says_so(
    sshd: SshServer,
    cli_env: dict[str, str],
    tmp_path: Path,
    runtime: Path,  # noqa: F811
    persist: str,
) -> None:
    """Directly (the process group is killed from a second session) and through a kept
    connection (the server sees the client hang up and ends its worker's child)."""
    python, fifo = _hanging_python(tmp_path)
    hosts = _hosts(tmp_path, sshd.host_entry("box", python=str(python)))
    env = {
        **os.environ, **cli_env, "HARNESS_HOSTS": str(hosts), "HARNESS_SSH_PERSIST": persist,
        "XDG_RUNTIME_DIR": str(runtime), "COLUMNS": "200", "NO_COLOR": "1",
    }  # fmt: skip
    if persist != "0":  # a first command leaves the kept connection behind
        assert run_cli("probe", "json", env=env, timeout=120).code == 0
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "probe", "hangmod"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True,
    )  # fmt: skip
    assert proc.stderr is not None
    first = proc.stderr.readline()  # the progress line: the probe is hanging there now
    assert first.startswith("harness: waiting for the signatures probe on box ("), first
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.startswith("interrupted: stopped the signatures probe on box ("), err
    assert "; its process there was ended" in err and "Traceback" not in err
    assert _reader_gone(fifo), "the probe still runs on the target after Ctrl-C"
    if persist != "0":  # and the kept connection still serves the next command
        assert run_cli("probe", "json", env=env, timeout=120).code == 0
