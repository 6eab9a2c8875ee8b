"""``-t`` values that name several hosts (pure)."""

from __future__ import annotations

import difflib

from harness.config import HostsConfig
from harness.errors import UsageError


def expand(spec: str | None, hosts: HostsConfig) -> tuple[str, ...] | None:
    """The hosts ``spec`` names when it names more than one; ``None`` for a single target.

    ``nodes`` (a group), ``gpu1,gpu2`` (hosts and groups, comma-separated) and a default that
    is a group all expand; ``local``, ``venv:``, ``pypi:a,b`` (a colon: a target kind) and a
    single host do not.
    """
    if not spec:
        spec = hosts.default
    if not spec or ":" in spec:
        return None
    if spec in hosts.groups:
        return hosts.groups[spec]
    if "," not in spec:
        return None
    names: list[str] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        if part in hosts.groups:
            names += hosts.groups[part]
        elif part in hosts.hosts:
            names.append(part)
        else:
            known = [*hosts.hosts, *hosts.groups]
            close = difflib.get_close_matches(part, known, n=1)
            guess = f"did you mean {close[0]!r}? " if close else ""
            where = f" in {hosts.path}" if hosts.path else ""
            raise UsageError(
                f"-t {spec}: {part!r} is not a host or group{where}",
                guess + "hosts: " + (", ".join(hosts.hosts) or "none"),
            )
    unique = tuple(dict.fromkeys(names))
    return unique if len(unique) > 1 else None
