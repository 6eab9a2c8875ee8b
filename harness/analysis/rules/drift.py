"""Drift: the one rule saying ``drift`` -- the callee moved under the caller since the baseline.

Five ways a move reaches the caller, each its own module: the API of a used symbol
(``api_drift``), the return a call selects (``returns``), the kind of object a function returns
where a use depends on it (``return_kind``), a default a call relies on
(``defaults``), and the classes a function installed as a method can be (``installs``). It runs
after every rule that emits errors: a parameter change is not repeated where an error already
says how that call breaks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.analysis.findings import Category, Severity
from harness.analysis.rules.api_drift import api_drift
from harness.analysis.rules.base import Produced, Rule
from harness.analysis.rules.defaults import defaults_drift
from harness.analysis.rules.installs import installs_drift
from harness.analysis.rules.return_kind import return_kind_drift
from harness.analysis.rules.returns import returns_drift

if TYPE_CHECKING:
    from harness.analysis.rules.base import Context, Earlier


def check(ctx: Context, earlier: Earlier) -> Produced:
    erred = {f.symbol for f in earlier.findings if f.severity == Severity.ERROR}
    kinds, said = return_kind_drift(ctx)  # at each use: api_drift need not say it once more
    return Produced(
        (
            *api_drift(ctx, erred, said),
            *kinds,
            *returns_drift(ctx),
            *defaults_drift(ctx),
            *installs_drift(ctx),
        )
    )


RULE = Rule(
    "since-baseline",
    frozenset({Category.DRIFT}),
    check,
    after=("imports", "calls", "shifts", "names", "overrides"),
)
