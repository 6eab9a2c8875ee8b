"""A ``[hosts.NAME]`` entry of the ``ssh`` kind (the default): where the host is, how to
reach it, and the interpreter and run environment on it. Parsed here, not in
:mod:`harness.config`: each target kind reads its own entries.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.config import Linker, TableChecker, expand

# key -> (expected TOML type, example shown in the hint when the type is wrong)
_HOST_KEYS: dict[str, tuple[type, str]] = {
    "address": (str, 'address = "gpu-box"'),
    "user": (str, 'user = "root"'),
    "port": (int, "port = 22"),
    "identity": (str, 'identity = "~/.ssh/id_ed25519"'),
    "known_hosts": (str, 'known_hosts = "~/.ssh/known_hosts"'),
    "python": (str, 'python = "/root/venv/bin/python"'),
    "workdir": (str, 'workdir = "/root/work"'),
    "env": (dict, 'env = { HF_HOME = "/data/hf" }'),
    "timeout": (float, "timeout = 900"),
    "connect_timeout": (float, "connect_timeout = 30"),
}
#: Keys whose value is a number of seconds (a TOML integer or float, > 0).
_SECONDS = ("timeout", "connect_timeout")


@dataclass(frozen=True)
class HostConfig:
    """One ``[hosts.NAME]`` table. Optional fields left ``None`` defer to ~/.ssh/config."""

    name: str
    address: str
    user: str | None = None
    port: int | None = None
    identity: str | None = None  # path, ``~`` already expanded
    known_hosts: str | None = None  # path, ``~`` already expanded
    python: str = "python3"
    workdir: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    #: seconds for one command or probe there, and for each connection step (``None``: the
    #: defaults; see :mod:`harness.targets.timeouts`)
    timeout: float | None = None
    connect_timeout: float | None = None
    source: str | None = None  # "hosts.toml:12" where the table starts, for messages
    #: "hosts.toml:14" per key written in the table, so a late error (an identity that turns
    #: out to be a folder) can name the very line. Not part of equality.
    where: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def kind(self) -> str:
        return "ssh"

    def reach(self) -> str:
        """``user@address:port`` as far as hosts.toml says (``harness hosts``' table)."""
        user = f"{self.user}@" if self.user else ""
        port = f":{self.port}" if self.port else ""
        return f"{user}{self.address}{port}"

    def link(self, check: TableChecker, host: Linker) -> HostConfig:
        return self  # names no other host

    def listing(self) -> dict[str, Any]:
        """What ``harness hosts --json`` shows of the entry."""
        return {
            "address": self.address,
            "user": self.user,
            "port": self.port,
            "python": self.python,
            "workdir": self.workdir,
            "source": self.source,
        }


def parse_entry(check: TableChecker, name: str, table: dict[str, Any]) -> HostConfig:
    """One ``[hosts.NAME]`` table (``kind = "ssh"``, the default) -> HostConfig, checking its
    keys, types and ranges (the name was checked by the inventory)."""
    here = ("hosts", name)
    check.unknown_keys(table, here, _HOST_KEYS)
    for key, value in table.items():
        if key in _SECONDS:
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not 0 < value < float("inf")  # nan and inf too
            ):
                example = f"e.g. {_HOST_KEYS[key][1]}"
                raise check.fail((*here, key), f"expected seconds > 0, got {value!r}", example)
            continue
        check.typed(value, _HOST_KEYS[key][0], (*here, key), _HOST_KEYS[key][1])
    if "address" not in table:
        raise check.fail(
            (*here, "address"),
            "required key missing",
            'add address = "HOST" (a hostname, IP or ~/.ssh/config alias)',
        )
    for key in ("address", "python"):
        if key in table and not table[key].strip():
            raise check.fail((*here, key), "must not be empty", f"e.g. {_HOST_KEYS[key][1]}")
    port = table.get("port")
    if port is not None and not 1 <= port <= 65535:
        raise check.fail((*here, "port"), f"{port} is out of range", "a port is 1..65535")
    env = table.get("env", {})
    for var, value in env.items():
        check.typed(value, str, (*here, "env", var), f'env = {{ {var} = "{value}" }}')
    return HostConfig(
        name=name,
        address=table["address"],
        user=table.get("user"),
        port=port,
        identity=expand(table.get("identity")),
        known_hosts=expand(table.get("known_hosts")),
        python=table.get("python", "python3"),
        workdir=table.get("workdir"),
        env=dict(env),
        timeout=table.get("timeout"),
        connect_timeout=table.get("connect_timeout"),
        source=check.where(here),
        where={key: check.where((*here, key)) for key in table},
    )
