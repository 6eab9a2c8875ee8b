"""Several test hosts on one machine: network namespaces on a bridge, each with its own sshd.

Multi-host features (groups, sameness, all-or-nothing patches, torchrun and Ray across nodes)
must be tested across real network boundaries, not on one loopback address. Each node here is
a network namespace (``ip netns``) with its own address on a private bridge (``10.77.0.0/24``,
reachable from this namespace and between nodes, nowhere else: no route out, no forwarding)
and its own real OpenSSH ``sshd`` bound to that address -- so a test talks to ``10.77.0.11``
and ``10.77.0.12`` as it would to two boxes. The filesystem is shared, as on a cluster with a
shared home: each node gets its own venv path only when a test says so.

Needs root and iproute2 (CI runs as root on Debian; ``ip`` is there). The fixture skips with a
clear reason when namespaces cannot be made.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.sshd import SSHD, SshServer, _banner_at, start_sshd_at, stop_sshd

BRIDGE = "hxbr0"
SUBNET = "10.77.0"
IP = shutil.which("ip") or "/usr/sbin/ip"
#: Each node's own scratch where programs expect a host's /tmp to be theirs alone (Ray keeps
#: its session -- sockets, logs -- under one path that every node of a cluster uses): a
#: private tmpfs at /tmp/harness-ray in a mount namespace of the node's sshd, inherited by
#: every session. The rest of the filesystem stays shared, as on a cluster with a shared home.
PRIVATE_TMP = [
    "unshare", "-m", "--propagation", "private", "sh", "-c",
    "mkdir -p /tmp/harness-ray && mount -t tmpfs -o size=1g tmpfs /tmp/harness-ray"
    ' && exec "$0" "$@"',
]  # fmt: skip


@dataclass(frozen=True)
class Node:
    name: str  # the namespace, e.g. hxn1
    address: str  # e.g. 10.77.0.11
    ssh: SshServer

    def exec(self, *argv: str) -> list[str]:
        """argv that runs inside this node's network namespace."""
        return [IP, "netns", "exec", self.name, *argv]


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run([IP, *args], capture_output=True, text=True, check=check)


def available() -> str | None:
    """None if namespaces can be made here, else why not."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    if not Path(IP).exists() or not Path(SSHD).exists():
        return "needs iproute2 and openssh-server"
    probe = "hxprobe"
    made = _ip("netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"ip netns add failed: {made.stderr.strip()}"
    _ip("netns", "del", probe, check=False)
    return None


def _cleanup(count: int) -> None:
    for i in range(1, count + 1):
        _ip("netns", "del", f"hxn{i}", check=False)
        _ip("link", "del", f"hxv{i}", check=False)
    _ip("link", "del", BRIDGE, check=False)


@contextlib.contextmanager
def nodes(root: Path, count: int) -> Iterator[list[Node]]:
    """``count`` namespaces on a fresh bridge, each with a started sshd; torn down after."""
    _cleanup(count + 2)  # leftovers of a killed run
    _ip("link", "add", BRIDGE, "type", "bridge")
    _ip("addr", "add", f"{SUBNET}.1/24", "dev", BRIDGE)
    _ip("link", "set", BRIDGE, "up")
    procs = []
    made: list[Node] = []
    try:
        for i in range(1, count + 1):
            ns, host, peer, addr = f"hxn{i}", f"hxv{i}", f"hxp{i}", f"{SUBNET}.{10 + i}"
            _ip("netns", "add", ns)
            _ip("link", "add", host, "type", "veth", "peer", "name", peer)
            _ip("link", "set", peer, "netns", ns)
            _ip("link", "set", host, "master", BRIDGE)
            _ip("link", "set", host, "up")
            _ip("netns", "exec", ns, IP, "addr", "add", f"{addr}/24", "dev", peer)
            _ip("netns", "exec", ns, IP, "link", "set", peer, "up")
            _ip("netns", "exec", ns, IP, "link", "set", "lo", "up")
            server, proc = start_sshd_at(root / ns, addr, [IP, "netns", "exec", ns, *PRIVATE_TMP])
            procs.append(proc)
            made.append(Node(ns, addr, server))
        deadline = time.monotonic() + 10
        while not all(_banner_at(n.address, n.ssh.port) for n in made):
            if time.monotonic() > deadline:
                raise RuntimeError("a namespaced sshd did not answer through the bridge")
            time.sleep(0.05)
        yield made
    finally:
        for proc in procs:
            stop_sshd(proc)
        _cleanup(count)


def inventory(
    root: Path, members: list[Node], python: dict[str, str], workdir: dict[str, str] | None = None
) -> dict[str, str]:
    """hosts.toml for ``members`` (each with its ``python`` and optional ``workdir``) plus the
    group ``nodes``; returns the CLI environment that uses it (a HOME of its own, no kept
    connections, a private cache)."""
    text = "".join(
        n.ssh.host_entry(n.name, python=python[n.name],
                         **({"workdir": workdir[n.name]} if workdir else {})) + "\n"
        for n in members
    )  # fmt: skip
    names = ", ".join(f'"{n.name}"' for n in members)
    hosts = root / "hosts.toml"
    hosts.write_text(text + f"[groups]\nnodes = [{names}]\n")
    home = root / "home"
    (home / ".ssh").mkdir(parents=True, exist_ok=True)
    return {"HARNESS_HOSTS": str(hosts), "HOME": str(home), "HARNESS_SSH_PERSIST": "0",
            "HARNESS_CACHE": str(root / "cache")}  # fmt: skip


@pytest.fixture(scope="module")
def three_nodes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Node]]:
    why = available()
    if why:
        pytest.skip(why)
    with nodes(tmp_path_factory.mktemp("nodes"), 3) as got:
        yield got
