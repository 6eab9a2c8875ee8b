"""LibCST helpers: remove items from a list (call arguments, imported names, dict entries)
keeping its layout -- commas, line breaks and a trailing comment stay where a person would
leave them -- and walk a tree."""

from __future__ import annotations

from typing import Any, TypeVar

import libcst as cst

Listed = TypeVar("Listed", cst.Arg, cst.ImportAlias, cst.BaseDictElement)


def _breaks(comma: cst.Comma | cst.MaybeSentinel) -> bool:
    return isinstance(comma, cst.Comma) and "\n" in cst.Module(body=[]).code_for_node(comma)


def without(items: list[Listed], drop: set[int]) -> list[Listed]:
    """``items`` less the ``drop`` positions, commas and line breaks kept where they were.

    A comma carries the whitespace after it, so removing an item can glue two lines: the
    one before inherits the removed item's line break when it had none, and the new last
    item ends the list as the old last one did (trailing comma or not).
    """
    out: list[Listed] = []
    for i, item in enumerate(items):
        if i not in drop:
            out.append(item)
        elif out and not _breaks(out[-1].comma) and _breaks(item.comma):
            out[-1] = out[-1].with_changes(comma=item.comma)
    if out and len(out) < len(items) and out[-1] is not items[-1]:
        out[-1] = out[-1].with_changes(comma=_ending(out[-1].comma, items[-1].comma))
        if isinstance(items[-1], cst.Arg):  # the line break before ``)`` is the last arg's
            out[-1] = out[-1].with_changes(whitespace_after_arg=items[-1].whitespace_after_arg)
    return out


def _ending(own: cst.Comma | cst.MaybeSentinel, last: cst.Comma | cst.MaybeSentinel) -> Any:
    """The comma the new last item ends with: the old last one's, keeping the item's own
    trailing comment (``a,  # why``) where both sit at the end of a line."""
    if (
        isinstance(own, cst.Comma)
        and isinstance(last, cst.Comma)
        and isinstance(own.whitespace_after, cst.ParenthesizedWhitespace)
        and isinstance(last.whitespace_after, cst.ParenthesizedWhitespace)
    ):
        return own.with_changes(
            whitespace_after=own.whitespace_after.with_changes(
                last_line=last.whitespace_after.last_line
            )
        )
    return last


def walk(node: cst.CSTNode) -> list[cst.CSTNode]:
    out: list[cst.CSTNode] = []
    stack = [node]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(n.children)
    return out


def all_strings(module: cst.Module) -> set[str]:
    """Names listed in ``__all__``: renaming those would change the caller's own API."""
    out: set[str] = set()
    for n in walk(module):
        if isinstance(n, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            targets = [t.target for t in n.targets] if isinstance(n, cst.Assign) else [n.target]
            if any(isinstance(t, cst.Name) and t.value == "__all__" for t in targets):
                out |= {
                    s.evaluated_value
                    for s in walk(n)
                    if isinstance(s, cst.SimpleString) and isinstance(s.evaluated_value, str)
                }
    return out
