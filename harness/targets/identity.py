"""What a kept SSH connection *is*: every field that decides what its commands touch.

A kept connection (:mod:`harness.targets.mux`) is found by a hash of this identity and says
it again in its hello, so a command never reuses a connection made for another endpoint,
key, ``known_hosts``, ProxyJump route, interpreter or run environment. Before, the
interpreter was left out: after ``python =`` changed in hosts.toml (or two inventories named
a box the same), probes went to the old interpreter for up to the idle timeout.

Stdlib only, no Paramiko: the client side of the mux must stay cheap. The ProxyJump route and
an alias's HostName live in ssh_config files, which are identified by inode, size and mtime
(``Include``d files too), so an edited config means a new connection, as OpenSSH's ``%C``
would after resolving the alias.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from harness import __version__
from harness.targets.ssh.entry import HostConfig

#: OpenSSH stops following ``Include`` after this many levels.
MAX_INCLUDE_DEPTH = 16
_INCLUDE = re.compile(r"^\s*include(?:\s*=\s*|\s+)(.+?)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class ConnectionIdentity:
    """Everything that decides where a connection goes, how it is checked, and what it runs.

    ``protocol`` is the mux wire protocol: a server speaking another one is another thing.
    ``config_files`` pairs each ssh_config file (``Include``s followed) with its
    ``[inode, size, mtime_ns]`` or ``None`` when absent.
    """

    name: str
    address: str
    port: int | None
    user: str | None
    identity: str | None
    known_hosts: str | None
    ssh_config: str | None
    config_files: tuple[tuple[str, tuple[int, int, int] | None], ...]
    python: str
    env: tuple[tuple[str, str], ...]
    workdir: str | None
    home: str
    uid: int
    harness: str
    protocol: int

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values (lists, not tuples): what a hello carries and is compared to."""
        return {
            "name": self.name,
            "address": self.address,
            "port": self.port,
            "user": self.user,
            "identity": self.identity,
            "known_hosts": self.known_hosts,
            "ssh_config": self.ssh_config,
            "config_files": [[p, None if i is None else list(i)] for p, i in self.config_files],
            "python": self.python,
            "env": [list(kv) for kv in self.env],
            "workdir": self.workdir,
            "home": self.home,
            "uid": self.uid,
            "harness": self.harness,
            "protocol": self.protocol,
        }

    @property
    def key(self) -> str:
        """Short hash of every field: the kept connection's socket name."""
        blob = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(blob).hexdigest()[:16]


def connection_identity(
    host: HostConfig, ssh_config_path: str | None, *, protocol: int
) -> ConnectionIdentity:
    """The identity of a connection to ``host`` made from this process, now (stats only)."""
    home = os.path.expanduser("~")
    if ssh_config_path:
        given = os.path.abspath(os.path.expanduser(ssh_config_path))
        roots = [(given, os.path.dirname(given))]
    else:
        user_dir = os.path.join(home, ".ssh")
        roots = [(os.path.join(user_dir, "config"), user_dir), ("/etc/ssh/ssh_config", "/etc/ssh")]
    files = [(p, _file_id(p)) for p in config_files(roots)]
    return ConnectionIdentity(
        name=host.name,
        address=host.address,
        port=host.port,
        user=host.user,
        identity=_abs(host.identity),
        known_hosts=_abs(host.known_hosts),
        ssh_config=_abs(ssh_config_path),
        config_files=tuple(files),
        python=host.python,
        env=tuple(sorted((str(k), str(v)) for k, v in host.env.items())),
        workdir=host.workdir,
        home=home,
        uid=os.geteuid(),
        harness=__version__,
        protocol=protocol,
    )


def include_patterns(text: str, base: str) -> list[str]:
    """Pure: the ``Include`` patterns of one ssh_config text, made absolute against ``base``.

    OpenSSH resolves a relative ``Include`` against ``~/.ssh`` in a user config and
    ``/etc/ssh`` in the system one; ``~`` is expanded; several patterns may share a line.
    """
    out = []
    for line in text.splitlines():
        m = _INCLUDE.match(line)
        if not m or line.lstrip().startswith("#"):
            continue
        for word in m.group(1).split():
            word = word.strip('"')
            if word.startswith("#"):
                break
            word = os.path.expanduser(word)
            out.append(word if os.path.isabs(word) else os.path.join(base, word))
    return out


def config_files(roots: Iterable[tuple[str, str]]) -> list[str]:
    """Each root ssh_config file, then every file it ``Include``s (depth-first, no repeats)."""
    seen: list[str] = []

    def visit(path: str, base: str, depth: int) -> None:
        if path in seen or depth > MAX_INCLUDE_DEPTH:
            return
        seen.append(path)
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            return
        for pattern in include_patterns(text, base):
            for found in sorted(glob.glob(pattern)) or [pattern]:
                visit(found, base, depth + 1)

    for path, base in roots:
        visit(path, base, 0)
    return seen


def _abs(path: str | None) -> str | None:
    return None if path is None else os.path.abspath(os.path.expanduser(path))


def _file_id(path: str) -> tuple[int, int, int] | None:
    """Identity of a config file's current contents (cheap: one stat, no read)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)
