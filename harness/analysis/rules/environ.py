"""Environment variables the callee refuses at the value the caller sets.

Read from the callee's source: a ``raise`` guarded by a test of the variable (vLLM 0.34's
``Platform.validate_environ`` raises for ``VLLM_USE_V2_MODEL_RUNNER`` != "1"); the caller's
``os.environ[...] = ...`` (its series' patches included, with ``--with-patches``) sets it. An
error: the callee raises at start-up, whatever the signatures say.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.analysis.environ import refused
from harness.analysis.findings import Category, Finding, Severity
from harness.analysis.rules.base import Produced, Rule
from harness.analysis.uses import Site

if TYPE_CHECKING:
    from harness.analysis.rules.base import Context, Earlier


def check(ctx: Context, _: Earlier) -> Produced:
    out: list[Finding] = []
    for s, r in refused(ctx.scan.environ):
        where = ctx.version_of(r.file.replace("/", ".").removesuffix(".py"))
        test = f"{s.name} {r.op} {', '.join(repr(v) for v in r.values)}"
        f = ctx.finding(
            Severity.ERROR,
            Category.ENV_REFUSED,
            Site(s.file, s.line, s.source),
            s.name,
            f"{s.name}={s.value!r} is refused by {where}: {r.file}:{r.line} raises when "
            f"{test}: {r.source}",
            f"Stop setting {s.name}={s.value} for {where}, or pin a release that takes it.",
        )
        out.append(f)
    return Produced(tuple(out))


RULE = Rule("environ", frozenset({Category.ENV_REFUSED}), check)
