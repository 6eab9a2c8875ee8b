"""Keys a callee takes into ``**kwargs`` only to hand them to a call that rejects them.

``Engine(model, x=1)`` binds to ``Engine.__init__(self, model, **kwargs)``; if ``__init__``
does ``Args(model=model, **kwargs)`` and ``Args`` has no ``x``, the call raises there. The
probe follows each ``**kwargs`` inside the callee package (``_forwards``); here the caller's
keys the first callee does not name are bound hop by hop. A key is an error when every
forwarding call rejects it, and the finding says the chain.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.analysis.findings import Category, Finding, Severity
from harness.models import KEYWORD_ONLY, POSITIONAL_OR_KEYWORD, VAR_KEYWORD, Parameter, SymbolKind

if TYPE_CHECKING:
    from harness.analysis.facts import Forwards
    from harness.analysis.rules.base import Context
    from harness.analysis.uses import CallUse


def _named(params: tuple[Parameter, ...]) -> set[str]:
    return {p.name for p in params if p.kind in (POSITIONAL_OR_KEYWORD, KEYWORD_ONLY)}


def rejected(fw: Forwards, extras: list[str], hops: tuple[str, ...] = ()) -> dict[str, list[str]]:
    """Pure: key -> the chain of hops that ends where it is rejected (every forward rejects)."""
    keys = [k for k in extras if k not in set(fw.removed)]
    per_site: list[dict[str, list[str]]] = []
    for site in fw.sites:
        params = site.parameters
        hop = f"{site.target} ({site.file}:{site.line})"
        here: dict[str, list[str]] = {}
        explicit = set(site.keywords)
        for k in keys:
            if k in explicit:
                here[k] = [*hops, hop, "which passes it as well"]
        lenient = site.extra in ("ignore", "allow", "unknown")
        takes_any = any(p.kind == VAR_KEYWORD for p in params)
        rest = [k for k in keys if k not in _named(params) and k not in explicit]
        if takes_any and site.forwards:
            here.update(rejected(site.forwards, rest, (*hops, hop)))
        elif not takes_any and not lenient:
            here.update({k: [*hops, hop] for k in rest})
        per_site.append(here)
    if not per_site:
        return {}
    common = set(per_site[0])
    for here in per_site[1:]:
        common &= set(here)
    return {k: per_site[0][k] for k in keys if k in common}


def key_line(use: CallUse, names: tuple[str, ...]) -> int | None:
    """The line that puts the one rejected key into the dict spread with ``**`` (None: the
    call passes it by name, or it is not one key)."""
    if len(names) != 1 or names[0] in use.keywords:
        return None
    return next((k.line for k in use.spread or () if k.key == names[0]), None)


def forwarded(ctx: Context) -> list[Finding]:
    """Keys of each call that a ``**kwargs`` hands on to calls that all reject them."""
    out: list[Finding] = []
    for use in ctx.scan.calls:
        key = f"{use.ref.module}:{use.ref.qualname}"
        sym = ctx.callee(key)
        if sym is None or not sym.forwards:
            continue
        if sym.kind == SymbolKind.CLASS:
            params = sym.symbol.parameters or ()
        else:
            params = sym.parameters(bound=use.on_instance)
        if not any(p.kind == VAR_KEYWORD for p in params):
            continue
        passed = [*use.keywords, *(k.key for k in use.spread or ())]
        extras = [k for k in dict.fromkeys(passed) if k not in _named(params)]
        if not extras:
            continue
        name = sym.qualname
        for k, chain in rejected(sym.forwards, extras).items():
            path = " -> ".join(chain)
            twice = chain[-1] == "which passes it as well"
            f = ctx.finding(
                Severity.ERROR,
                Category.DUPLICATE_ARGUMENT if twice else Category.UNEXPECTED_KWARG,
                use,
                key,
                f"{name}() got an unexpected keyword argument '{k}': it takes **kwargs and "
                f"passes them on to {path}, which takes no '{k}'"
                if not twice
                else f"{name}() got multiple values for keyword argument '{k}': it passes "
                f"**kwargs on to {' -> '.join(chain[:-1])}, which also passes '{k}' itself",
                f"Drop or rename {k}: the function {name} hands it to does not take it now.",
                sym,
                keywords=(k,),
                origin_line=key_line(use, (k,)),
            )
            out.append(f)
    return out
