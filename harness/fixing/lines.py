"""Where a line went: findings name lines, and an edit shifts the lines after it. Pure."""

from __future__ import annotations

import difflib
from collections.abc import Callable


def line_map(before: str, after: str) -> Callable[[int], int]:
    """1-based line in ``before`` -> the line holding it (or what replaced it) in ``after``.

    A finding names the first line of its statement; an edit that rewrites, splits or drops
    lines moves every finding below it, and the re-check must still recognise them.
    """
    a, b = before.splitlines(), after.splitlines()
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()

    def where(line: int) -> int:
        i = line - 1
        for tag, i1, i2, j1, j2 in ops:
            if i1 <= i < i2:
                if tag == "equal":
                    return j1 + (i - i1) + 1
                return j1 + min(i - i1, max(j2 - j1 - 1, 0)) + 1
        return line + len(b) - len(a)

    return where
