"""Global options, --version, completion: the CLI details of issue 10 a user feels first."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import run_cli

#: Every subcommand, and whether it takes a target (diff has --from/--to; cache is local).
COMMANDS = {
    "probe": True, "check": True, "diff": False, "hosts": True, "run": True, "runs": True,
    "logs": True, "stop": True, "patches": True, "apply-patches": True,
    "revert-patches": True, "make-patch": True, "report": True, "cache": False, "matrix": False,
}  # fmt: skip


def test_version() -> None:
    r = run_cli("--version")
    assert (r.code, r.out) == (0, "harness 0.1.0\n")


def test_completion_is_installable() -> None:
    r = run_cli("--help")
    assert r.code == 0
    assert "--install-completion" in r.out and "--show-completion" in r.out
    script = Path(sys.executable).parent / "harness"  # the installed entry point
    if not script.exists():
        pytest.skip("harness is not installed as a script in this environment")
    shown = subprocess.run(
        [str(script), "--show-completion", "bash"],
        capture_output=True, text=True, env={**os.environ, "SHELL": "/bin/bash"}, check=False,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert "_HARNESS_COMPLETE=complete_bash" in shown.stdout


def test_every_subcommand_lists_the_global_options() -> None:
    listed = run_cli("--help").out
    for name, takes_target in COMMANDS.items():
        assert name in listed
        r = run_cli(name, "--help")
        assert r.code == 0, (name, r.err)
        if name == "cache":
            continue  # this machine's cache: no inventory, no target to name
        assert "--hosts" in r.out, name
        if takes_target:
            assert "--target" in r.out and "-t" in r.out, name


@pytest.fixture
def hosts_file(tmp_path: Path) -> Path:
    """A default host that refuses connections: using it by mistake is seen at once."""
    path = tmp_path / "inventory.toml"
    path.write_text('default = "box"\n[hosts.box]\naddress = "127.0.0.1"\nport = 1\n')
    return path


@pytest.mark.parametrize(
    "args",
    [
        ["--hosts", "{hosts}", "-t", "local", "probe", "json", "--json"],
        ["probe", "json", "--json", "--hosts", "{hosts}", "-t", "local"],
        ["--hosts", "{hosts}", "probe", "json", "--json", "-t", "local"],
        ["-t", "local", "probe", "json", "--json", "--hosts", "{hosts}"],
    ],
)
def test_global_options_before_or_after_the_subcommand(
    cli_env: dict[str, str], hosts_file: Path, args: list[str]
) -> None:
    r = run_cli(*[a.replace("{hosts}", str(hosts_file)) for a in args], env=cli_env)
    assert r.code == 0, r.err
    assert json.loads(r.out)["target"] == "local"


@pytest.mark.parametrize("where", ["before", "after"])
def test_hosts_before_or_after_picks_that_inventory(
    cli_env: dict[str, str], hosts_file: Path, where: str
) -> None:
    args = ["probe", "json"]
    args = (
        ["--hosts", str(hosts_file), *args]
        if where == "before"
        else [*args, "--hosts", str(hosts_file)]
    )
    r = run_cli(*args, env=cli_env)
    assert r.code == 2
    assert "connection refused by 127.0.0.1:1" in r.err  # its default host, box


def test_make_patch_on_a_group_is_refused_before_any_connection(tmp_path: Path) -> None:
    """Once per host it would write one patch per host, racing for the next number."""
    inv = tmp_path / "hosts.toml"
    inv.write_text(
        '[hosts.gpu1]\naddress = "127.0.0.1"\nport = 1\n'
        '[hosts.gpu2]\naddress = "127.0.0.1"\nport = 1\n'
        '[groups]\nnodes = ["gpu1", "gpu2"]\n'
    )
    patches = tmp_path / "patches"
    r = run_cli("make-patch", "speculators", "-t", "nodes", "--patches", str(patches),
                "--hosts", str(inv))  # fmt: skip
    assert r.code == 2, r.out + r.err
    assert r.err.splitlines()[0] == (
        "error: make-patch -t nodes: records one host's edits, and nodes is 2 hosts (gpu1, gpu2)"
    )
    assert "-t gpu1" in r.err and "harness apply-patches -t nodes" in r.err
    assert "Traceback" not in r.err and not patches.exists()


def test_probe_live_imports_for_real_and_a_pypi_target_refuses_it(tmp_path: Path) -> None:
    """A signature made at run time (``__signature__`` set by a decorator) shows only live."""
    pkg = tmp_path / "site" / "livepkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        "import functools, inspect\n"
        "def typed(fn):\n"
        "    @functools.wraps(fn)\n"
        "    def wrapper(*args, **kwargs):\n"
        "        return fn(*args, **kwargs)\n"
        "    wrapper.__signature__ = inspect.Signature(\n"
        "        [inspect.Parameter('seed', inspect.Parameter.KEYWORD_ONLY, default=0)])\n"
        "    del wrapper.__wrapped__\n"
        "    return wrapper\n"
        "@typed\n"
        "def run(*args, **kwargs):\n"
        "    return kwargs\n"
    )
    (tmp_path / "none.toml").write_text("")
    env = {"PYTHONPATH": str(tmp_path / "site"), "HARNESS_HOSTS": str(tmp_path / "none.toml")}
    r = run_cli("probe", "livepkg:run", "-t", "local", env=env)
    assert r.code == 0 and "run(*args, **kwargs)" in r.out, r.out + r.err  # as the source says
    r = run_cli("probe", "livepkg:run", "--live", "-t", "local", env=env)
    assert r.code == 0, r.err
    assert "run(*, seed=0)" in r.out, r.out
    r = run_cli("probe", "speculators.config", "--live", "-t", "pypi:speculators==0.3.0", env=env)
    assert r.code == 2
    assert r.err.startswith("error: --live imports speculators.config, and pypi:speculators==0.3.0")
    assert "harness probe speculators.config --live -t HOST" in r.err and "Traceback" not in r.err
