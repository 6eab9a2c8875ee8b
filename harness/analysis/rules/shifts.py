"""Positional arguments that now land in another parameter: the one rule saying
``argument-shifted``.

``f(q, k, cos, sin, position_ids)`` was written for ``f(q, k, cos, sin, position_ids=None,
unsqueeze_dim=1)``; against ``f(q, k, cos, sin, unsqueeze_dim=1)`` it still fits by count, so
no call rule fires -- but the fifth argument binds to ``unsqueeze_dim`` now. Only the baseline
says what the caller meant: an argument whose parameter (in the version the caller was written
for) is gone or moved, while the slot it fills now belongs to a parameter that was elsewhere,
is an error naming where it lands. A parameter renamed in place (neither name on the other
side, or the old one kept as a keyword-only alias with the same default) keeps the meaning:
nothing here (drift says it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.analysis.findings import Category, Finding, Severity
from harness.analysis.rules.base import Produced, Rule
from harness.models import (
    KEYWORD_ONLY,
    POSITIONAL_ONLY,
    POSITIONAL_OR_KEYWORD,
    VAR_POSITIONAL,
    Parameter,
    SymbolKind,
    after_self,
)

if TYPE_CHECKING:
    from harness.analysis.rules.base import Context, Earlier
    from harness.analysis.scan import Callee
    from harness.analysis.uses import CallUse

_POSITIONAL = (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD)


@dataclass(frozen=True)
class Slide:
    """Argument ``index`` (0-based) was for ``meant``; it lands in ``lands`` now
    (``*args`` for a var-positional); ``now``: where ``meant`` is now, in words."""

    index: int
    meant: str
    lands: str
    now: str


def slides(old: tuple[Parameter, ...], new: tuple[Parameter, ...], positional: int) -> list[Slide]:
    """Pure: the first ``positional`` arguments whose parameter changed under them."""
    old_pos = [p for p in old if p.kind in _POSITIONAL]
    new_pos = [p for p in new if p.kind in _POSITIONAL]
    new_var = next((p for p in new if p.kind == VAR_POSITIONAL), None)
    old_names = {p.name for p in old}
    new_by_name = {p.name: p for p in new}
    out: list[Slide] = []
    for i in range(min(positional, len(old_pos))):
        meant = old_pos[i].name
        if i < len(new_pos):
            lands = new_pos[i].name
        elif new_var is not None:
            lands = f"*{new_var.name}"
        else:
            break  # too many positionals: the calls rule says so
        if meant == lands or (meant not in new_by_name and lands not in old_names):
            continue  # the same parameter, or one renamed in place
        moved = new_by_name.get(meant)
        if _alias_kept(moved, new_pos[i] if i < len(new_pos) else None, old_names):
            continue  # renamed in place, the old name kept as a keyword-only alias
        if moved is None:
            now = "is gone"
        elif moved.kind in _POSITIONAL:
            now = f"is parameter {new_pos.index(moved) + 1} now"
        else:
            now = f"is {moved.kind.value} now"
        out.append(Slide(i, meant, lands, now))
    return out


def _alias_kept(moved: Parameter | None, lands: Parameter | None, old_names: set[str]) -> bool:
    """sklearn 1.5's ``inverse_transform(self, X=None, *, Xt=None)`` for 1.1's ``(self, Xt)``:
    the slot's new name is new, the old one is keyword-only now with the same default -- a
    deprecation alias; a positional argument still means what it meant."""
    return (
        moved is not None
        and lands is not None
        and moved.kind == KEYWORD_ONLY
        and lands.name not in old_names
        and moved.default == lands.default
    )


def call_parameters(sym: Callee, use: CallUse) -> tuple[Parameter, ...] | None:
    """The parameters this call binds to (``self``/``cls`` left out); None: not one list."""
    if sym.symbol.overloads:
        return None
    params = sym.symbol.parameters
    if params is None:
        return None
    if sym.kind == SymbolKind.CLASS:
        return params
    if sym.kind == SymbolKind.CLASSMETHOD or (sym.kind == SymbolKind.METHOD and use.on_instance):
        return after_self(params)
    return (
        params
        if sym.kind in (SymbolKind.FUNCTION, SymbolKind.METHOD, SymbolKind.STATICMETHOD)
        else None
    )


def check(ctx: Context, earlier: Earlier) -> Produced:
    if ctx.baseline is None:
        return Produced()
    erred = {(f.file, f.line, f.symbol) for f in earlier.findings if f.severity == Severity.ERROR}
    out: list[Finding] = []
    for use in ctx.scan.calls:
        key = use.symbol
        new, old = ctx.callee(key), ctx.base_callee(key)
        if new is None or old is None or use.star or not use.positional:
            continue
        if (use.file, use.line, key) in erred:
            continue
        new_params, old_params = call_parameters(new, use), call_parameters(old, use)
        if new_params is None or old_params is None:
            continue
        got = slides(old_params, new_params, use.positional)
        if got:
            out.append(_finding(ctx, use, key, new, old, old_params, got))
    return Produced(tuple(out))


def _finding(
    ctx: Context,
    use: CallUse,
    key: str,
    new: Callee,
    old: Callee,
    old_params: tuple[Parameter, ...],
    got: list[Slide],
) -> Finding:
    name = new.qualname
    was = f"{old.dist} {old.version}" if old.version else (old.dist or "the baseline")
    said = "; ".join(
        f"argument {s.index + 1}{_text(use, s.index)} was '{s.meant}' in {was}, which "
        f"{s.now}: it lands in '{s.lands}'"
        for s in got
    )
    first = got[0].index
    old_pos = [p.name for p in old_params if p.kind in _POSITIONAL]
    meant = tuple(old_pos[first : use.positional])
    return ctx.finding(
        Severity.ERROR,
        Category.ARGUMENT_SHIFTED,
        use,
        key,
        f"{name}() binds its positional arguments differently now: {said}",
        f"Pass {', '.join(meant)} by name as {was} meant "
        f"{'them' if len(meant) > 1 else 'it'}, or drop what {name} no longer takes.",
        new,
        keywords=meant,
        argument=first,
    )


def _text(use: CallUse, index: int) -> str:
    values = use.arg_values
    value = values[index] if index < len(values) else None
    return f" (`{value}`)" if value is not None else ""


RULE = Rule("shifts", frozenset({Category.ARGUMENT_SHIFTED}), check, after=("calls",))
