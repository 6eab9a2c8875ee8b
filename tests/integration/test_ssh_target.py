"""SshTarget against a real OpenSSH sshd on loopback (tests/support/sshd.py); no mocks.

The server runs on this machine, so files the tests create locally are the "remote" files, and
a remote process can be looked for in the local /proc.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import paramiko
import pytest

from harness.errors import ConfigError, ConnectError, HostKeyError, TargetError
from harness.targets.ssh import SshTarget
from harness.targets.ssh.entry import HostConfig
from tests.support.sshd import SshServer

pytestmark = pytest.mark.ssh

ECHO_ARGV = "import sys, json; print(json.dumps(sys.argv[1:]))"


def host_for(server: SshServer, **over: Any) -> HostConfig:
    base = HostConfig(
        name="box",
        address=server.host,
        port=server.port,
        user=server.user,
        identity=str(server.client_key),
        known_hosts=str(server.known_hosts),
        python="python3",
    )
    return replace(base, **over)


@pytest.fixture
def target(sshd: SshServer, isolated_home: Path) -> Iterator[SshTarget]:
    t = SshTarget(host_for(sshd))
    yield t
    t.close()


def new_key(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)],
        check=True,
        capture_output=True,
    )
    return path


def processes_with(needle: str) -> list[int]:
    """Local pids whose command line contains ``needle`` (the "remote" host is this one)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if needle in cmdline:
                found.append(int(entry.name))
    return found


# -- commands ------------------------------------------------------------------------------


def test_echo_exit_codes_and_label(target: SshTarget, sshd: SshServer) -> None:
    r = target.run(["echo", "hello", "world"])
    assert (r.exit_code, r.stdout, r.stderr) == (0, b"hello world\n", b"")
    assert r.argv == ("echo", "hello", "world") and r.duration > 0
    r = target.run(["python3", "-c", "import sys; print('e', file=sys.stderr); sys.exit(7)"])
    assert (r.exit_code, r.stdout, r.stderr, r.ok) == (7, b"", b"e\n", False)
    assert target.label == f"box ({sshd.user}@127.0.0.1:{sshd.port})"
    assert target.python_argv() == ["python3"]


def test_stdin_round_trip_binary(target: SshTarget) -> None:
    payload = bytes(range(256)) * 1000
    code = "import sys; d = sys.stdin.buffer.read(); sys.stdout.buffer.write(d[::-1])"
    r = target.run(["python3", "-c", code], stdin=payload)
    assert r.ok and r.stdout == payload[::-1]


HOSTILE = [
    "$(id)",
    "`id`",
    "a b",
    "it's",
    '"q"',
    "a\nb",
    "",
    "*",
    "~",
    "ünï 日本",
    "\\",
    "--x",
    ";",
]


def test_hostile_arguments_arrive_as_one_argument_each(target: SshTarget) -> None:
    r = target.run(["python3", "-c", ECHO_ARGV, *HOSTILE, "end"])
    assert r.ok and json.loads(r.stdout) == [*HOSTILE, "end"]


def test_injection_never_executes(target: SshTarget) -> None:
    marker = Path(f"/tmp/pwned-{uuid.uuid4().hex}")
    evil = [f"x; touch {marker}", f"$(touch {marker})", f"`touch {marker}`", f"\ntouch {marker}"]
    r = target.run(["echo", *evil], env={"V": f"$(touch {marker})"})
    assert r.ok and r.stdout == (" ".join(evil) + "\n").encode()
    assert not marker.exists()


def test_cwd_and_env_are_explicit_and_quoted(sshd: SshServer, isolated_home: Path) -> None:
    """hosts.toml's workdir/env are for runs; a probe must not depend on them existing."""
    workdir = isolated_home / "work dir $(x)"
    workdir.mkdir()
    host = host_for(sshd, workdir=str(isolated_home / "missing"), env={"A_VAR": "unused"})
    with SshTarget(host) as t:
        code = "import os; print(os.getcwd()); print(os.environ.get('A_VAR'), os.environ['B_VAR'])"
        r = t.run(["python3", "-c", code], env={"B_VAR": "call $(x)"}, cwd=str(workdir))
    assert r.ok, r.stderr
    assert r.stdout.decode().splitlines() == [str(workdir), "None call $(x)"]


