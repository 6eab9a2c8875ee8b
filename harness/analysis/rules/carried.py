"""Files a patch series changes that the release checked deleted.

A series carried to a release it was not made for (the nearest earlier series of the dist, or
a caller's series on another callee version) cannot apply a hunk to a file that is gone; and
what the patch fixed may have gone with it (vLLM 0.34 deleted the V1 model runner,
``vllm/v1/worker/gpu_model_runner.py``). An error when the patch's gate takes the release; a
warning when its gate leaves the release out (the series' ceiling, said before a launch).
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
    for d in ctx.series.deleted if ctx.series else ():
        gated = f" (its gate, {d.gate}, leaves {d.version} out)" if d.gated_off else ""
        out.append(
            ctx.finding(
                Severity.WARNING if d.gated_off else Severity.ERROR,
                Category.PATCHED_FILE_DELETED,
                Site(d.patch_file, d.line, f"+++ b/{d.path}"),
                d.path,
                f"{d.patch} of the {d.series} series patches {d.path}, which {d.dist} "
                f"{d.version} deleted{gated}: the series cannot be carried to {d.version}",
                f"Find where {d.dist} {d.version} moved what {d.path} did, and make the patch "
                "again there (harness make-patch), or keep the series below "
                f"{d.dist} {d.version}.",
            )
        )
    return Produced(tuple(out))


RULE = Rule("carried", frozenset({Category.PATCHED_FILE_DELETED}), check)
