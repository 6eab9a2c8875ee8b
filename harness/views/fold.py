"""Table cells that wrap where a path or a host name may break, never inside a word.

Rich wraps a cell at spaces and folds a longer word at any character, so on an 80-100 column
terminal ``/root/miniconda3/envs/...`` came out as ``/root/minicon`` + ``da3/envs/eagl``.
Here the columns get widths that fit the terminal (the widest gives way first) and each cell
is broken after a ``/``, ``.``, ``-``, ``@``, ``:``, ``,`` or space, where the eye expects a
break; only a piece longer than the whole column is cut.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_PIECE = re.compile(r"[^/.\-@:, ]*[/.\-@:, ]*")
#: A command longer than this is shown cut: its first CUT_TO characters and its length
#: (run.json and ``--format json`` keep it whole).
LONG_COMMAND = 2000
CUT_TO = 200
#: A column never narrower than this (or its heading).
MIN_WIDTH = 6


def fit_widths(
    heads: Sequence[str], rows: Sequence[Sequence[str]], room: int, firm: Sequence[int] = (0,)
) -> list[int]:
    """Column widths whose sum fits ``room``: each column's longest cell, the widest taking
    one less at a time until they fit (no narrower than its heading, MIN_WIDTH, or its
    longest piece between two break points). Columns in ``firm`` (the names) keep theirs."""
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(heads)]
    least = [
        max([MIN_WIDTH, len(h), *(len(p.rstrip(" ")) for r in rows for p in _PIECE.findall(r[i]))])
        for i, h in enumerate(heads)
    ]
    for i in firm:
        least[i] = widths[i]
    while sum(widths) > room:
        i = max(range(len(widths)), key=lambda k: (widths[k] - least[k] > 0, widths[k]))
        if widths[i] <= least[i]:
            break
        widths[i] -= 1
    return widths


def fold(text: str, width: int) -> str:
    """``text`` as lines of at most ``width``, broken after separators (see the module)."""
    lines: list[str] = []
    line = ""
    for piece in (p for p in _PIECE.findall(text) if p):
        if len(line) + len(piece.rstrip(" ")) > width and line:
            lines.append(line.rstrip(" "))
            line = ""
        while len(piece.rstrip(" ")) > width:  # one piece longer than the column: cut it
            lines.append(piece[:width])
            piece = piece[width:]
        line += piece
    lines.append(line.rstrip(" "))
    return "\n".join(lines)


#: A ``now:`` signature longer than this is folded to the parameters that matter.
SIGNATURE_WIDTH = 160
_WORD = re.compile(r"[A-Za-z_]\w*")
_KEYWORD = re.compile(r"\b([A-Za-z_]\w*)\s*=(?!=)")


def _split_top(text: str) -> list[str]:
    """``text`` split at commas outside brackets and quotes."""
    parts, depth, quote, cur = [], 0, "", ""
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
            continue
        cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def fold_signature(sig: str, source: str = "", message: str = "") -> str:
    """A long signature cut to the parameters that matter: the required ones, those the call
    passes (``name=`` in ``source``) and those the finding names (in ``message``); each run
    of the others is ``...``. Short signatures, and ones it cannot parse, as given."""
    if len(sig) <= SIGNATURE_WIDTH or "(" not in sig:
        return sig
    head, _, rest = sig.partition("(")
    depth, end = 1, -1
    for i, ch in enumerate(rest):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            end = i
            break
    if end < 0:
        return sig
    wanted = set(_WORD.findall(message)) | set(_KEYWORD.findall(source))
    out: list[str] = []
    for param in _split_top(rest[:end]):
        name = re.split(r"[:=]", param, maxsplit=1)[0].strip()
        required = "=" not in param and not name.startswith("*") and name not in ("/", "*")
        if required or name.lstrip("*") in wanted or name in ("/", "*"):
            out.append(param)
        elif not out or out[-1] != "...":
            out.append("...")
    kept: list[str] = []  # a bare / or * only where a kept parameter follows it
    for i, part in enumerate(out):
        after = out[i + 1] if i + 1 < len(out) else "..."
        if part in ("/", "*") and after in ("...", "/", "*"):
            continue
        if part != "..." or not kept or kept[-1] != "...":
            kept.append(part)
    return f"{head}({', '.join(kept)}){rest[end + 1 :]}"


def cut_command(text: str) -> str:
    """``text`` as a line to read: whole, or its first :data:`CUT_TO` characters and how long
    it is (a command made too long for the OS by a parameter is 100 KB and more)."""
    if len(text) <= LONG_COMMAND:
        return text
    return f"{text[:CUT_TO]} ... ({len(text):,} characters in all)"
