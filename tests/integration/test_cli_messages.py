"""Messages a user trips on (issue 10): each names the file:line, the interpreter, the truth."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from tests.support.cli import run_cli


def test_an_identity_that_is_a_directory_names_its_line(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    keys = tmp_path / "keys"
    keys.mkdir()
    hosts = tmp_path / "hosts.toml"
    hosts.write_text(
        f'[hosts.box]\naddress = "127.0.0.1"\nport = 1\n\nidentity = "{keys}"\npython = "python3"\n'
    )
    r = run_cli("probe", "json", "-t", "box", env={**cli_env, "HARNESS_HOSTS": str(hosts)})
    assert r.code == 2, r.err
    assert f"error: {hosts}:5: identity = '{keys}' is a directory, not a private key file" in r.err
    assert f'hint: name the key file in it, e.g. identity = "{keys}/id_ed25519"' in r.err
    assert "Traceback" not in r.err


def test_check_of_a_missing_caller_names_the_interpreter(cli_env: dict[str, str]) -> None:
    r = run_cli("check", "nosuchcaller", "-t", "local", env=cli_env)
    assert r.code == 2, r.err
    assert "nosuchcaller is not installed" in r.err
    assert f"searched with {sys.executable}: " in r.err and "None" not in r.err


def test_probe_os_path_resolves_as_on_the_target_platform(cli_env: dict[str, str]) -> None:
    r = run_cli("probe", "os:path", "-t", "local", "--json", env=cli_env)
    assert r.code == 0, r.err
    data = json.loads(r.out)
    want = "posixpath" if os.name == "posix" else "ntpath"
    assert data["module"] == want and data["file"] == f"{want}.py"
    assert [h["how"] for h in data["chain"]] == ["import", "module"]


def test_hosts_table_folds_long_values_at_80_columns(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Issue 10: on an 80-column terminal every path is still there, wrapped, not cut to '…'."""
    python = "/root/miniconda3/envs/eagle3-training-env/bin/python3.12"
    address = "gpu-box-number-one.internal.example.com"
    hosts = tmp_path / "hosts.toml"
    hosts.write_text(
        f'default = "gpu"\n[hosts.gpu]\naddress = "{address}"\nuser = "root"\nport = 2222\n'
        f'python = "{python}"\nworkdir = "/root/eagle3/experiments/kimi-k2.5-draft"\n'
    )
    r = run_cli("hosts", env={**cli_env, "HARNESS_HOSTS": str(hosts), "COLUMNS": "80"})
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    table = [line for line in lines if line[:1] in "┏┃┡│└"]
    assert all(len(line) <= 80 for line in table), r.out  # its title is not wrapped in a pipe
    assert "…" not in r.out
    rows = [line.split("│")[1:-1] for line in lines if line.startswith("│")]
    start = next(i for i, cells in enumerate(rows) if cells[0].strip() == "gpu (default)")
    end = next(i for i in range(start + 1, len(rows)) if rows[i][0].strip())
    cell = ["".join(row[c].strip() for row in rows[start:end]) for c in range(5)]
    assert cell[1] == f"root@{address}:2222" and cell[2] == python
    assert cell[4] == f"{hosts}:2"
