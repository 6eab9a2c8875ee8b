"""A ``[hosts.NAME]`` entry of the ``ssh`` kind (the default): where the host is, how to
reach it, and the interpreter and run environment on it. Parsed here, not in
:mod:`harness.config`: each target kind reads its own entries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.config import TableChecker, expand
from harness.targets.entries import Entry, common_keys, parse_common

# key -> (expected TOML type, example shown in the hint when the type is wrong)
_HOST_KEYS: dict[str, tuple[type, str]] = {
    "address": (str, 'address = "gpu-box"'),
    "user": (str, 'user = "root"'),
    "port": (int, "port = 22"),
    "identity": (str, 'identity = "~/.ssh/id_ed25519"'),
    "known_hosts": (str, 'known_hosts = "~/.ssh/known_hosts"'),
    **common_keys(),
    "connect_timeout": (float, "connect_timeout = 30"),
}
_REQUIRED = {"address": 'add address = "HOST" (a hostname, IP or ~/.ssh/config alias)'}


@dataclass(frozen=True, kw_only=True)
class HostConfig(Entry):
    """One ``[hosts.NAME]`` table. Optional fields left ``None`` defer to ~/.ssh/config."""

    address: str
    user: str | None = None
    port: int | None = None
    identity: str | None = None  # path, ``~`` already expanded
    known_hosts: str | None = None  # path, ``~`` already expanded
    #: seconds for each connection step (``None``: :mod:`harness.targets.timeouts`)
    connect_timeout: float | None = None

    @property
    def kind(self) -> str:
        return "ssh"

    def reach(self) -> str:
        """``user@address:port`` as far as hosts.toml says (``harness hosts``' table)."""
        user = f"{self.user}@" if self.user else ""
        port = f":{self.port}" if self.port else ""
        return f"{user}{self.address}{port}"

    def own_listing(self) -> dict[str, Any]:
        return {"address": self.address, "user": self.user, "port": self.port}


def parse_entry(check: TableChecker, name: str, table: dict[str, Any]) -> HostConfig:
    """One ``[hosts.NAME]`` table (``kind = "ssh"``, the default) -> HostConfig, checking its
    keys, types and ranges (the name was checked by the inventory)."""
    common = parse_common(check, name, table, _HOST_KEYS, _REQUIRED)
    port = table.get("port")
    if port is not None and not 1 <= port <= 65535:
        raise check.fail(("hosts", name, "port"), f"{port} is out of range", "a port is 1..65535")
    return HostConfig(
        **common,
        address=table["address"],
        user=table.get("user"),
        port=port,
        identity=expand(table.get("identity")),
        known_hosts=expand(table.get("known_hosts")),
        connect_timeout=table.get("connect_timeout"),
    )
