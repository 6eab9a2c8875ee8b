"""Environment variables the callee refuses at the value the caller sets.

Read from the callee's source: a ``raise`` guarded by a test of the variable (vLLM 0.34's
``Platform.validate_environ`` raises for ``VLLM_USE_V2_MODEL_RUNNER`` != "1"); the caller's
``os.environ[...] = ...`` sets it, or a patch of its series does (applied here, or gated off
here: then the release refuses what the series needs -- its ceiling, said before a launch, with
the project's other series of the caller to go to). An error: the callee raises at start-up;
a warning where the guard tests something else too.
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
    series = ctx.series
    for s, r in refused(ctx.scan.environ, series.sets if series else ()):
        where = ctx.version_of(r.file.replace("/", ".").removesuffix(".py"))
        test = f"{s.name} {r.op} {', '.join(repr(v) for v in r.values)}"
        who = f"{s.patch} (gated off here: {s.gate}) sets" if s.gate else f"{s.patch} sets"
        said = (
            f"{who} {s.name}={s.value!r}, which {where} refuses"
            if s.patch
            else f"{s.name}={s.value!r} is refused by {where}"
        )
        fix = f"Stop setting {s.name}={s.value} for {where}, or pin a release that takes it."
        if s.gate:
            said += f": the series needs what {where} no longer runs"
            others = series.elsewhere if series else ()
            fix = f"Stay below {where} with this series" + (
                f", or go to {'; '.join(others)}." if others else "."
            )
        if r.conditional:
            said += " (when the other conditions of its guard hold)"
        f = ctx.finding(
            Severity.WARNING if r.conditional else Severity.ERROR,
            Category.ENV_REFUSED,
            Site(s.file, s.line, s.source),
            s.name,
            f"{said}: {r.file}:{r.line} raises when {test}: {r.source}",
            fix,
        )
        out.append(f)
    return Produced(tuple(out))


RULE = Rule("environ", frozenset({Category.ENV_REFUSED}), check)
