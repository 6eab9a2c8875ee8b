"""Issue 35 item 5: tracebacks still reachable, though the README promises none.

A patch file that is not UTF-8 (``UnicodeDecodeError`` in ``patching/series.py``); a timeout
of ``nan`` / ``inf`` in hosts.toml, ``$HARNESS_TIMEOUT`` or a step's ``verify.timeout``
(accepted, then ``ValueError`` / ``OverflowError`` through the kept connection); a read-only
site-packages ("probe crashed" and a traceback tail). Each is now one line naming the file
and line (or the variable) with a hint, and says that nothing was written. Real processes:
the tinypkg venv of ``test_patches_faults``, the loopback sshd, read-only bind mounts.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.integration.test_mux import runtime  # noqa: F401 - a fixture
from tests.integration.test_patches_faults import (
    Tiny,
    installed,
    leftovers,
    series,  # noqa: F401 - a fixture
    tiny,  # noqa: F401 - a fixture
)
from tests.integration.test_runs_ssh import local_harness
from tests.support.cli import run_cli
from tests.support.sshd import SshServer


def one_error(err: str) -> str:
    assert "Traceback" not in err and "probe crashed" not in err, err
    lines = err.splitlines()
    assert len(lines) == 2 and lines[1].startswith("hint: "), err
    return lines[0]


# -- a patch file that is not UTF-8 ---------------------------------------------------------


@pytest.mark.parametrize("command", ["patches", "apply-patches"])
def test_a_patch_that_is_not_utf8_is_named_with_its_line(
    cli_env: dict[str, str],
    tiny: Tiny,  # noqa: F811
    series: Callable[[str], Path],  # noqa: F811
    command: str,
) -> None:
    patches = series("good")
    bad = patches / "tinypkg" / "1.0" / "0001-alpha-greeting.patch"
    bad.write_bytes(bad.read_bytes().replace(b'"hello, " + name', b'"hello, \xff" + name'))
    before = installed(tiny.site)
    r = run_cli(command, "-t", f"venv:{tiny.root}", "--patches", str(patches), env=cli_env)
    assert r.code == 2, r.out + r.err
    line = bad.read_bytes().split(b"\xff")[0].count(b"\n") + 1
    assert one_error(r.err).startswith(f"error: {bad}:{line}: not UTF-8 text (byte 0xff)")
    assert installed(tiny.site) == before


# -- timeouts that are not a number of seconds ----------------------------------------------


@pytest.mark.parametrize("value", ["nan", "inf", "+inf"])
def test_a_hosts_timeout_of_nan_or_inf_names_its_line(
    cli_env: dict[str, str], tmp_path: Path, value: str
) -> None:
    hosts = tmp_path / "hosts.toml"
    hosts.write_text(f'default = "box"\n[hosts.box]\naddress = "127.0.0.1"\ntimeout = {value}\n')
    r = run_cli("probe", "json", env={**cli_env, "HARNESS_HOSTS": str(hosts)}, timeout=60)
    assert r.code == 2, r.out + r.err
    assert one_error(r.err).startswith(
        f"error: {hosts}:4: hosts.box.timeout: expected seconds > 0, got "
    )


@pytest.mark.parametrize("value", ["inf", "1e400", "nan", "-inf"])
def test_harness_timeout_of_inf_is_one_line_through_the_kept_connection(
    sshd: SshServer,
    cli_env: dict[str, str],
    tmp_path: Path,
    runtime: Path,  # noqa: F811
    value: str,
) -> None:
    hosts = tmp_path / "hosts.toml"
    hosts.write_text('default = "box"\n' + sshd.host_entry("box", python=sys.executable))
    env = {
        **cli_env, "HARNESS_HOSTS": str(hosts), "HARNESS_SSH_PERSIST": "600",
        "XDG_RUNTIME_DIR": str(runtime),
    }  # fmt: skip
    assert run_cli("probe", "json", env=env, timeout=120).code == 0  # leaves the connection
    for _ in range(2):  # through the kept connection too
        r = run_cli("probe", "json", env={**env, "HARNESS_TIMEOUT": value}, timeout=120)
        assert r.code == 2, r.out + r.err
        assert one_error(r.err) == (
            f"error: $HARNESS_TIMEOUT={value!r}: expected a number of seconds > 0 (a finite one)"
        )


@pytest.mark.parametrize("value", ["nan", "inf"])
def test_a_verify_timeout_of_nan_or_inf_names_its_line(tmp_path: Path, value: str) -> None:
    h = local_harness(
        tmp_path,
        '[steps.make]\ncommand = ["{python}", "-c", "pass"]\n[steps.make.verify]\n'
        f'command = ["{{python}}", "-c", "pass"]\ntimeout = {value}\n',
    )
    r = h("run", "make", "-t", "local")
    assert r.code == 2, r.out + r.err
    assert one_error(r.err).startswith(
        f"error: {tmp_path / 'pipeline.toml'}:5: steps.make.verify.timeout: expected a finite "
        f"number of seconds, at least 1, got {float(value)!r}"
    )
    assert not list((h.workdir / ".harness" / "runs").glob("*"))


# -- a read-only site-packages ----------------------------------------------------------------


@pytest.fixture
def read_only() -> Iterator[Callable[[Path], None]]:
    """Make a folder read-only (a read-only bind mount over itself), undone at the end."""
    if os.geteuid() != 0:
        pytest.skip("a read-only bind mount needs root")
    mounted: list[Path] = []

    def make(folder: Path) -> None:
        for argv in (
            ["mount", "--bind", str(folder), str(folder)],
            ["mount", "-o", "remount,bind,ro", str(folder)],
        ):
            if subprocess.run(argv, check=False).returncode != 0:
                pytest.skip("cannot bind-mount here")
            if "--bind" in argv:
                mounted.append(folder)

    yield make
    for folder in mounted:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_a_read_only_site_packages_is_one_line_and_nothing_written(
    cli_env: dict[str, str],
    tiny: Tiny,  # noqa: F811
    series: Callable[[str], Path],  # noqa: F811
    read_only: Callable[[Path], None],
) -> None:
    t = ("-t", f"venv:{tiny.root}", "--patches", str(series("good")))
    pristine = installed(tiny.site)
    read_only(tiny.site)
    r = run_cli("apply-patches", *t, env=cli_env)
    assert r.code == 2, r.out + r.err
    assert one_error(r.err) == (
        f"error: venv:{tiny.root}: cannot write {tiny.site}/.harness-patches (read-only file "
        "system): nothing written"
    )
    assert installed(tiny.site) == pristine


def test_revert_on_a_site_packages_made_read_only_says_it_is_still_applied(
    cli_env: dict[str, str],
    tiny: Tiny,  # noqa: F811
    series: Callable[[str], Path],  # noqa: F811
    read_only: Callable[[Path], None],
) -> None:
    t = ("-t", f"venv:{tiny.root}", "--patches", str(series("good")))
    assert run_cli("apply-patches", *t, env=cli_env).code == 0
    patched = installed(tiny.site)
    read_only(tiny.site)
    r = run_cli("revert-patches", *t, env=cli_env)
    assert r.code == 2, r.out + r.err
    error = one_error(r.err)
    assert error.startswith(f"error: venv:{tiny.root}: cannot write {tiny.site}/"), error
    assert error.endswith(
        "(read-only file system): nothing written: the tinypkg series is still fully applied"
    ), error
    assert installed(tiny.site) == patched and leftovers(tiny.site) == []
