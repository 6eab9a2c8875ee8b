"""Probe: the ``callsites`` scan of some of a caller's files only.

args: as ``callsites`` (``caller``, ``callees``, ``overrides``, ``paths``) plus
``only``: [rel path, ...]

``harness check --fix`` re-checks the files it edited, with the edited texts standing in for
them; the caller's other files and the callee are as the first check read them, so re-reading
them would only cost time (a whole-dist scan is most of ``check``'s).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from probes.callsites import callsites


def run(args: dict[str, Any], warn: Callable[[str], None]) -> dict[str, Any]:
    from probes._finder import Finder, default_paths
    from probes.signatures import _astindex
    from probes.signatures._astindex import Index
    from probes.signatures._lookup import Lookup
    from probes.signatures._platform import target_python

    only = set(args.get("only") or ())

    class Only(callsites.Scanner):
        def caller_files(self, dist: str) -> tuple[dict[str, Any], list[tuple[str, str, str]]]:
            meta, files = super().caller_files(dist)
            return meta, [f for f in files if f[2] in only]

    _astindex.OVERRIDES.update(args.get("overrides") or {})
    index = Index(Finder(args.get("paths") or default_paths()), target_python(args))
    return Only(index, Lookup(index, warn), warn).scan(args["caller"], args.get("callees"))
