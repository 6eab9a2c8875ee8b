"""A callee base that now remakes every subclass, under a caller class with machinery of its own.

transformers 5's ``PreTrainedConfig.__init_subclass__`` runs ``dataclass(cls, ...)`` on every
subclass (configuration_utils.py:359); a caller's config class that is also a pydantic model
(speculators' ``SpeculatorModelConfig``) is then built by two machineries at once, and fails
when it is defined or constructed. Read from the probe's ``construction`` of the callee base
(the ``__init_subclass__`` in its MRO) and the caller class's other bases (``Subclass.others``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.analysis.findings import Category, Finding, Severity
from harness.analysis.rules.base import Produced, Rule

if TYPE_CHECKING:
    from harness.analysis.rules.base import Context, Earlier

_MAKES = {"dataclass": "runs dataclass(cls) on", "__init__": "replaces __init__ of"}


def check(ctx: Context, _: Earlier) -> Produced:
    out: list[Finding] = []
    for sub in ctx.scan.subclasses:
        if not sub.others:
            continue
        for base in sub.bases:
            got = ctx.callee(base.key)
            hook = got.construction.hook if got and got.construction else None
            if got is None or hook is None:
                continue
            old = ctx.base_callee(base.key)
            was = old is not None and old.construction is not None and old.construction.hook
            ver = f"{old.dist} {old.version}" if old else ""
            other = sub.others[0]
            out.append(
                ctx.finding(
                    Severity.WARNING if was else Severity.ERROR,
                    Category.BASE_CONSTRUCTION,
                    sub,
                    base.key,
                    f"{hook.where.owner}.__init_subclass__ ({hook.where.at}) "
                    f"{_MAKES.get(hook.makes, 'remakes')} every subclass of {base.qualname}; "
                    f"{sub.name} is also {other.words}, so two machineries build it and "
                    "defining or constructing it fails"
                    + (f" (already so in {ver}, the version it was written for)" if was else ""),
                    f"Stop deriving {sub.name} from both: keep the {other.root.split('.')[-1]} "
                    f"and hold a {base.qualname} (or keep {base.module.split('.')[0]} at the "
                    "release it was written for).",
                    got,
                )
            )
            break
    return Produced(tuple(out))


RULE = Rule("construction", frozenset({Category.BASE_CONSTRUCTION}), check)
