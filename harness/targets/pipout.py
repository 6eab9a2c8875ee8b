"""What pip's output says: download sizes, the versions an index has, the nearest ones. Pure.

``pip download`` and ``pip index versions`` do the network work for the ``pypi:`` target (so
the user's index, proxy and certificates apply); these functions read their words. They are
tolerant: pip's wording is not an API, so anything unrecognised gives ``None`` and the caller
falls back to pip's own message.
"""

from __future__ import annotations

import re

from packaging.version import InvalidVersion, Version

_DOWNLOADING = re.compile(r"^\s*Downloading\s+(\S+)\s+\(([\d.]+)\s*(bytes|kB|MB|GB)\)\s*$")
_UNITS = {"bytes": 1, "kB": 1000, "MB": 1000**2, "GB": 1000**3}
_FROM_VERSIONS = re.compile(r"\(from versions: ([^)]*)\)")
_AVAILABLE = re.compile(r"^Available versions:\s*(.*)$", re.MULTILINE)


def downloading(line: str) -> tuple[str, int] | None:
    """``Downloading vllm-0.16.0-...whl (400.9 MB)`` -> (file name, approximate bytes)."""
    m = _DOWNLOADING.match(line.strip())
    if not m:
        return None
    return m.group(1).rsplit("/", 1)[-1], int(float(m.group(2)) * _UNITS[m.group(3)])


def versions_from_error(stderr: str) -> list[str] | None:
    """The versions pip found when no version satisfied the pin, or None if it did not say.

    ``... (from versions: 0.1.0, 0.2.0)``; ``(from versions: none)`` gives ``[]``.
    """
    found = _FROM_VERSIONS.findall(stderr)
    if not found:
        return None
    last = found[-1].strip()
    return [] if last == "none" else [v.strip() for v in last.split(",") if v.strip()]


def versions_from_index(stdout: str) -> list[str] | None:
    """``pip index versions NAME``'s ``Available versions: 0.16.0, 0.15.1`` (newest first)."""
    m = _AVAILABLE.search(stdout)
    if not m:
        return None
    return [v.strip() for v in m.group(1).split(",") if v.strip()]


def _parsed(versions: list[str]) -> list[tuple[Version, str]]:
    out = []
    for v in versions:
        try:
            out.append((Version(v), v))
        except InvalidVersion:
            continue
    return sorted(out)


def latest(versions: list[str]) -> str | None:
    """The newest final release (a pre-release only when there is nothing else)."""
    parsed = _parsed(versions)
    finals = [v for v in parsed if not v[0].is_prerelease and not v[0].is_devrelease]
    pick = finals or parsed
    return pick[-1][1] if pick else None


def nearest(wanted: str, versions: list[str], n: int = 2) -> list[str]:
    """Up to ``n`` versions just below and ``n`` just above ``wanted``, in order.

    What a user who mistyped a version wants to see, instead of a hundred of them.
    """
    parsed = _parsed(versions)
    try:
        target = Version(wanted)
    except InvalidVersion:
        return [v for _, v in parsed[-n:]]
    below = [v for p, v in parsed if p < target][-n:]
    above = [v for p, v in parsed if p > target][:n]
    return below + above
