"""Behaviour drift: the return a call selects changed, and the caller uses the result.

``collective_rpc("...", unique_reply_rank=0)`` returned the list of replies in vLLM 0.11 and
returns ``responses[0]`` -- the element -- since 0.16; ``captured_states_list[0]`` then
indexes the element. Annotations (``-> Any``) do not show it; the return statements do. We
report it at every call that passes a parameter the conditions depend on and whose literal
arguments select a different set of return expressions than in the baseline, and whose result
the caller uses. A warning, not an error: a different object may still support the use.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from harness.analysis.apidiff import Change, ChangeKind
from harness.analysis.evaluate import call_values, evaluate
from harness.analysis.facts import ReturnPath
from harness.analysis.findings import Category, Finding, Severity
from harness.analysis.uses import CallUse

if TYPE_CHECKING:
    from harness.analysis.rules.base import Context


def selected(paths: tuple[ReturnPath, ...], values: dict[str, object]) -> list[ReturnPath]:
    """Pure: the paths a call with these parameter values can take (unknown never excludes)."""
    return [p for p in paths if all(evaluate(c, values) is not False for c in p.when)]


def selectors(paths: tuple[ReturnPath, ...]) -> set[str]:
    """Names the paths' conditions depend on."""
    out: set[str] = set()
    for p in paths:
        for c in p.when:
            try:
                out |= {
                    n.id for n in ast.walk(ast.parse(c, mode="eval")) if isinstance(n, ast.Name)
                }
            except SyntaxError:
                continue
    return out


def differs(now: list[ReturnPath], was: list[ReturnPath]) -> bool:
    """Pure: do the selected returns give the caller a different kind of object?

    Compared by shape (``list`` vs ``item(list)``), so a refactor that returns the same kind
    under another spelling is not drift; an unknown shape on either side says nothing.
    """
    a, b = {p.shape for p in now}, {p.shape for p in was}
    if not a or not b or "?" in a or "?" in b:
        return False
    return a != b


def passed_names(site: CallUse, params: tuple[object, ...]) -> set[str]:
    from harness.models import POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD, Parameter

    positional = [
        p.name
        for p in params
        if isinstance(p, Parameter) and p.kind in (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD)
    ]
    return set(site.keywords) | set(positional[: site.positional])


def _exprs(paths: list[ReturnPath]) -> str:
    return " or ".join(dict.fromkeys(f"`{p.expr}`" for p in paths)) or "nothing"


def _where(paths: list[ReturnPath]) -> str:
    lines = sorted({p.line for p in paths})
    via = sorted({v for p in paths for v in p.via})
    text = "line " + ", ".join(map(str, lines))
    return text + (f" via {', '.join(via)}" if via else "")


def returns_drift(ctx: Context) -> list[Finding]:
    """Calls whose arguments select another kind of return than in the baseline."""
    if ctx.baseline is None:
        return []
    out: list[Finding] = []
    for site in ctx.scan.calls:
        if not site.result:
            continue
        new, old = ctx.callee(site.symbol), ctx.base_callee(site.symbol)
        if new is None or old is None:
            continue
        new_paths, old_paths = new.return_paths, old.return_paths
        if not new_paths or not old_paths:
            continue
        new_params = new.parameters(bound=site.on_instance)
        old_params = old.parameters(bound=site.on_instance)
        chosen = passed_names(site, new_params) & (selectors(new_paths) | selectors(old_paths))
        if not chosen:
            continue
        spread = site.star or site.double_star
        args, kwargs = list(site.arg_values), site.kwarg_values
        now = selected(new_paths, call_values(new_params, args, kwargs, spread))
        was = selected(old_paths, call_values(old_params, args, kwargs, spread))
        if not differs(now, was):
            continue
        name = new.qualname.rsplit(".", 1)[-1]
        given = ", ".join(
            f"{k}={site.kwarg_values.get(k) or '...'}" for k in sorted(chosen & set(site.keywords))
        ) or ", ".join(sorted(chosen))
        uses = "; ".join(f"{u.text} (line {u.line})" for u in site.result[:3])
        new_v, old_v = ctx.version_of(site.symbol.split(":")[0]), f"{old.dist} {old.version}"
        f = ctx.finding(
            Severity.WARNING,
            Category.DRIFT,
            site,
            site.symbol,
            f"{name}(..., {given}) now returns {_exprs(now)} ({new_v}, {new.file} "
            f"{_where(now)}); {old_v} returned {_exprs(was)} ({_where(was)}). "
            f"The caller uses the result: {uses}",
            f"Check what {name} returns under {', '.join(sorted(chosen))} now and adapt the "
            "use of its result (e.g. drop the indexing if it returns the element itself).",
            new,
            (
                Change(
                    ChangeKind.RETURNS_BEHAVIOUR_CHANGED,
                    ", ".join(sorted(chosen)),
                    _exprs(was),
                    _exprs(now),
                    text=f"returns {_exprs(now)} (was {_exprs(was)})",
                ),
            ),
        )
        out.append(f)
    return out
