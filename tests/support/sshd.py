"""A real OpenSSH ``sshd`` on loopback for the tests, plus a HOME that hides the developer's.

Mocks of Paramiko would test our assumptions about SSH, not SSH. This starts the real server
(``/usr/sbin/sshd -D -e``) on 127.0.0.1 with a free port, keys generated for this run by
``ssh-keygen``, and a ``known_hosts`` file that trusts exactly this server, then tears it down
at the end of the session. ``kill_sessions()`` SIGKILLs the per-connection sshd processes to
simulate a dropped link while the listener stays up for the next test.

Wire it in ``tests/conftest.py`` with::

    from tests.support.sshd import sshd, isolated_home  # noqa: F401
"""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

SSHD = "/usr/sbin/sshd"
SSH_KEYGEN = shutil.which("ssh-keygen") or "/usr/bin/ssh-keygen"
START_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class SshServer:
    """One running sshd and everything a client needs to reach it."""

    host: str
    port: int
    user: str
    client_key: Path  # private key in authorized_keys
    known_hosts: Path  # trusts exactly this server's host key
    host_pubkey_line: str  # "ssh-ed25519 AAAA..." (no comment)
    host_key: Path  # the server's private host key (its .pub sits next to it)
    root: Path  # temp dir with config, keys, log
    pid: int = 0  # the listener

    @property
    def log(self) -> Path:
        """sshd's stderr (``-e``), for debugging a failing test."""
        return self.root / "sshd.log"

    def session_pids(self) -> list[int]:
        """Per-connection sshd processes under the listener (not the listener itself)."""
        return [p for p in _descendants(self.pid) if _comm(p).startswith("sshd")]

    def kill_sessions(self) -> int:
        """SIGKILL every per-connection sshd child of the listener; return how many.

        The clients' TCP connections then drop as if the link died; the listener stays up.
        """
        pids = self.session_pids()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return len(pids)

    def host_entry(self, name: str = "box", python: str = "python3", **over: Any) -> str:
        """A ``[hosts.NAME]`` TOML table pointing at this server; ``over`` adds/replaces keys."""
        values: dict[str, Any] = {
            "address": self.host,
            "port": self.port,
            "user": self.user,
            "identity": str(self.client_key),
            "known_hosts": str(self.known_hosts),
            "python": python,
        }
        values.update(over)
        lines = [f"[hosts.{name}]"]
        lines += [f"{key} = {_toml_value(value)}" for key, value in values.items()]
        return "\n".join(lines) + "\n"