def test_large_output_on_both_streams_does_not_deadlock(target: SshTarget) -> None:
    size = 20 * 1024 * 1024
    code = (
        "import sys\n"
        f"for _ in range({size // 65536}):\n"
        "    sys.stdout.buffer.write(b'o' * 65536); sys.stderr.buffer.write(b'e' * 65536)\n"
    )
    start = time.monotonic()
    r = target.run(["python3", "-c", code], timeout=60)
    assert r.ok and len(r.stdout) == size and len(r.stderr) == size
    assert set(r.stdout) == {ord("o")} and set(r.stderr) == {ord("e")}
    assert time.monotonic() - start < 30


def test_large_stdin_while_output_flows(target: SshTarget) -> None:
    """``cat`` writes as it reads: stdin and stdout windows fill together."""
    payload = os.urandom(1024 * 1024) * 20
    r = target.run(["cat"], stdin=payload, timeout=60)
    assert r.ok and r.stdout == payload


def test_program_that_ignores_stdin(target: SshTarget) -> None:
    r = target.run(["true"], stdin=b"x" * (8 * 1024 * 1024), timeout=30)
    assert r.ok


def test_timeout_kills_the_remote_command(target: SshTarget) -> None:
    tag = f"{time.time() % 1000 + 30:.4f}"  # a unique sleep length to find it in /proc
    start = time.monotonic()
    with pytest.raises(TargetError) as err:
        target.run(["sh", "-c", f"sleep {tag}; echo never"], timeout=1)
    assert time.monotonic() - start < 5
    assert "sh" in err.value.message and "box" in err.value.message
    assert "timed out after 1s" in err.value.message
    deadline = time.monotonic() + 5
    while processes_with(f"sleep {tag}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with(f"sleep {tag}") == []  # the child of sh died too (process group)
    assert target.run(["echo", "still usable"]).stdout == b"still usable\n"


def test_killed_by_signal_is_a_result_not_a_lost_link(target: SshTarget) -> None:
    r = target.run(["sh", "-c", "kill -9 $$"])
    assert r.exit_code == -1 and not r.ok


def test_one_connection_for_runs_and_files(target: SshTarget, tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    target.run(["true"])
    transport = target.transport()
    target.stat(str(tmp_path / "f"))
    target.read_bytes(str(tmp_path / "f"))
    target.run(["true"])
    assert target.transport() is transport
    assert target.sftp() is target.sftp()


# -- files ---------------------------------------------------------------------------------


def test_read_bytes_and_stat(target: SshTarget, tmp_path: Path) -> None:
    data = os.urandom(3 * 1024 * 1024 + 17)
    path = tmp_path / "blob.bin"
    path.write_bytes(data)
    path.chmod(0o640)
    assert target.read_bytes(str(path)) == data
    st = target.stat(str(path))
    assert st is not None
    assert (st.path, st.size, stat.S_IMODE(st.mode)) == (str(path), len(data), 0o640)
    assert abs(st.mtime - path.stat().st_mtime) < 1.01
    dir_stat = target.stat(str(tmp_path))
    assert dir_stat is not None and stat.S_ISDIR(dir_stat.mode)


def test_missing_files(target: SshTarget, tmp_path: Path) -> None:
    missing = str(tmp_path / "nope" / "x.py")
    assert target.stat(missing) is None
    with pytest.raises(TargetError) as err:
        target.read_bytes(missing)
    assert missing in err.value.message and "box" in err.value.message
    with pytest.raises(TargetError):
        target.read_bytes(str(tmp_path))  # a directory


# -- host keys -----------------------------------------------------------------------------


def keygen_fingerprint(pubkey: Path) -> str:
    out = subprocess.run(["ssh-keygen", "-lf", str(pubkey)], capture_output=True, text=True)
    return out.stdout.split()[1]


def test_unknown_host_key_is_refused_with_fingerprint(sshd: SshServer, isolated_home: Path) -> None:
    known = isolated_home / "kh" / "known_hosts"
    t = SshTarget(host_for(sshd, known_hosts=str(known)))
    with pytest.raises(HostKeyError) as err:
        t.run(["true"])
    message = str(err.value)
    assert keygen_fingerprint(sshd.host_key.with_suffix(".pub")) in message
    assert f"127.0.0.1:{sshd.port}" in message and "ssh-ed25519" in message
    assert "--accept-new-host-key" in message
    assert not known.exists()
    t.close()


def test_accept_new_host_key_appends_then_plain_connect_works(
    sshd: SshServer, isolated_home: Path
) -> None:
    known = isolated_home / "newdir" / "known_hosts"
    empty_config = isolated_home / "ssh_config"
    empty_config.write_text("")  # no system HashKnownHosts: the line is plain text
    host = host_for(sshd, known_hosts=str(known))
    with SshTarget(host, accept_new_host_key=True, ssh_config_path=str(empty_config)) as t:
        assert t.run(["echo", "ok"]).stdout == b"ok\n"
    assert known.read_text() == f"[127.0.0.1]:{sshd.port} {sshd.host_pubkey_line}\n"
    assert stat.S_IMODE(known.stat().st_mode) == 0o600
    assert stat.S_IMODE(known.parent.stat().st_mode) == 0o700
    with SshTarget(host, ssh_config_path=str(empty_config)) as t:
        assert t.run(["true"]).ok
    assert len(known.read_text().splitlines()) == 1  # nothing appended the second time


def test_accept_new_honours_hash_known_hosts(sshd: SshServer, isolated_home: Path) -> None:
    known = isolated_home / "known_hosts"
    config = isolated_home / "ssh_config"
    config.write_text("Host *\n  HashKnownHosts yes\n")
    host = host_for(sshd, known_hosts=str(known))
    with SshTarget(host, accept_new_host_key=True, ssh_config_path=str(config)) as t:
        t.run(["true"])
    text = known.read_text()
    assert text.startswith("|1|") and "127.0.0.1" not in text
    with SshTarget(host, ssh_config_path=str(config)) as t:
        assert t.run(["true"]).ok  # hashed entry matched


def test_changed_host_key_is_refused_even_with_accept_new(
    sshd: SshServer, isolated_home: Path, tmp_path: Path
) -> None:
    other = new_key(tmp_path, "impostor")
    other_line = " ".join(other.with_suffix(".pub").read_text().split()[:2])
    known = isolated_home / "known_hosts"
    known.write_text(f"[127.0.0.1]:{sshd.port} {other_line}\n")
    for accept in (False, True):
        t = SshTarget(host_for(sshd, known_hosts=str(known)), accept_new_host_key=accept)
        with pytest.raises(HostKeyError) as err:
            t.run(["true"])
        t.close()
        assert "CHANGED" in err.value.message
        assert keygen_fingerprint(other.with_suffix(".pub")) in err.value.message
        assert keygen_fingerprint(sshd.host_key.with_suffix(".pub")) in err.value.message
        assert f"ssh-keygen -f {known} -R '[127.0.0.1]:{sshd.port}'" in (err.value.hint or "")
    assert known.read_text() == f"[127.0.0.1]:{sshd.port} {other_line}\n"


def test_default_known_hosts_is_home_ssh(sshd: SshServer, isolated_home: Path) -> None:
    (isolated_home / ".ssh" / "known_hosts").write_text(sshd.known_hosts.read_text())
    with SshTarget(host_for(sshd, known_hosts=None)) as t:
        assert t.run(["true"]).ok


# -- connection failures -------------------------------------------------------------------


def test_wrong_client_key_is_an_auth_error(
    sshd: SshServer, isolated_home: Path, tmp_path: Path
) -> None:
    wrong = new_key(tmp_path, "wrong")
    t = SshTarget(host_for(sshd, identity=str(wrong)))
    with pytest.raises(ConnectError) as err:
        t.run(["true"])
    assert f"authentication failed for {sshd.user}@127.0.0.1:{sshd.port}" in err.value.message
    assert str(wrong) in (err.value.hint or "") and "ssh-agent" in (err.value.hint or "")
    t.close()


def test_missing_identity_file_is_a_config_error(sshd: SshServer, isolated_home: Path) -> None:
    t = SshTarget(host_for(sshd, identity=str(isolated_home / "no_such_key")))
    with pytest.raises(ConfigError, match="no_such_key"):
        t.run(["true"])


def test_closed_port_fails_fast(isolated_home: Path, sshd: SshServer) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, never listening: connections are refused
        t = SshTarget(host_for(sshd, port=port), connect_timeout=3)
        start = time.monotonic()
        with pytest.raises(ConnectError) as err:
            t.run(["true"])
    assert time.monotonic() - start < 3
    assert f"127.0.0.1:{port}" in err.value.message and "refused" in err.value.message


def test_unresolvable_host(isolated_home: Path, sshd: SshServer) -> None:
    t = SshTarget(host_for(sshd, address="no-such-host.invalid"), connect_timeout=3)
    with pytest.raises(ConnectError, match=r"cannot resolve host name 'no-such-host\.invalid'"):
        t.run(["true"])


def test_silent_server_times_out(isolated_home: Path, sshd: SshServer) -> None:
    """A port that accepts but never speaks SSH (a hung sshd, a wrong service)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        t = SshTarget(host_for(sshd, port=port), connect_timeout=1)
        start = time.monotonic()
        with pytest.raises(ConnectError) as err:
            t.run(["true"])
        assert time.monotonic() - start < 3
    assert f"127.0.0.1:{port} did not answer as an SSH server" in err.value.message


def test_non_ssh_server_is_named(isolated_home: Path, sshd: SshServer) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]

        def answer() -> None:
            conn, _ = listener.accept()
            conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
            conn.close()

        threading.Thread(target=answer, daemon=True).start()
        t = SshTarget(host_for(sshd, port=port), connect_timeout=2)
        with pytest.raises(ConnectError) as err:
            t.run(["true"])
    assert f"127.0.0.1:{port}" in err.value.message


# -- ~/.ssh/config -------------------------------------------------------------------------


def write_ssh_config(home: Path, text: str) -> None:
    path = home / ".ssh" / "config"
    path.write_text(text)
    path.chmod(0o600)


def test_ssh_config_alias_is_honoured(sshd: SshServer, isolated_home: Path) -> None:
    write_ssh_config(
        isolated_home,
        f"Host myalias\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {sshd.user}\n"
        f"  IdentityFile {sshd.client_key}\n  IdentitiesOnly yes\n",
    )
    host = HostConfig(name="gpu", address="myalias", known_hosts=str(sshd.known_hosts))
    with SshTarget(host) as t:
        assert t.label == f"gpu ({sshd.user}@127.0.0.1:{sshd.port})"
        assert t.run(["echo", "via alias"]).stdout == b"via alias\n"


def test_hosts_toml_fields_override_ssh_config(
    sshd: SshServer, isolated_home: Path, tmp_path: Path
) -> None:
    wrong = new_key(tmp_path, "wrong")
    write_ssh_config(
        isolated_home,
        f"Host myalias\n  HostName 127.0.0.1\n  Port 1\n  User nobody\n  IdentityFile {wrong}\n",
    )
    host = host_for(sshd, address="myalias")  # user, port, identity from hosts.toml
    with SshTarget(host) as t:
        assert t.run(["true"]).ok


def test_proxy_jump_through_a_verified_hop(sshd: SshServer, isolated_home: Path) -> None:
    write_ssh_config(
        isolated_home,
        f"Host jump\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {sshd.user}\n"
        f"  IdentityFile {sshd.client_key}\n"
        f"Host inner\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {sshd.user}\n"
        f"  IdentityFile {sshd.client_key}\n  ProxyJump jump\n",
    )
    host = HostConfig(name="gpu", address="inner", known_hosts=str(sshd.known_hosts))
    with SshTarget(host) as t:
        assert t.run(["echo", "hop"]).stdout == b"hop\n"
        # The tunnel really goes through the hop: the target's socket is a channel.
        assert isinstance(t.transport().sock, paramiko.Channel)
    empty = isolated_home / "empty_known_hosts"
    with pytest.raises(HostKeyError, match=r"not known"):
        SshTarget(replace(host, known_hosts=str(empty))).run(["true"])


def test_missing_ssh_config_path_is_a_config_error(sshd: SshServer, isolated_home: Path) -> None:
    t = SshTarget(host_for(sshd), ssh_config_path=str(isolated_home / "nope"))
    with pytest.raises(ConfigError, match="nope"):
        t.run(["true"])


# -- dropped links -------------------------------------------------------------------------


def test_killed_sessions_mid_command_raise_connect_error(
    target: SshTarget, sshd: SshServer
) -> None:
    target.run(["true"])  # connected
    tag = f"{time.time() % 1000 + 20:.4f}"  # unique sleep length, to clean up the orphan
    outcome: dict[str, BaseException | None] = {}

    def worker() -> None:
        try:
            target.run(["sleep", tag])
            outcome["error"] = None
        except BaseException as e:
            outcome["error"] = e

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 5
        while not processes_with(f"sleep {tag}") and time.monotonic() < deadline:
            time.sleep(0.02)  # wait until the command really runs
        start = time.monotonic()
        assert sshd.kill_sessions() >= 1
        thread.join(timeout=10)
        assert not thread.is_alive(), "run() hung after the link dropped"
        assert time.monotonic() - start < 5
    finally:
        for pid in processes_with(f"sleep {tag}"):  # the program outlives its session
            os.kill(pid, 9)
    err = outcome["error"]
    assert isinstance(err, ConnectError) and "lost" in err.message and "sleep" in err.message
    # The next call reconnects transparently.
    assert target.run(["echo", "back"]).stdout == b"back\n"


def test_killed_sessions_mid_read_raise_connect_error(
    target: SshTarget, sshd: SshServer, tmp_path: Path
) -> None:
    big = tmp_path / "big.bin"
    with open(big, "wb") as f:
        f.truncate(400 * 1024 * 1024)  # sparse: cheap to make, slow enough to send
    target.stat(str(big))  # connected, SFTP open
    outcome: dict[str, BaseException | None] = {}

    def worker() -> None:
        try:
            target.read_bytes(str(big))
            outcome["error"] = None
        except BaseException as e:
            outcome["error"] = e

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    time.sleep(0.3)
    sshd.kill_sessions()
    thread.join(timeout=15)
    assert not thread.is_alive(), "read_bytes() hung after the link dropped"
    err = outcome["error"]
    assert isinstance(err, ConnectError) and str(big) in err.message, err
    (tmp_path / "small").write_bytes(b"data")
    assert target.read_bytes(str(tmp_path / "small")) == b"data"  # reconnected


def test_close_is_idempotent_and_reopens(target: SshTarget) -> None:
    target.run(["true"])
    target.close()
    target.close()
    assert target.run(["echo", "again"]).stdout == b"again\n"


def test_import_does_not_load_paramiko() -> None:
    code = (
        "import sys, harness.targets.ssh; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('paramiko', 'fabric', 'invoke', 'cryptography')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
