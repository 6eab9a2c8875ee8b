"""Caller subclasses whose overrides can no longer take what the callee calls them with."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from harness.analysis.bind import CallShape, bind
from harness.analysis.findings import Category, Finding, Severity
from harness.analysis.rules.base import Produced, Rule
from harness.analysis.uses import Site
from harness.models import (
    KEYWORD_ONLY,
    POSITIONAL_ONLY,
    POSITIONAL_OR_KEYWORD,
    VAR_KEYWORD,
    VAR_POSITIONAL,
    Parameter,
    SymbolKind,
    after_self,
)

if TYPE_CHECKING:
    from harness.analysis.rules.base import Context, Earlier
    from harness.analysis.scan import Callee
    from harness.analysis.uses import Method


class Signed(Protocol):
    """A function-like thing: a callee symbol or a caller's method."""

    @property
    def kind(self) -> str: ...

    @property
    def parameters(self) -> tuple[Parameter, ...] | None: ...


def check(ctx: Context, _: Earlier) -> Produced:
    """Each caller override of a callee method, against the calls the callee's own source makes
    of it (``self.meth(...)`` in the base and its bases): the evidence that a run reaches it
    with arguments it no longer takes. A signature that merely differs from the base's says
    nothing -- pgmpy's ``DAG.add_node(node)`` under networkx's ``add_node(node_for_adding)``,
    which nothing in networkx calls by that name -- so where no such call is seen, nothing is
    reported."""
    out: list[Finding] = []
    for sub in ctx.scan.subclasses:
        for meth in sub.methods:
            for base in sub.bases:
                key = f"{base.module}:{base.qualname}.{meth.name}"
                bsym = ctx.callee(key)
                dunder = meth.name.startswith("__") and meth.name != "__call__"
                if bsym is None or dunder:
                    continue
                own = frozenset(m.name for m in sub.methods)
                problems = call_problems(bsym, meth, own)
                issues = [text for text, _ in problems]
                certain = any(sure for _, sure in problems)
                old = ctx.base_callee(key)
                if issues:
                    site = Site(sub.file, meth.line, sub.source, sub.scope)
                    # the base called it so already in the version the caller was written for:
                    # a deliberate re-signature the caller keeps the base from calling
                    was = old is not None and bool(call_problems(old, meth, own))
                    ver = f"{old.dist} {old.version}" if old else ""
                    # "no longer" only where the version it was written for is known to differ
                    verb = "no longer accepts" if old is not None and not was else "does not accept"
                    f = ctx.finding(
                        Severity.ERROR if certain and not was else Severity.WARNING,
                        Category.OVERRIDE_INCOMPATIBLE,
                        site,
                        key,
                        f"{sub.name}.{meth.name} "
                        f"{verb} what "
                        f"{bsym.qualname} is called with: {'; '.join(issues)}"
                        + (
                            f" (already so in {ver}, the version it was written for)" if was else ""
                        ),
                        f"Match the override's parameters to {bsym.qualname}'s.",
                        bsym,
                    )
                    out.append(f)
                break
    return Produced(tuple(out))


RULE = Rule("overrides", frozenset({Category.OVERRIDE_INCOMPATIBLE}), check)


def call_problems(
    base: Callee, meth: Method, own: frozenset[str] = frozenset()
) -> list[tuple[str, bool]]:
    """How the callee's own ``self.meth(...)`` calls (``base.self_calls``) fail to bind to
    the override -- each a TypeError when the callee makes it (pure). A call made from a
    method the caller's class overrides too (``own``) never runs on it."""
    params = list(meth.parameters)
    if meth.kind in (SymbolKind.METHOD, SymbolKind.CLASSMETHOD):
        params = list(after_self(tuple(params)))
    out: list[tuple[str, bool]] = []
    for call in base.self_calls:
        if call.where.owner.rpartition(".")[2] in own:
            continue
        # ``self.m(*a, **kw)``: neither the count nor the names are known
        shape = CallShape(call.positional, call.keywords, call.star, call.star)
        got = bind(shape, tuple(params))
        if got:
            out.append(
                (
                    f"{call.where.owner} calls it with ({call.text}) at {call.where.at}: "
                    f"{got[0].detail}",
                    True,
                )
            )
    return out


def override_issues(base: Signed, meth: Signed) -> list[str]:
    """Why an override cannot take every call its base method accepts (pure)."""
    return [text for text, _ in override_problems(base, meth)]


def override_problems(base: Signed, meth: Signed) -> list[tuple[str, bool]]:
    """(why, certain) for each way an override cannot take its base's calls (pure).

    Not certain: the base has more positional parameters than the override, but the extra
    ones are optional and the override's ``**kwargs`` takes them by name -- it breaks only for
    callers that pass them positionally (transformers' Trainer passes
    ``compute_loss(model, inputs, num_items_in_batch=...)`` by name).
    """
    if base.parameters is None:  # ``forward: Callable[..., Any] = ...``: no signature to hold
        return []
    bp = list(base.parameters)
    op = list(meth.parameters or ())
    if base.kind in (SymbolKind.METHOD, SymbolKind.CLASSMETHOD):
        bp = list(after_self(tuple(bp)))
    if meth.kind in (SymbolKind.METHOD, SymbolKind.CLASSMETHOD):
        op = list(after_self(tuple(op)))
    issues: list[tuple[str, bool]] = []
    o_var_pos = any(p.kind == VAR_POSITIONAL for p in op)
    o_var_kw = any(p.kind == VAR_KEYWORD for p in op)
    o_pos = [p for p in op if p.kind in (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD)]
    o_names = {p.name for p in op if p.kind in (POSITIONAL_OR_KEYWORD, KEYWORD_ONLY)}
    b_pos = [p for p in bp if p.kind in (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD)]
    if len(b_pos) > len(o_pos) and not o_var_pos:
        extra = b_pos[len(o_pos) :]
        by_name = all(
            not q.required and q.kind != POSITIONAL_ONLY and (o_var_kw or q.name in o_names)
            for q in extra
        )
        issues.append(
            (
                f"takes {len(o_pos)} positional arguments, base passes up to {len(b_pos)}"
                + (" (if the optional ones are passed by position)" if by_name else ""),
                not by_name,
            )
        )
    for p in bp:
        if (
            p.kind in (POSITIONAL_OR_KEYWORD, KEYWORD_ONLY)
            and p.name not in o_names
            and not o_var_kw
            and not p.absorbed_by  # the base's decorator takes it, not the base
        ):
            issues.append((f"no parameter '{p.name}'", True))
    b_names = {p.name for p in bp}
    # a base taking *args / **kwargs is called with any positionals / keywords
    b_var_pos = any(p.kind == VAR_POSITIONAL for p in bp)
    b_var_kw = any(p.kind == VAR_KEYWORD for p in bp)
    for p in op:
        if not p.required or p.name in b_names or p.kind == POSITIONAL_ONLY:
            continue
        if (b_var_pos and p.kind == POSITIONAL_OR_KEYWORD) or (
            b_var_kw and p.kind in (POSITIONAL_OR_KEYWORD, KEYWORD_ONLY)
        ):
            continue
        issues.append((f"requires '{p.name}', which the base never passes", True))
    return issues
