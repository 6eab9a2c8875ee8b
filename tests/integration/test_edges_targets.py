"""Issue 21: targets that misbehave -- a shell as ``python``, a Python that hangs.

Real processes throughout: the loopback sshd of ``tests/support/sshd.py``, the real shells,
a real interpreter made to hang; each ``harness`` is a fresh process.
"""

from __future__ import annotations

import os
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
