"""harness.targets.hostkeys without a server: fingerprints, known_hosts files, the policy."""

from __future__ import annotations

import logging
import stat
import subprocess
from pathlib import Path
from typing import Any

import paramiko
import pytest

from harness.errors import HostKeyError
from harness.targets import hostkeys
from harness.targets.hostkeys import HostKeyPolicy, KnownHostsFiles


def make_key(tmp_path: Path, name: str = "k") -> tuple[Any, Path]:
    """A fresh ed25519 key (ssh-keygen is fast; Paramiko cannot generate ed25519)."""
    path = tmp_path / name
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)],
        check=True,
        capture_output=True,
    )
    return paramiko.Ed25519Key(filename=str(path)), path


def test_fingerprint_matches_ssh_keygen(tmp_path: Path) -> None:
    key, path = make_key(tmp_path)
    listed = subprocess.run(
        ["ssh-keygen", "-lf", f"{path}.pub"], check=True, capture_output=True, text=True
    ).stdout.split()[1]
    assert hostkeys.fingerprint(key) == listed
    assert listed.startswith("SHA256:") and not listed.endswith("=")


@pytest.mark.parametrize(
    ("host", "port", "name"),
    [
        ("10.0.0.5", 22, "10.0.0.5"),
        ("10.0.0.5", 2222, "[10.0.0.5]:2222"),
        ("gpu.example.com", 22, "gpu.example.com"),
        ("::1", 2200, "[::1]:2200"),
    ],
)
def test_known_hosts_name_round_trip(host: str, port: int, name: str) -> None:
    assert hostkeys.known_hosts_name(host, port) == name
    assert hostkeys.split_known_hosts_name(name) == (host, port)


def test_resolve_explicit_file_has_no_system_file(tmp_path: Path) -> None:
    files = KnownHostsFiles.resolve(str(tmp_path / "kh"))
    assert files.user == tmp_path / "kh" and files.system == ()


def test_resolve_default_is_home_plus_system(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    files = KnownHostsFiles.resolve(None)
    assert files.user == tmp_path / ".ssh" / "known_hosts"
    assert files.system == (Path("/etc/ssh/ssh_known_hosts"),)
    assert KnownHostsFiles.resolve(None, ssh_config_file="~/kh2").user == tmp_path / "kh2"


def test_append_creates_private_dir_and_file(tmp_path: Path) -> None:
    key, _ = make_key(tmp_path)
    path = tmp_path / "new" / "dir" / "known_hosts"
    line = hostkeys.append_known_host(path, "[127.0.0.1]:2222", key)
    assert line == f"[127.0.0.1]:2222 ssh-ed25519 {key.get_base64()}\n"
    assert path.read_text() == line
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_append_keeps_existing_lines_and_adds_missing_newline(tmp_path: Path) -> None:
    key, _ = make_key(tmp_path)
    path = tmp_path / "known_hosts"
    path.write_text("other ssh-ed25519 AAAA")  # no trailing newline
    hostkeys.append_known_host(path, "host", key)
    assert path.read_text().splitlines() == [
        "other ssh-ed25519 AAAA",
        f"host ssh-ed25519 {key.get_base64()}",
    ]


def test_hashed_entries_are_written_and_found(tmp_path: Path) -> None:
    key, _ = make_key(tmp_path)
    path = tmp_path / "known_hosts"
    hostkeys.append_known_host(path, "[10.1.2.3]:2222", key, hash_name=True)
    text = path.read_text()
    assert text.startswith("|1|") and "10.1.2.3" not in text
    client = paramiko.SSHClient()
    KnownHostsFiles(path).load_into(client)
    assert client.get_host_keys().lookup("[10.1.2.3]:2222")["ssh-ed25519"] == key


def test_load_into_separates_system_keys_and_ignores_missing_files(tmp_path: Path) -> None:
    key, _ = make_key(tmp_path)
    system = tmp_path / "system_known_hosts"
    hostkeys.append_known_host(system, "sys-host", key)
    client = paramiko.SSHClient()
    KnownHostsFiles(tmp_path / "absent", (system, tmp_path / "absent2")).load_into(client)
    assert client.get_host_keys().lookup("sys-host") is None
    assert client._system_host_keys.lookup("sys-host")["ssh-ed25519"] == key


def test_policy_refuses_unknown_key_with_fingerprint(tmp_path: Path) -> None:
    key, _ = make_key(tmp_path)
    files = KnownHostsFiles(tmp_path / "kh")
    policy = HostKeyPolicy(files)
    with pytest.raises(HostKeyError) as err:
        policy.missing_host_key(paramiko.SSHClient(), "[10.0.0.5]:2222", key)
    text = str(err.value)
    assert "10.0.0.5:2222" in text
    assert "ssh-ed25519" in text and hostkeys.fingerprint(key) in text
    assert err.value.hint is not None and "--accept-new-host-key" in err.value.hint
    assert not files.user.exists()


def test_policy_accept_new_appends_and_logs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    key, _ = make_key(tmp_path)
    files = KnownHostsFiles(tmp_path / "ssh" / "kh")
    policy = HostKeyPolicy(files, accept_new=True)
    client = paramiko.SSHClient()
    with caplog.at_level(logging.WARNING, logger="harness.targets.hostkeys"):
        policy.missing_host_key(client, "gpu.example.com", key)
    assert files.user.read_text() == f"gpu.example.com ssh-ed25519 {key.get_base64()}\n"
    assert client.get_host_keys().lookup("gpu.example.com")["ssh-ed25519"] == key
    assert policy.added == [files.user.read_text()]
    assert hostkeys.fingerprint(key) in caplog.text and str(files.user) in caplog.text


def test_policy_accept_new_unwritable_file_is_a_host_key_error(tmp_path: Path) -> None:
    key, _ = make_key(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("")
    policy = HostKeyPolicy(KnownHostsFiles(blocker / "kh"), accept_new=True)
    with pytest.raises(HostKeyError, match="cannot add the host key"):
        policy.missing_host_key(paramiko.SSHClient(), "h", key)


def test_changed_key_error_names_both_fingerprints_and_the_fix(tmp_path: Path) -> None:
    old, _ = make_key(tmp_path, "old")
    new, _ = make_key(tmp_path, "new")
    files = KnownHostsFiles(tmp_path / "kh")
    err = hostkeys.changed_key_error("10.0.0.5", 2222, old, new, files)
    assert isinstance(err, HostKeyError)
    assert hostkeys.fingerprint(old) in err.message and hostkeys.fingerprint(new) in err.message
    assert err.hint is not None
    assert f"ssh-keygen -f {tmp_path / 'kh'} -R '[10.0.0.5]:2222'" in err.hint
    err22 = hostkeys.changed_key_error("gpu", 22, old, new, files)
    assert "-R 'gpu'" in (err22.hint or "")