def _toml_value(value: Any) -> str:
    """TOML for the few value kinds a host table holds (JSON strings are valid TOML)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, Path):
        value = str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        inner = ", ".join(f"{json.dumps(str(k))} = {_toml_value(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r} as TOML")


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return _children_by_scan(pid)
    return [int(p) for p in text.split()]


def _children_by_scan(pid: int) -> list[int]:
    """Fallback when the kernel lacks /proc/PID/task/PID/children."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid ..." -- comm may contain spaces and parens.
        if int(stat.rpartition(")")[2].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def _descendants(pid: int) -> list[int]:
    out: list[int] = []
    todo = _children(pid)
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(_children(p))
    return out


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _keygen(path: Path, comment: str) -> None:
    subprocess.run(
        [SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
        check=True,
        capture_output=True,
    )


def _banner(port: int) -> bool:
    return _banner_at("127.0.0.1", port)


def _banner_at(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1.0) as s:
            return s.recv(64).startswith(b"SSH-")
    except OSError:
        return False


def _write_config(root: Path, port: int, address: str = "127.0.0.1") -> Path:
    sftp = "internal-sftp"  # no exec per SFTP session: faster, and no path to guess
    config = root / "sshd_config"
    config.write_text(
        "\n".join(
            [
                f"Port {port}",
                f"ListenAddress {address}",
                f"HostKey {root / 'host_ed25519'}",
                f"PidFile {root / 'sshd.pid'}",
                f"AuthorizedKeysFile {root / 'authorized_keys'}",
                "StrictModes no",
                "UsePAM no",
                "PermitRootLogin yes",
                "PubkeyAuthentication yes",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "AllowTcpForwarding yes",  # ProxyJump tests tunnel through this same server
                "UseDNS no",
                "PrintMotd no",
                "PrintLastLog no",
                "MaxStartups 100:30:200",
                "MaxSessions 100",
                "LogLevel VERBOSE",
                f"Subsystem sftp {sftp}",
                "",
            ]
        )
    )
    return config


def start_sshd(root: Path) -> tuple[SshServer, subprocess.Popen[bytes]]:
    """Generate keys and config under ``root`` and start sshd; return once it speaks SSH."""
    return start_sshd_at(root, "127.0.0.1", [])


def start_sshd_at(
    root: Path, address: str, launcher: list[str]
) -> tuple[SshServer, subprocess.Popen[bytes]]:
    """:func:`start_sshd` on ``address``, started through ``launcher`` (e.g. ``ip netns exec
    NS``: then on port 22 of that namespace, which no other test can hold)."""
    if not os.path.exists(SSHD):
        pytest.fail(
            f"{SSHD} not found: the SSH tests need a real OpenSSH server. "
            "Install it (apt-get install openssh-server) and rerun.",
            pytrace=False,
        )
    root.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        # sshd refuses to start without its privilege-separation directory.
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    host_key, client_key = root / "host_ed25519", root / "client_ed25519"
    _keygen(host_key, "harness-test-host")
    _keygen(client_key, "harness-test-client")
    shutil.copy(client_key.with_suffix(".pub"), root / "authorized_keys")
    host_pub = " ".join(host_key.with_suffix(".pub").read_text().split()[:2])

    last_log = ""
    for _attempt in range(5):  # the free port can be taken between probe and bind
        port = 22 if launcher else _free_port()
        config = _write_config(root, port, address)
        check = subprocess.run([SSHD, "-t", "-f", str(config)], capture_output=True, text=True)
        if check.returncode != 0:
            pytest.fail(f"sshd rejected the test config: {check.stderr.strip()}", pytrace=False)
        log = open(root / "sshd.log", "ab")  # noqa: SIM115 -- handed to the child
        proc = subprocess.Popen(
            [*launcher, SSHD, "-D", "-e", "-f", str(config)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline and proc.poll() is None:
            if _banner_at(address, port):
                known_hosts = root / "known_hosts"
                name = address if port == 22 else f"[{address}]:{port}"
                known_hosts.write_text(f"{name} {host_pub}\n")
                known_hosts.chmod(0o600)
                server = SshServer(
                    host=address,
                    port=port,
                    user=getpass.getuser(),
                    client_key=client_key,
                    known_hosts=known_hosts,
                    host_pubkey_line=host_pub,
                    host_key=host_key,
                    root=root,
                    pid=proc.pid,
                )
                return server, proc
            time.sleep(0.05)
        stop_sshd(proc)
        last_log = (root / "sshd.log").read_text(errors="replace")[-2000:]
    pytest.fail(f"sshd did not start on {address}; its log:\n{last_log}", pytrace=False)


def stop_sshd(proc: subprocess.Popen[bytes]) -> None:
    """Stop the listener and every session it still has."""
    for pid in _descendants(proc.pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshServer]:
    """A real OpenSSH server for the whole test session (see module docstring)."""
    server, proc = start_sshd(tmp_path_factory.mktemp("sshd"))
    try:
        yield server
    finally:
        stop_sshd(proc)


@pytest.fixture
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME -> a temp dir with an empty ``.ssh/``; no ssh-agent.

    So that no test reads (or appends to) the developer's own ``~/.ssh`` files or uses their
    agent's keys, which would make results depend on whose machine runs them.
    """
    home = tmp_path / "home"
    (home / ".ssh").mkdir(mode=0o700, parents=True)
    monkeypatch.setenv("HOME", str(home))
    # No background connection servers unless a test asks (test_mux does): each would hold an
    # sshd session until the fixture tears down, and cost ~7 s of CPU across the suite.
    monkeypatch.setenv("HARNESS_SSH_PERSIST", "0")
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    monkeypatch.delenv("SSH_AGENT_PID", raising=False)
    return home
