"""Keys read from a dict view of a callee object that the release checked no longer has: the
one rule saying ``missing-key``.

``cfg.to_dict().pop("legacy")`` / ``d = asdict(cfg); d["legacy"]`` raise KeyError once the
callee drops the field the key comes from. The probe reads each view's keys from the class's
source (``probes/signatures/_views.py``): the dataclass's fields, the attributes set on
``self``, what ``to_dict`` builds from them. An error only where the baseline's view held the
key and the installed one, closed (every key it can hold is known), does not -- a field the
caller put there itself, or one the class never had, is not this rule's to judge.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.analysis.findings import Category, Finding, Severity
from harness.analysis.rules.base import Produced, Rule

if TYPE_CHECKING:
    from harness.analysis.rules.base import Context, Earlier
    from harness.analysis.uses import KeyUse

_CALLED = {"asdict": "asdict({obj})", "vars": "vars({obj})", "__dict__": "{obj}.__dict__"}


def view_text(use: KeyUse) -> str:
    """How the caller spells the view: ``Config.to_dict()``, ``asdict(Config)``."""
    cls = use.ref.qualname.rsplit(".", 1)[-1]
    return _CALLED.get(use.view, "{obj}." + use.view + "()").format(obj=cls)


def check(ctx: Context, _: Earlier) -> Produced:
    out: list[Finding] = []
    if ctx.baseline is None:
        return Produced()
    for use in ctx.scan.keys:
        new, old = ctx.callee(use.symbol), ctx.base_callee(use.symbol)
        if new is None or old is None or new.views is None or old.views is None:
            continue
        now, was = new.views.get(use.view), old.views.get(use.view)
        if now is None or was is None or not now.closed:
            continue
        if use.key in now.keys or use.key not in was.keys:
            continue
        cls = new.qualname.rsplit(".", 1)[-1]
        where = ctx.version_of(use.symbol.split(":")[0])
        old_v = f"{old.dist} {old.version or 'baseline'}"
        read = {"pop": f".pop({use.key!r})", "del": f"del [{use.key!r}]"}.get(
            use.how, f"[{use.key!r}]"
        )
        out.append(
            ctx.finding(
                Severity.ERROR,
                Category.MISSING_KEY,
                use,
                use.symbol,
                f"KeyError: {use.key!r}: {view_text(use)} has no key {use.key!r} in {where} -- "
                f"its keys are {now.how} ({cls} at {new.file}:{new.symbol.line}); {old_v} set "
                f"it at {was.keys[use.key]}. The caller reads it with {read}"
                + (
                    f" (the view taken on line {use.view_line})"
                    if use.view_line != use.line
                    else ""
                ),
                f"Read it with .get({use.key!r}) and handle its absence, or use what {where}'s "
                f"{cls} has instead.",
                new,
                attribute=use.key,
                origin_line=use.view_line if use.view_line != use.line else None,
            )
        )
    return Produced(tuple(out))


RULE = Rule("keys", frozenset({Category.MISSING_KEY}), check)
