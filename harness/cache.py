"""``harness cache``: what this machine keeps, where, and which of it a prune removes.

The cache (``$HARNESS_CACHE``, else ``~/.cache/harness``) holds wheels and their unpacked
sources for ``pypi:`` targets (hundreds of MB per vLLM version), probe results, and the local
copies of run logs. Entries carry their last use; :func:`to_prune` decides from that alone, so
the choice is tested by tables and the deleting is :mod:`harness.targets.cache`'s job. Pure
apart from :func:`cache_root`, which reads the environment.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any


def cache_root() -> Path:
    """The app-wide cache folder: ``$HARNESS_CACHE``, else ``$XDG_CACHE_HOME/harness``, else
    ``~/.cache/harness``."""
    env = os.environ.get("HARNESS_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "harness"


#: A partial download younger than this may belong to a download running right now.
PARTIAL_GRACE_S = 3600.0


class Kind(Enum):
    """What an entry is; each member says whether a default prune may remove it."""

    PYPI = ("pypi", "a wheel and its unpacked sources (pypi: targets)", True)
    RESULTS = ("results", "cached probe results (recomputed on demand)", True)
    PARTIAL = ("partial", "left by an interrupted download or unpack", True)
    RUNS = ("runs", "local copies of run logs (removed only with --runs)", False)

    def __init__(self, text: str, meaning: str, default_prune: bool) -> None:
        self.text = text
        self.meaning = meaning
        self.default_prune = default_prune


@dataclass(frozen=True)
class CacheEntry:
    kind: Kind
    name: str  # "vllm 0.16.0", "probe results", "box/count-20250101-..."
    paths: tuple[str, ...]
    size: int  # bytes on disk (allocated: a sparse partial download counts what it holds)
    last_used: float  # epoch seconds
    #: a lazily fetched pypi: pin (issue 26): (wheel bytes fetched, the whole wheel's size)
    lazy: tuple[int, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind.text,
            "name": self.name,
            "paths": list(self.paths),
            "size": self.size,
            "last_used": self.last_used,
        }
        if self.lazy is not None:
            out["lazy"] = {"fetched": self.lazy[0], "wheel_size": self.lazy[1]}
        return out


def to_prune(
    entries: list[CacheEntry],
    now: float,
    older_than_days: float,
    *,
    everything: bool = False,
    runs: bool = False,
) -> list[CacheEntry]:
    """Entries unused for ``older_than_days``; run logs only with ``runs``; ``everything``:
    every entry ``cache list`` shows, run logs included; what an interrupted download left
    once it is an hour old (a younger one may be a download in progress)."""
    return [e for e in entries if why_kept(e, now, older_than_days, everything, runs) is None]


def why_kept(
    e: CacheEntry, now: float, older_than_days: float, everything: bool, runs: bool
) -> str | None:
    """Why a prune leaves ``e`` (None: it goes), in the words the prune prints."""
    if e.kind is Kind.PARTIAL:
        young = e.last_used >= now - PARTIAL_GRACE_S
        return "a download under an hour old (it may be running now)" if young else None
    if e.kind is Kind.RUNS and not (runs or everything):
        return "run log copies (add --runs)"
    if not everything and e.last_used >= now - older_than_days * 86400:
        return f"used in the last {older_than_days:g} days (--older-than DAYS, or --all)"
    return None


def ago(seconds: float) -> str:
    """``3 days ago``: the last use, as a person reads it."""
    s = max(0.0, seconds)
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if s >= size:
            n = int(s // size)
            return f"{n} {unit}{'s' if n != 1 else ''} ago"
    return "just now"
