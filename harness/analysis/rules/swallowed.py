"""A renamed parameter whose old name a ``**kwargs`` now takes in silence.

When a release renames a required parameter and adds ``**kwargs`` (for options it hands on),
a call passing the old name no longer fails as "unexpected": the old keyword lands in the
``**kwargs`` and the new name goes missing. The calls rule says the missing parameter; this
says which keyword the ``**kwargs`` took, and -- where the baseline had that keyword as a
parameter and not the missing one -- that it is a rename, from which release.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from harness.models import KEYWORD_ONLY, POSITIONAL_OR_KEYWORD, VAR_KEYWORD, Parameter

if TYPE_CHECKING:
    from harness.analysis.rules.base import Context
    from harness.analysis.scan import Callee


def swallowed(keywords: Sequence[str], params: Sequence[Parameter]) -> tuple[str, ...]:
    """Pure: the keywords a call passes that no parameter names, taken by ``**kwargs``."""
    if not any(p.kind == VAR_KEYWORD for p in params):
        return ()
    named = {p.name for p in params if p.kind in (POSITIONAL_OR_KEYWORD, KEYWORD_ONLY)}
    return tuple(k for k in keywords if k not in named)


def renamed(
    gone: Sequence[str], missing: Sequence[str], old: Sequence[Parameter] | None
) -> tuple[str, str] | None:
    """Pure: ``(old name, new name)`` where one keyword was swallowed, one parameter is
    missing, and the old parameters had the keyword and not the missing name."""
    if old is None or len(gone) != 1 or len(missing) != 1:
        return None
    names = {p.name for p in old}
    return (gone[0], missing[0]) if gone[0] in names and missing[0] not in names else None


def explain(
    ctx: Context, key: str, sym: Callee, keywords: Sequence[str], missing: Sequence[str]
) -> tuple[str, str | None]:
    """(a note for the message, a fix replacing the usual one or None) for a call missing
    ``missing`` that passes ``keywords``."""
    params = sym.symbol.parameters or ()
    gone = swallowed(keywords, params)
    if not gone:
        return "", None
    quoted = ", ".join(f"'{k}'" for k in gone)
    star = next(p.name for p in params if p.kind == VAR_KEYWORD)
    verb = "is" if len(gone) == 1 else "are"
    note = f" ({quoted} {verb} no parameter of it now: its **{star} takes {quoted})"
    was = ctx.base_callee(key)
    pair = renamed(gone, missing, None if was is None else was.symbol.parameters)
    if pair is None or was is None:
        return note, None
    since = f"{was.dist} {was.version}" if was.version else "the baseline"
    fix = f"{sym.qualname} renamed '{pair[0]}' to '{pair[1]}' after {since}: pass {pair[1]}= "
    return note, fix + f"instead of {pair[0]}=."
