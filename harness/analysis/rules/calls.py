"""Calls that no longer bind: each callee call's shape bound the way CPython binds.

Functions, constructors (every rule the probe synthesises), overloads (fine if any binds),
``__new__`` + ``__init__`` (both must bind), and ``f(**opts)`` with the dict's keys known (a
key added under a condition says so; one added in a branch whose version test the release
checked fails is never there).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from harness.analysis.bind import BindProblem, CallShape, bind, bind_any
from harness.analysis.findings import Category, Finding, Severity
from harness.analysis.gates import decided
from harness.analysis.rules import forwards, swallowed
from harness.analysis.rules.base import Produced, Rule
from harness.models import SymbolKind, after_self

if TYPE_CHECKING:
    from harness.analysis.rules.base import Context, Earlier
    from harness.analysis.scan import Callee
    from harness.analysis.uses import CallUse, SpreadKey
    from harness.models import Parameter


#: Every way a call can fail to bind, said by this rule alone (a ``**kwargs`` handed on
#: to a call that rejects a key included).
CALL_CATEGORIES = frozenset(
    {
        Category.UNEXPECTED_KWARG,
        Category.MISSING_REQUIRED_ARG,
        Category.TOO_MANY_POSITIONAL,
        Category.POSITIONAL_ONLY_AS_KEYWORD,
        Category.DUPLICATE_ARGUMENT,
    }
)


def check(ctx: Context, _: Earlier) -> Produced:
    """Each call bound to the callee as installed, then the keys a ``**kwargs`` hands on."""
    return Produced((*binding(ctx), *forwards.forwarded(ctx)))


def binding(ctx: Context) -> list[Finding]:
    """Calls of known callees that do not bind (an unknown callee is the names rule's)."""
    out: list[Finding] = []
    for use in ctx.scan.calls:  # a **dict's keys as this release builds it: settled()
        key = use.symbol
        sym = ctx.lookup(key).symbol
        if sym is None:
            continue
        got = call_variants(sym, use)
        if got is None:
            continue
        variants, lenient = got
        ctor = sym.constructor
        init_params = None if ctor is None else ctor.init_parameters
        spread = settled(ctx, use)
        keywords = use.keywords

        def problems_for(kws: tuple[str, ...]) -> list[BindProblem]:
            return bind_call(use.shape, kws, variants, lenient, init_params)  # noqa: B023

        when: dict[str, str] = {}
        if spread is None:
            problems = problems_for(keywords)
        else:  # ``f(**opts)`` with opts' keys known: every key, and each branch's
            when = {k.key: k.when for k in spread if k.when}
            every = keywords + tuple(k.key for k in spread)
            always = keywords + tuple(k.key for k in spread if not k.when)
            problems = [
                p for p in problems_for(every) if p.category != Category.MISSING_REQUIRED_ARG
            ]
            problems += [
                p for p in problems_for(always) if p.category == Category.MISSING_REQUIRED_ARG
            ]
        if ctor is not None and ctor.extra == "unknown":
            # fields of a base we cannot read come first: the positional count is unknown
            problems = [p for p in problems if p.category != Category.TOO_MANY_POSITIONAL]
        name = sym.qualname
        for p in problems:
            cond = [when[n] for n in p.names if n in when]
            note = ""
            if cond and p.category == Category.MISSING_REQUIRED_ARG:
                note = f" (unless `{cond[0]}`: only then does the dict carry it)"
            elif cond:
                note = f" (the dict gets it when `{cond[0]}`)"
            elif spread is not None and any(n in {k.key for k in spread} for n in p.names):
                note = " (a key of the dict spread with **)"
            fix = None
            if p.category == Category.MISSING_REQUIRED_ARG and not note:
                note, fix = swallowed.explain(ctx, key, sym, keywords, p.names)
            out.append(
                ctx.finding(
                    Severity.ERROR,
                    p.category,
                    use,
                    key,
                    f"{name}() {p.detail}{note}",
                    fix or p.category.fix_for(p.names, name),
                    sym,
                    keywords=p.names,
                    origin_line=forwards.key_line(use, p.names)
                    if p.category == Category.UNEXPECTED_KWARG
                    else None,
                )
            )
    return out


def settled(ctx: Context, use: CallUse) -> tuple[SpreadKey, ...] | None:
    """The keys of ``f(**opts)`` as the release checked builds the dict: a key put there in a
    branch its version test rules out is never there, one put there under a test the release
    passes always is (imblearn's ``params["bootstrap"]`` under ``sklearn >= 1.1``, and
    ``params["forest"]`` in the else, on sklearn 1.5)."""
    if use.spread is None:
        return None
    out: list[SpreadKey] = []
    for k in use.spread:
        got = decided(k.line, use.file, ctx.scan.gated, ctx.versions) if k.line else (True, ())
        if got is None:
            continue
        out.append(replace(k, when=None) if k.when in got[1] else k)
    return tuple(out)


def call_variants(sym: Callee, use: CallUse) -> tuple[list[tuple[Parameter, ...]], bool] | None:
    """Parameter lists a call can bind to (self/cls removed), and whether extras pass."""
    kind = sym.kind
    if kind == SymbolKind.CLASS:
        params = sym.symbol.parameters
        if params is None:
            return None
        ctor = sym.constructor
        overloads = list(ctor.overloads) if ctor is not None else []
        return [params, *overloads], ctor is not None and ctor.lenient
    if kind in (
        SymbolKind.FUNCTION,
        SymbolKind.METHOD,
        SymbolKind.CLASSMETHOD,
        SymbolKind.STATICMETHOD,
    ):
        raw = [sym.symbol.parameters or ()] + [o.parameters for o in sym.symbol.overloads]
        if sym.symbol.overloads:
            raw = raw[1:]  # the implementation is not callable as written; overloads are
        if kind == SymbolKind.CLASSMETHOD or (kind == SymbolKind.METHOD and use.on_instance):
            return [after_self(tuple(r)) for r in raw], False
        return [tuple(r) for r in raw], False
    return None


def bind_call(
    shape: CallShape,
    keywords: tuple[str, ...],
    variants: list[tuple[Parameter, ...]],
    lenient: bool,
    init: tuple[Parameter, ...] | None,
) -> list[BindProblem]:
    """Pure: problems binding a call (with these keywords) to any variant, and to the
    ``__init__`` a ``__new__(cls, *a, **k)`` hands everything on to."""
    call = replace(shape, keywords=keywords)
    found = bind_any(call, variants, ignore_unknown_kwargs=lenient)
    if not found and init is not None:
        found = bind(call, init)
    return found


RULE = Rule("calls", CALL_CATEGORIES, check)
