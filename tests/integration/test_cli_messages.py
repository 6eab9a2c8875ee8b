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
