"""Target kinds and the one function that turns ``-t SPEC`` into a Target.

Only this package talks to the outside world (processes, files, SSH, pip).
"""

from __future__ import annotations

import difflib

from harness.config import HostsConfig
from harness.errors import UsageError
from harness.targets.base import CommandResult, FileStat, Target

__all__ = ["CommandResult", "FileStat", "Target", "open_target", "target_kinds"]


def target_kinds(hosts: HostsConfig) -> list[str]:
    return ["local", "local:PYTHON", "venv:PATH", "pypi:NAME==VER[,...]", *sorted(hosts.hosts)]


def open_target(
    spec: str | None,
    hosts: HostsConfig,
    *,
    accept_new_host_key: bool = False,
    connect_timeout: float = 10.0,
) -> Target:
    """``None`` -> hosts.toml's default, else ``local``. Nothing connects until first use.

    A spec naming several hosts (a group, ``a,b``) raises
    :class:`harness.group.fanout.GroupTarget`: the CLI then runs the command once per host.
    """
    from harness.group.spec import expand

    group = expand(spec, hosts)
    if group is not None:
        from harness.group.fanout import GroupTarget

        raise GroupTarget(group)
    if spec is None or spec == "":
        spec = hosts.default or "local"
    kind, sep, rest = spec.partition(":")
    if spec == "local":
        from harness.targets.local import LocalTarget

        return LocalTarget()
    if sep and kind == "local":
        from harness.targets.local import LocalTarget

        return LocalTarget(rest)
    if sep and kind == "venv":
        from harness.targets.local import venv_target

        return venv_target(rest)
    if sep and kind == "pypi":
        from harness.targets.pypi import PypiTarget

        return PypiTarget(rest)
    if spec in hosts.hosts:
        from harness.targets.ssh import SshTarget

        return SshTarget(
            hosts.hosts[spec],
            accept_new_host_key=accept_new_host_key,
            connect_timeout=connect_timeout,
        )
    close = difflib.get_close_matches(spec, list(hosts.hosts), n=3)
    where = f" in {hosts.path}" if hosts.path else " (no hosts.toml found)"
    hint = f"did you mean {', '.join(close)}? " if close else ""
    raise UsageError(
        f"unknown target {spec!r}: not a host{where} nor a target kind",
        hint + "targets: " + ", ".join(target_kinds(hosts)),
    )
