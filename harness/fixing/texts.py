"""The target's side of ``check --fix``: the texts the series leave (refusing an unclean
series), the caller's erring files as they stand (refusing hand edits), the installed versions
the patch is gated on, the edits compiled on the target's Python, and the patch written."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from harness.analysis.findings import CheckReport
from harness.errors import PatchError
from harness.fixing import describe
from harness.fixing.model import FileFix, Fix, Manual, Side
from harness.probe_runner import run_probe
from harness.targets.base import Target

if TYPE_CHECKING:
    from harness.patching.overlay import Overlay


def compile_errors(target: Target, texts: dict[str, str]) -> dict[str, str]:
    """rel path -> where an edited text does not compile on the target's Python (one probe)."""
    if not texts:
        return {}
    data = run_probe(target, "compiles", {"files": texts}).data
    return {
        rel: f"{rel}:{e['line']}: {e['message']} (Python {data['python']})"
        for rel, e in (data.get("errors") or {}).items()
    }


# -- reading the series and the caller's files ---------------------------------------------
def series_texts(target: Target, root: Path) -> Overlay | None:
    """The texts the series leave (what ``--with-patches`` checks with); refuse an unclean one.

    None: there is no series at all."""
    from harness.patching.library import SeriesLibrary
    from harness.patching.ops import status
    from harness.patching.overlay import overlay

    library = SeriesLibrary(root)
    if not library.dists():
        return None
    reports = status(target, library)
    for r in reports:
        what = r.unclean()
        if what is not None:
            raise PatchError(
                f"{target.label}: the {r.dist} {r.series_version} series does not apply "
                f"cleanly ({what}); nothing written",
                f"--fix stacks on the series' result: see `harness patches -t {target.label}` "
                "and fix the series (or revert-patches) first",
            )
    return overlay(reports)


def base_texts(
    target: Target, report: CheckReport, after: Mapping[str, str | None]
) -> tuple[dict[str, str], str]:
    """rel path -> each erring file's text as the caller's series leaves it, and the
    caller's site-packages on the target (as patchops names it).

    Refuses files edited by hand (neither pip's RECORD nor harness wrote them): a patch made
    on top of them would not apply anywhere else.
    """
    from harness.patching.ops import read_state

    files = sorted({f.file for f in report.errors})
    if not files:
        return {}, ""
    state = read_state(target, report.caller, files)
    by_hand = set(state.hand_edited()) & set(files)
    if by_hand:
        raise PatchError(
            f"{target.label}: {', '.join(sorted(by_hand))} differ from what pip installed and "
            "were not patched by harness; nothing written",
            f"record them first (harness make-patch {report.caller}) or reinstall the dist",
        )
    out: dict[str, str] = {}
    for rel in files:
        text = after.get(rel, state.live[rel].text if rel in state.live else None)
        if text is not None:
            out[rel] = text
    return out, state.root


def installed_versions(target: Target, report: CheckReport, new: Side) -> dict[str, str | None]:
    """The installed versions of the dists the baseline names, as the described symbols say
    (a dist is not its import name: scikit-learn is ``sklearn``); the target is asked only
    for a dist none of them belongs to."""
    from packaging.utils import canonicalize_name

    seen = {
        canonicalize_name(s.dist): s.version for s in new.symbols.values() if s.dist and s.version
    }
    got: dict[str, str | None] = {d: seen.get(canonicalize_name(d)) for d in report.baseline}
    missing = sorted(d for d, v in got.items() if v is None)
    if missing:
        data = run_probe(target, "facts", {"dists": missing, "gpus": False}).data
        found = {canonicalize_name(k): v for k, v in (data.get("dists") or {}).items()}
        got.update({d: found.get(canonicalize_name(d)) for d in missing})
    return got


# -- writing --------------------------------------------------------------------------------
def write_patch(
    root: Path,
    report: CheckReport,
    target: Target,
    files: tuple[FileFix, ...],
    fixes: tuple[Fix, ...],
    manual: tuple[Manual, ...],
    slug: str,
    why: str,
    gates: dict[str, str],
    labels: tuple[str, str],
) -> Path:
    """The edits as the series' next patch (``NNNN-slug.patch``), through the one patch
    writer; its body says what was compared and why each edit was made."""
    from packaging.utils import canonicalize_name

    from harness.patching.make import record_patch

    if report.caller_version is None:
        raise PatchError(f"{report.caller} has no version on {target.label}: no series to add to")
    made = (
        f"Made by `harness check {report.caller} --fix` on {target.label}: the APIs of "
        f"{labels[0]} (written for) and {labels[1]} (installed) compared; each edited file "
        "compiled on the target's Python and re-checked."
    )
    return record_patch(
        root,
        str(canonicalize_name(report.caller)),
        report.caller_version,
        slug,
        [f.diff() for f in files],
        why,
        made,
        gates,
        describe.details(fixes, manual),
    )
