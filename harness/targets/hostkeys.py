"""Host key policy: verify against known_hosts, never trust a new key silently.

Fabric installs Paramiko's ``AutoAddPolicy`` on every connection and never reads known_hosts,
which would let anyone on the path impersonate the GPU box. We put back OpenSSH's behaviour:

* a known key must match (a *changed* key is refused, with the ``ssh-keygen -R`` line to run
  once the user has checked why it changed);
* an *unknown* key is refused with its ``SHA256:`` fingerprint, unless the user passed
  ``--accept-new-host-key`` (OpenSSH's ``StrictHostKeyChecking=accept-new``), in which case it is
  appended to the known_hosts file and a warning says so.

This module imports Paramiko at import time; :mod:`harness.targets.ssh` imports it lazily so
that ``harness --help`` stays fast.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import paramiko

from harness.errors import HostKeyError

log = logging.getLogger(__name__)

SSH_PORT = 22
USER_KNOWN_HOSTS = "~/.ssh/known_hosts"
SYSTEM_KNOWN_HOSTS = "/etc/ssh/ssh_known_hosts"
ACCEPT_FLAG = "--accept-new-host-key"


def fingerprint(key: Any) -> str:
    """OpenSSH's fingerprint of a public key: ``SHA256:`` + unpadded base64 of its sha256.

    Same text as ``ssh-keygen -lf``, so the user can compare it with what the box's admin
    sees (``ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub``).
    """
    digest = hashlib.sha256(key.asbytes()).digest()
    return "SHA256:" + base64.b64encode(digest).decode("ascii").rstrip("=")


def known_hosts_name(host: str, port: int) -> str:
    """The name OpenSSH and Paramiko file a host under: ``host`` or ``[host]:port``."""
    return host if port == SSH_PORT else f"[{host}]:{port}"


def split_known_hosts_name(name: str) -> tuple[str, int]:
    """Inverse of :func:`known_hosts_name`; Paramiko hands policies the joined form."""
    if name.startswith("[") and "]:" in name:
        host, _, port = name[1:].rpartition("]:")
        if port.isdigit():
            return host, int(port)
    return name, SSH_PORT


@dataclass(frozen=True)
class KnownHostsFiles:
    """Where keys are looked up, and the one file new keys are appended to.

    Attributes:
        user: read and appended to (hosts.toml ``known_hosts`` or ``~/.ssh/known_hosts``).
        system: read only, never written (``/etc/ssh/ssh_known_hosts``).
        hash_names: store new entries with hashed host names (ssh_config ``HashKnownHosts``).
    """

    user: Path
    system: tuple[Path, ...] = ()
    hash_names: bool = False

    @classmethod
    def resolve(
        cls,
        configured: str | None,
        *,
        ssh_config_file: str | None = None,
        hash_names: bool = False,
    ) -> KnownHostsFiles:
        """Pick the files for one host.

        An explicit ``known_hosts`` in hosts.toml is the whole truth for that host (no system
        file), so a test or a pinned setup cannot be widened by what the machine trusts.
        Otherwise the ssh_config ``UserKnownHostsFile`` (first entry) or ``~/.ssh/known_hosts``,
        plus the system file read-only, as OpenSSH does.
        """
        if configured:
            return cls(Path(configured).expanduser(), (), hash_names)
        user = ssh_config_file or USER_KNOWN_HOSTS
        return cls(Path(user).expanduser(), (Path(SYSTEM_KNOWN_HOSTS),), hash_names)

    def load_into(self, client: Any) -> None:
        """Load the files into a Paramiko ``SSHClient`` (missing files are simply empty).

        System files go to the client's "system" set, which Paramiko never saves back.
        Hashed (``|1|salt|hash``) entries are matched by Paramiko's ``HostKeys``.
        """
        for path in self.system:
            if path.is_file():
                client.load_system_host_keys(str(path))
        if self.user.is_file():
            client.get_host_keys().load(str(self.user))

    def remove_hint(self, name: str) -> str:
        """The command that forgets a host's old key in our known_hosts file."""
        return f"ssh-keygen -f {self.user} -R '{name}'"


def append_known_host(path: Path, name: str, key: Any, *, hash_name: bool = False) -> str:
    """Append one OpenSSH-format line for ``key`` under ``name``; return the line.

    Creates the parent directory 0700 and the file 0600 (as ``ssh`` would), and appends with
    ``O_APPEND`` so that a concurrent ``ssh`` writing the same file does not lose lines.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    host_field = paramiko.HostKeys.hash_host(name) if hash_name else name
    line = f"{host_field} {key.get_name()} {key.get_base64()}\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        needs_newline = False
        size = os.fstat(fd).st_size
        if size:
            with open(path, "rb") as f:
                f.seek(size - 1)
                needs_newline = f.read(1) != b"\n"
        os.write(fd, (b"\n" if needs_newline else b"") + line.encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    return line


def unknown_key_error(name: str, key: Any, files: KnownHostsFiles) -> HostKeyError:
    """The refusal for a key we have never seen, naming everything needed to check it."""
    host, port = split_known_hosts_name(name)
    return HostKeyError(
        f"host key for {host}:{port} is not known: {key.get_name()} {fingerprint(key)} "
        f"(not in {files.user})",
        hint=f"check the fingerprint with the box's admin, then rerun with {ACCEPT_FLAG} "
        f"to add it to {files.user}",
    )


def changed_key_error(
    host: str, port: int, expected: Any, got: Any, files: KnownHostsFiles
) -> HostKeyError:
    """The refusal for a key that differs from the one on file (possible impersonation)."""
    name = known_hosts_name(host, port)
    return HostKeyError(
        f"HOST KEY FOR {host}:{port} HAS CHANGED: known_hosts has {expected.get_name()} "
        f"{fingerprint(expected)}, the server sent {got.get_name()} {fingerprint(got)}",
        hint="if the box was reinstalled, forget the old key with: "
        f"{files.remove_hint(name)} (then rerun with {ACCEPT_FLAG})",
    )


class HostKeyPolicy(paramiko.MissingHostKeyPolicy):  # type: ignore[misc,unused-ignore]
    """Paramiko policy for keys not in known_hosts: refuse, or append when accept_new.

    Paramiko calls :meth:`missing_host_key` only for *unknown* hosts; a mismatch raises
    ``BadHostKeyException`` inside ``connect`` instead, which the SSH target turns into
    :func:`changed_key_error`.
    """

    def __init__(self, files: KnownHostsFiles, *, accept_new: bool = False) -> None:
        self.files = files
        self.accept_new = accept_new
        #: Lines appended during this process, for callers that want to report them.
        self.added: list[str] = []

    def missing_host_key(self, client: Any, hostname: str, key: Any) -> None:
        if not self.accept_new:
            raise unknown_key_error(hostname, key, self.files)
        try:
            line = append_known_host(
                self.files.user, hostname, key, hash_name=self.files.hash_names
            )
        except OSError as e:
            raise HostKeyError(
                f"cannot add the host key for {hostname} to {self.files.user}: {e.strerror}",
                hint="fix the file's permissions or set known_hosts for this host in hosts.toml",
            ) from e
        client.get_host_keys().add(hostname, key.get_name(), key)
        self.added.append(line)
        log.warning(
            "Permanently added %s key %s for %s to %s",
            key.get_name(),
            fingerprint(key),
            hostname,
            self.files.user,
        )
