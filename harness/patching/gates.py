"""A patch's ``requires`` naming a dist that is installed nowhere on the target.

Unmet gates skip a patch, and say so: that is how one series serves several boxes. But a gate
on a name no box has (``vlm`` for ``vllm``) skips the patch everywhere, silently, forever.
When a gate names a dist the target does not have, the target's installed dists (one cheap
listing, only then) and the names the series know are searched for a close spelling; a close
one becomes a warning and part of the skipped patch's reason.
"""

from __future__ import annotations

import difflib
from dataclasses import replace
from typing import TYPE_CHECKING

from harness.patching.plan import SKIPPED, Plan
from harness.patching.series import Series
from harness.probe_runner import run_probe

if TYPE_CHECKING:
    from harness.targets.base import Target

#: Dists always worth suggesting, installed or not (the facts probe's own list).
KNOWN = ("torch", "vllm", "speculators", "transformers")


def misspelled(
    target: Target, required: list[str], known: list[str], installed: dict[str, str | None]
) -> dict[str, str]:
    """Gate dist -> "did you mean NAME (VERSION)?" for gates installed nowhere here whose
    name is close to an installed dist's or a known one's; one probe, only when needed."""
    missing = [d for d in required if installed.get(d) is None]
    if not missing:
        return {}
    from packaging.utils import canonicalize_name

    data = run_probe(target, "facts", {"dists": [], "gpus": False, "names": True}).data
    here = {str(canonicalize_name(k)): v for k, v in (data.get("installed") or {}).items()}
    out = {}
    for dist in missing:
        pool = {*here, *KNOWN, *known} - {dist}
        close = difflib.get_close_matches(dist, sorted(pool), n=1, cutoff=0.6)
        if close:
            have = here.get(close[0])
            out[dist] = f"did you mean {close[0]} ({have or 'not installed here either'})?"
    return out


def flag_skips(
    plan: Plan, series: Series, hints: dict[str, str], label: str
) -> tuple[Plan, list[str]]:
    """The plan with each skip caused by a likely typo saying so, and one warning per typo."""
    if not hints:
        return plan, []
    requires = {p.id: [d for d, _ in p.requires if d in hints] for p in series.patches}
    states, warnings = [], []
    for state in plan.patches:
        typos = requires.get(state.id, []) if state.state == SKIPPED else []
        for dist in typos:
            state = replace(state, detail=f"{state.detail}; no dist {dist!r}: {hints[dist]}")
            warnings.append(
                f"{series.folder / 'series.toml'}: {state.id} requires {dist!r}, which is "
                f"installed nowhere on {label} -- {hints[dist]} It was skipped."
            )
        states.append(state)
    return replace(plan, patches=tuple(states)), warnings
