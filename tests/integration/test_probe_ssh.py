"""``harness probe`` / ``hosts --check`` against a real sshd and a venv "container".

The venv has the real speculators 0.3.0 and vllm 0.16.0 wheels installed ``--no-deps``; the
hosts.toml is written by the test, and every run is a fresh ``harness`` process.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.cli import CliResult, run_cli
from tests.support.sshd import SshServer
from tests.support.wheels import SeedVenv


def write_hosts(tmp_path: Path, body: str, default: str | None = "box") -> Path:
    path = tmp_path / "hosts.toml"
    head = f'default = "{default}"\n' if default else ""
    path.write_text(head + body)
    return path


def cli(hosts: Path, env: dict[str, str], *args: str) -> CliResult:
    return run_cli(*args, env={**env, "HARNESS_HOSTS": str(hosts)})


@pytest.fixture
def box(sshd: SshServer, seed_venv: SeedVenv, tmp_path: Path) -> Path:
    return write_hosts(tmp_path, sshd.host_entry("box", python=str(seed_venv.python)))


def test_kv_cache_signature_over_ssh(box: Path, cli_env: dict[str, str]) -> None:
    r = cli(box, cli_env, "probe", "vllm.v1.core.kv_cache_utils:get_kv_cache_config_from_groups")
    assert r.code == 0, r.err
    assert (
        "(vllm_config: VllmConfig, kv_cache_groups: list[KVCacheGroupSpec], "
        "available_memory: int) -> KVCacheConfig"
    ) in r.out
    assert "vllm/v1/core/kv_cache_utils.py:1069" in r.out
    assert "box (" in r.out  # which target answered


def test_scheduler_config_over_ssh(box: Path, cli_env: dict[str, str], seed_venv: SeedVenv) -> None:
    r = cli(box, cli_env, "probe", "vllm.config:SchedulerConfig", "-t", "box", "--json")
    assert r.code == 0, r.err
    data = json.loads(r.out)
    sym = data["symbols"][0]
    assert (sym["file"], sym["line"]) == ("vllm/config/scheduler.py", 26)
    assert [p["name"] for p in sym["parameters"] if p["default"] is None] == [
        "max_model_len",
        "is_encoder_decoder",
    ]
    assert data["root"] == str(seed_venv.site_packages)
    assert data["python"]["executable"].startswith(str(seed_venv.root))


def test_hosts_check_reports_facts(box: Path, cli_env: dict[str, str], seed_venv: SeedVenv) -> None:
    r = cli(box, cli_env, "hosts", "--check", "--dist", "packaging", "--json")
    assert r.code == 0, r.err
    (facts,) = json.loads(r.out)
    assert facts["dists"]["vllm"] == "0.16.0"
    assert facts["dists"]["speculators"] == "0.3.0"
    assert facts["dists"]["torch"] is None  # installed --no-deps: honestly absent
    assert "packaging" in facts["dists"]
    assert str(seed_venv.site_packages) in facts["site_packages"]
    assert facts["gpus"] == [] and facts["gpu_note"]
    assert facts["connect_seconds"] > 0
    text = cli(box, cli_env, "hosts", "--check").out
    assert "no GPU" in text and "vllm 0.16.0" in text


def test_noisy_login_output_does_not_break_the_envelope(
    sshd: SshServer, seed_venv: SeedVenv, tmp_path: Path, cli_env: dict[str, str]
) -> None:
    noisy = tmp_path / "noisy-python"
    noisy.write_text(
        f'#!/bin/sh\necho "Welcome to gpu-box! {{\\"ok\\": false}}"\n'
        f'echo "motd on stderr" >&2\nexec {seed_venv.python} "$@"\n'
    )
    noisy.chmod(0o755)
    hosts = write_hosts(tmp_path, sshd.host_entry("box", python=str(noisy)))
    r = cli(hosts, cli_env, "probe", "vllm.config:SchedulerConfig", "--json")
    assert r.code == 0, r.err
    assert json.loads(r.out)["symbols"][0]["qualname"] == "SchedulerConfig"


def test_missing_remote_python_is_named(
    sshd: SshServer, tmp_path: Path, cli_env: dict[str, str]
) -> None:
    hosts = write_hosts(tmp_path, sshd.host_entry("box", python="/opt/nowhere/bin/python"))
    r = cli(hosts, cli_env, "probe", "vllm")
    assert r.code == 2
    assert "python interpreter '/opt/nowhere/bin/python' not found" in r.err
    assert "hosts.toml" in r.err and "Traceback" not in r.err


def _fingerprint(pub: Path) -> str:
    out = subprocess.run(
        ["ssh-keygen", "-lf", str(pub)], capture_output=True, text=True, check=True
    ).stdout
    return out.split()[1]


def test_unknown_host_key_refused_then_accepted(
    sshd: SshServer, seed_venv: SeedVenv, tmp_path: Path, cli_env: dict[str, str]
) -> None:
    known = tmp_path / "known_hosts"
    known.write_text("")
    hosts = write_hosts(
        tmp_path, sshd.host_entry("box", python=str(seed_venv.python), known_hosts=str(known))
    )
    r = cli(hosts, cli_env, "probe", "vllm.config:SchedulerConfig")
    assert r.code == 2
    assert _fingerprint(Path(str(sshd.host_key) + ".pub")) in r.err
    assert "--accept-new-host-key" in r.err
    assert known.read_text() == ""
    r = cli(hosts, cli_env, "probe", "vllm.config:SchedulerConfig", "--accept-new-host-key")
    assert r.code == 0, r.err
    assert known.read_text().strip()
    r = cli(hosts, cli_env, "probe", "vllm.config:SchedulerConfig")  # now known: no flag needed
    assert r.code == 0, r.err


def test_changed_host_key_refused_with_keygen_hint(
    sshd: SshServer, tmp_path: Path, cli_env: dict[str, str]
) -> None:
    other = tmp_path / "other_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    keytype, blob = Path(str(other) + ".pub").read_text().split()[:2]
    known = tmp_path / "known_hosts"
    known.write_text(f"[{sshd.host}]:{sshd.port} {keytype} {blob}\n")
    hosts = write_hosts(tmp_path, sshd.host_entry("box", known_hosts=str(known)))
    for extra in ((), ("--accept-new-host-key",)):  # the flag never overrides a change
        r = cli(hosts, cli_env, "probe", "vllm", *extra)
        assert r.code == 2
        assert "ssh-keygen" in r.err and f"[{sshd.host}]:{sshd.port}" in r.err
    assert known.read_text().count("\n") == 1


def test_wrong_client_key_is_an_auth_error(
    sshd: SshServer, tmp_path: Path, cli_env: dict[str, str]
) -> None:
    stranger = tmp_path / "stranger"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(stranger)], check=True)
    hosts = write_hosts(tmp_path, sshd.host_entry("box", identity=str(stranger)))
    r = cli(hosts, cli_env, "probe", "vllm")
    assert r.code == 2
    assert "authentication failed" in r.err and "Traceback" not in r.err


def test_closed_port_fails_fast_and_clearly(
    sshd: SshServer, tmp_path: Path, cli_env: dict[str, str]
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound but not listening: connections are refused
        hosts = write_hosts(tmp_path, sshd.host_entry("box", port=port))
        start = time.monotonic()
        r = cli(hosts, cli_env, "probe", "vllm")
        elapsed = time.monotonic() - start
    assert r.code == 2
    assert f"127.0.0.1:{port}" in r.err and "Traceback" not in r.err
    assert elapsed < 15


def test_malformed_hosts_toml_names_file_and_line(tmp_path: Path, cli_env: dict[str, str]) -> None:
    hosts = write_hosts(tmp_path, '[hosts.box]\naddress = "x"\nprot = 22\n')
    r = cli(hosts, cli_env, "probe", "vllm")
    assert r.code == 2
    assert f"{hosts}:4" in r.err and "prot" in r.err and "port" in r.err
    hosts.write_text('[hosts.box\naddress = "x"\n')
    r = cli(hosts, cli_env, "hosts")
    assert r.code == 2 and f"{hosts}:1" in r.err


def test_unknown_target_lists_the_choices(box: Path, cli_env: dict[str, str]) -> None:
    r = cli(box, cli_env, "probe", "vllm", "-t", "bx")
    assert r.code == 2
    assert "did you mean box" in r.err and "pypi:NAME==VER" in r.err
