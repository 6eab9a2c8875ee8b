"""Read ``# E: category`` / ``# W: category`` markers: a fixture states what must be reported."""

from __future__ import annotations

import re
from pathlib import Path

MARK = re.compile(r"#\s*([EW]):\s*([a-z-]+)")
SEVERITY = {"E": "error", "W": "warning"}


def expected(path: Path, rel: str) -> set[tuple[str, int, str, str]]:
    """(file, line, severity, category) for every marker in ``path`` (docstring lines skipped)."""
    out = set()
    for i, line in enumerate(path.read_text().splitlines(), 1):
        m = MARK.search(line)
        if m and not line.lstrip().startswith('"""'):
            out.add((rel, i, SEVERITY[m.group(1)], m.group(2)))
    return out
