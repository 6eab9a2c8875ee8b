"""Target kinds, and the functions that turn ``-t SPEC`` or a hosts.toml entry into a Target.

Every kind is one :class:`TargetKind` in :data:`KINDS`: how ``-t`` names it, how it opens a
spec (``venv:PATH``), and -- for kinds a hosts.toml entry may be (``kind = "ssh"``, the
default; ``kind = "exec"``, another target behind a command prefix) -- how it parses its
``[hosts.NAME]`` table and opens that entry. A new kind (a group of hosts, a machine reached
some new way) is one module plus one line here; nothing above
``harness.targets`` changes. Kinds are imported when used: ``harness --help`` and local work
never import Fabric.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.config import HostEntry, HostsConfig, TableChecker, read_inventory
from harness.errors import UsageError
from harness.targets.base import Target


def _local(rest: str | None, **_: Any) -> Target:
    from harness.targets.local import from_spec

    return from_spec(rest)


def _venv(rest: str | None, **_: Any) -> Target:
    from harness.targets.local import venv_target

    return venv_target(rest or "")


def _pypi(rest: str | None, *, wheelhouse: Path | None = None, **_: Any) -> Target:
    from harness.targets.pypi import PypiTarget

    return PypiTarget(rest or "", wheelhouse=wheelhouse)


def _ssh_entry(check: TableChecker, name: str, table: dict[str, Any]) -> HostEntry:
    from harness.targets.ssh.entry import parse_entry

    return parse_entry(check, name, table)


def _exec_entry(check: TableChecker, name: str, table: dict[str, Any]) -> HostEntry:
    from harness.targets.wrapped import parse_entry

    return parse_entry(check, name, table)


def _exec_open(entry: HostEntry, **options: Any) -> Target:
    from harness.targets.local import LocalTarget
    from harness.targets.wrapped import ExecEntry, ExecTarget

    assert isinstance(entry, ExecEntry)
    inner = LocalTarget() if entry.inner is None else open_entry(entry.inner, **options)
    return ExecTarget(entry, inner)


def _ssh_open(
    entry: HostEntry,
    *,
    accept_new_host_key: bool = False,
    connect_timeout: float | None = None,
    **_: Any,
) -> Target:
    from harness.targets import timeouts
    from harness.targets.ssh import SshTarget
    from harness.targets.ssh.entry import HostConfig

    assert isinstance(entry, HostConfig)
    if connect_timeout is None:  # $HARNESS_CONNECT_TIMEOUT, else the entry's, else 10 s
        connect_timeout = timeouts.connect_timeout(entry.connect_timeout)
    return SshTarget(
        entry, accept_new_host_key=accept_new_host_key, connect_timeout=connect_timeout
    )


@dataclass(frozen=True)
class TargetKind:
    """One kind of target.

    ``usage``: how ``-t`` names it, for messages. ``spec``: opens ``-t NAME:REST`` (``REST``
    ``None`` for a bare ``NAME``); ``None`` for kinds reached only through hosts.toml.
    ``parse_entry`` / ``open_entry``: a hosts.toml entry of this kind; ``None`` for kinds
    that have no entries.
    """

    name: str
    usage: tuple[str, ...]
    spec: Callable[..., Target] | None = None
    bare: bool = False  # ``-t NAME`` alone is a spec (``local``)
    parse_entry: Callable[[TableChecker, str, dict[str, Any]], HostEntry] | None = None
    open_entry: Callable[..., Target] | None = None


KINDS: tuple[TargetKind, ...] = (
    TargetKind("local", ("local", "local:PYTHON"), spec=_local, bare=True),
    TargetKind("venv", ("venv:PATH",), spec=_venv),
    TargetKind("pypi", ("pypi:NAME==VER[,...]",), spec=_pypi),
    TargetKind("ssh", (), parse_entry=_ssh_entry, open_entry=_ssh_open),
    TargetKind("exec", (), parse_entry=_exec_entry, open_entry=_exec_open),
)
#: Names ``-t`` gives to kinds: a host may not be called so.
RESERVED = tuple(k.name for k in KINDS if k.spec is not None)


def kind(name: str) -> TargetKind:
    for k in KINDS:
        if k.name == name:
            return k
    raise KeyError(name)


def load_hosts(path: Path | None) -> HostsConfig:
    """hosts.toml, each entry parsed by its kind (see :func:`harness.config.read_inventory`)."""
    parsers = {k.name: k.parse_entry for k in KINDS if k.parse_entry is not None}
    return read_inventory(path, parsers, RESERVED)


def target_kinds(hosts: HostsConfig) -> list[str]:
    return [u for k in KINDS for u in k.usage] + sorted(hosts.hosts) + ["HOST@PYTHON"]


def open_kind(name: str, rest: str | None, **options: Any) -> Target:
    """A target of kind ``name`` from its spec (``open_kind("pypi", "vllm==0.11.0")``)."""
    spec = kind(name).spec
    if spec is None:
        raise UsageError(f"target kind {name!r} is reached through hosts.toml only")
    return spec(rest, **options)


def open_entry(entry: HostEntry, **options: Any) -> Target:
    """The target a hosts.toml entry names (its kind decides how)."""
    opener = kind(entry.kind).open_entry
    assert opener is not None, entry.kind
    return opener(entry, **options)


def open_target(
    spec: str | None,
    hosts: HostsConfig,
    *,
    accept_new_host_key: bool = False,
    connect_timeout: float | None = None,
) -> Target:
    """``None`` -> hosts.toml's default, else ``local``. Nothing connects until first use.

    One target: a spec naming several hosts (a group, ``a,b``) is resolved by the command
    line before it gets here (:mod:`harness.cli.across`) and refused here.
    """
    if spec is None or spec == "":
        spec = hosts.default or "local"
    if spec in hosts.groups:
        raise UsageError(
            f"-t {spec} names a group of hosts; this command opens one target",
            "name one host of it",
        )
    host, at, python = spec.rpartition("@")
    if at and host and python.startswith(("/", "~")) and spec not in hosts.hosts:
        from harness.targets.interp import with_python  # -t HOST@PYTHON: that interpreter

        inner = open_target(
            host, hosts, accept_new_host_key=accept_new_host_key, connect_timeout=connect_timeout
        )
        return with_python(
            inner,
            python,
            (f"-t {spec}", f"name an interpreter the host has: -t {host}@/path/to/bin/python"),
        )
    prefix, sep, rest = spec.partition(":")
    for k in KINDS:
        if k.spec is not None and prefix == k.name and (sep or k.bare):
            return k.spec(rest if sep else None)
    if spec in hosts.hosts:
        return open_entry(
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
