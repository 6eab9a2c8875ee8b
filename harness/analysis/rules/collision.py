"""A base's own ``self.name()`` that now reaches another base's ``name`` through the MRO.

transformers 5's ``PreTrainedConfig.save_pretrained`` calls ``self.validate()``
(configuration_utils.py:602), the method huggingface_hub's ``@strict`` adds; in a caller class
whose bases put a pydantic model first (speculators' ``SpeculatorModelConfig``), ``self.validate``
is pydantic's ``BaseModel.validate(value)`` and the call raises TypeError. Read from the
callee base's ``construction`` (its self-calls, the members its decorators add) and the
members the caller class's other machinery defines with required parameters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.analysis.findings import Category, Finding, Severity
from harness.analysis.rules.base import Produced, Rule
from harness.analysis.uses import Site

if TYPE_CHECKING:
    from harness.analysis.rules.base import Context, Earlier


def check(ctx: Context, _: Earlier) -> Produced:
    out: list[Finding] = []
    for sub in ctx.scan.subclasses:
        own = {m.name for m in sub.methods}
        for other in sub.others:
            for base in sub.bases:
                got = ctx.callee(base.key)
                con = got.construction if got else None
                if got is None or con is None or not 0 <= other.position < sub.position(base):
                    continue  # the base comes first in the MRO: its own member wins
                for name, required in sorted(other.members.items()):
                    call = con.self_calls.get(name)
                    if call is None or call.star or name in own:
                        continue
                    added = con.added.get(name)
                    if added is None and name not in got.mro_members:
                        continue
                    missing = [p for p in required[call.positional :] if p not in call.keywords]
                    if not missing:
                        continue
                    old = ctx.base_callee(base.key)
                    was = (
                        old is not None
                        and old.construction is not None
                        and (name in old.construction.self_calls)
                    )
                    ver = f"{old.dist} {old.version}" if old else ""
                    theirs = (
                        f"the {name} that {added.by.split('.')[-1]} adds ({added.where.at})"
                        if added
                        else f"{base.qualname}.{name}"
                    )
                    out.append(
                        ctx.finding(
                            Severity.WARNING if was else Severity.ERROR,
                            Category.BASE_METHOD_COLLISION,
                            Site(sub.file, other.line, other.source or sub.source, sub.scope),
                            base.key,
                            f"{call.where.owner} calls self.{name}() ({call.where.at}); in "
                            f"{sub.name}'s MRO {other.base} comes before {base.qualname}, so "
                            f"that reaches {other.root}.{name}({', '.join(required)}), not "
                            f"{theirs}: TypeError, missing {', '.join(repr(p) for p in missing)}"
                            + (f" (already so in {ver})" if was else ""),
                            f"Define {sub.name}.{name} so that a call without arguments runs "
                            f"{base.qualname}.{name}(self), or put {base.qualname} first.",
                            got,
                        )
                    )
    return Produced(tuple(out))


RULE = Rule("collision", frozenset({Category.BASE_METHOD_COLLISION}), check)
