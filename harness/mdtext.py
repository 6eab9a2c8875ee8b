"""Embedding arbitrary text in Markdown without it turning into Markdown. Pure.

Reports embed what the target and the series say -- a patch's ``why``, file paths, error
messages, diffs -- and any of them may hold ``|``, backticks, ``*``, ``<script>`` or a line
that starts with ``#``. Each helper makes one kind of place safe: running text, a table
cell, an inline code span, a fenced block.
"""

from __future__ import annotations

import re

#: Punctuation that can start or end inline markup mid-line (emphasis, code, links, HTML,
#: entities, table cells, strikethrough); CommonMark lets a backslash escape each of them.
_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&])")


def text(s: object) -> str:
    """Running text (after other text on its line): what could start markup is escaped.

    Newlines become spaces, so a value cannot start a heading, a list or a table row, and
    the rest (``.``, ``-``, ``#``) stays as typed: it only means something at a line's start.
    """
    flat = " ".join(str(s).splitlines())
    return _SPECIAL.sub(r"\\\1", flat)


def cell(s: object) -> str:
    """A table cell: running text (``|`` escaped with it)."""
    return text(s)


def code(s: object) -> str:
    """An inline code span that holds ``s`` exactly, backticks included.

    CommonMark: the fence is a run of backticks longer than any run inside; a space pads
    the content when it starts or ends with a backtick (the parser strips one space).
    """
    flat = " ".join(str(s).splitlines())
    longest = max((len(m) for m in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat.strip() else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def fenced(body: str, lang: str = "") -> list[str]:
    """A fenced code block holding ``body`` exactly: the fence outgrows any backtick run."""
    longest = max((len(m) for m in re.findall(r"^ {0,3}(`{3,})", body, re.MULTILINE)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{lang}", body.rstrip("\n"), fence]
