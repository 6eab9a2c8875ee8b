"""``harness check CALLER --fix``: from the check's errors to the next patch of the series.

1. The series as it stands must apply cleanly (else: refuse, nothing written); the check runs
   on the environment *as the series leaves it*, and the edits are made on that text, so the
   new patch stacks on the series' result.
2. Both callee versions are read (``locate``: the installed one and the baseline the check
   compared with); each error is decided by the rules (:mod:`harness.fixing.rules`).
3. The certain edits are made with LibCST (:mod:`harness.fixing.cst`), compiled on the
   target's Python, and re-checked in memory: a fix that does not clear its finding is taken
   back, and errors the fix uncovered (calls to a name whose import failed) are decided in the
   next round.
4. The edits become ``patches/<caller>/<version>/NNNN-<slug>.patch`` through the one patch
   writer (:func:`harness.patching.make.record_patch`) -- or, with ``--dry-run``, only shown.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from harness.analysis.findings import CheckReport, Finding
from harness.errors import UsageError
from harness.fixing import describe
from harness.fixing.facts import Reader
from harness.fixing.lines import line_map
from harness.fixing.model import Facts, FileFix, Fix, FixReport, Manual
from harness.fixing.recheck import Rechecker
from harness.fixing.rules import decide
from harness.fixing.texts import (
    base_texts,
    compile_errors,
    installed_versions,
    series_texts,
    write_patch,
)
from harness.reading.check import check
from harness.targets.base import Target

if TYPE_CHECKING:
    from harness.patching.overlay import Overlay

    pass

#: Rounds of decide -> edit -> re-check: a fix can uncover errors (calls of a name whose import
#: failed are only checked once it resolves), which the next round decides.
MAX_ROUNDS = 3


Key = tuple[str, int, str, str, str]


def _key(f: Finding, line: int | None = None) -> Key:
    """A finding's identity across re-checks: its line as mapped through the edits so far."""
    return (f.file, f.line if line is None else line, f.category, f.symbol, f.message)


@dataclass
class _State:
    """What the rounds accumulate (private to one ``fix`` call)."""

    base: dict[str, str]  # rel path -> the series' result
    texts: dict[str, str] = field(default_factory=dict)  # rel path -> edited text
    fixes: list[Fix] = field(default_factory=list)
    refused: dict[Key, str] = field(default_factory=dict)  # -> why it is left to a person
    moved_from: dict[str, str] = field(default_factory=dict)
    rechecks: int = 0

    def shift(self, rel: str, before: str, after: str) -> None:
        """Refused findings of ``rel`` follow their lines through an edit."""
        where = line_map(before, after)
        self.refused = {
            (k[0], where(k[1]), *k[2:]) if k[0] == rel else k: v for k, v in self.refused.items()
        }


def fix(
    target: Target,
    caller: str,
    root: Path,
    *,
    against: list[str] | None = None,
    baseline: list[str] | None = None,
    baseline_from: Path | None = None,
    slug: str = "check-fix",
    dry_run: bool = False,
    requires: Mapping[str, str] | None = None,
) -> FixReport:
    from harness.patching.make import check_slug

    check_slug(slug)
    start = time.perf_counter()
    # LibCST takes ~0.2 s to import: let it load while the probes run (they wait on I/O)
    warm = threading.Thread(target=lambda: __import__("harness.fixing.cst"), daemon=True)
    warm.start()
    leaves = series_texts(target, root)
    first = check(
        target,
        caller,
        against=against,
        baseline=baseline,
        baseline_from=baseline_from,
        with_patches=leaves,
    )
    checked = time.perf_counter() - start
    if first.errors and not first.baseline:
        raise UsageError(
            f"--fix needs the API {first.caller} was written for, and no baseline is known",
            "name it: --baseline DIST==VERSION (e.g. --baseline vllm==0.11.0)",
        )
    base, site = base_texts(target, first, leaves.of(first.caller) if leaves else {})
    state = _State(base)
    labels = (describe.versions_label(first.baseline), "")
    errors = list(first.errors)
    manual: tuple[Manual, ...] = ()
    if errors:
        errors, labels, manual = _decided(
            target, first, state, leaves, site, against, baseline_from, warm
        )
    files = tuple(
        FileFix(p, state.base[p], t) for p, t in sorted(state.texts.items()) if t != state.base[p]
    )
    fixes = tuple(state.fixes)
    gates = describe.gates(fixes, requires or {})
    why = describe.why_line(fixes, labels[0], labels[1]) if fixes else ""
    written = None
    if files and not dry_run:
        written = write_patch(root, first, target, files, fixes, manual, slug, why, gates, labels)
    total = time.perf_counter() - start
    return FixReport(
        target=target.label,
        caller=first.caller,
        caller_version=first.caller_version,
        callees=dict(first.callees),
        baseline=dict(first.baseline),
        fixed=fixes,
        manual=manual,
        files=files,
        requires=gates,
        why=why,
        patch=str(written) if written else None,
        dry_run=dry_run,
        notes=first.notes,
        stats={
            "seconds": round(total, 3),
            "check_seconds": round(checked, 3),
            "fix_seconds": round(total - checked, 3),
            "rechecks": state.rechecks,
        },
    )


def _decided(
    target: Target,
    first: CheckReport,
    state: _State,
    leaves: Overlay | None,
    site: str,
    against: list[str] | None,
    baseline_from: Path | None,
    warm: threading.Thread,
) -> tuple[list[Finding], tuple[str, str], tuple[Manual, ...]]:
    """The rounds of decide -> edit -> re-check over ``first``'s errors, both callee versions
    read (the baseline from PyPI): the errors left, the versions' labels, and each error left
    as what a person must do."""
    from harness.targets.pypi import PypiTarget

    labels = (describe.versions_label(first.baseline), "")
    errors = list(first.errors)
    every_series = leaves.texts() if leaves else {}
    against_t = tuple(against) if against else None
    spec = ",".join(f"{d}=={v}" for d, v in sorted(first.baseline.items()))
    series_over = leaves.without(first.caller).texts() if leaves else {}
    with PypiTarget(spec, wheelhouse=baseline_from) as old_target:
        recheck = Rechecker(
            target, first.caller, against_t, site, every_series, tuple(errors), old_target
        )
        reader = Reader(target, old_target, sorted(first.callees), labels, series_over)
        errors = _rounds(state, reader, recheck, target, first, errors, warm)
    facts = Facts(reader.old, reader.new, dict(state.moved_from))
    return errors, reader.labels, tuple(_left(f, state, facts) for f in errors)


def _rounds(
    state: _State,
    reader: Reader,
    recheck: Rechecker,
    target: Target,
    first: CheckReport,
    errors: list[Finding],
    warm: threading.Thread,
) -> list[Finding]:
    """Decide, edit, re-check -- until no rule has a fix for what is left (or MAX_ROUNDS)."""
    for n in range(MAX_ROUNDS):
        pending = [f for f in errors if _key(f) not in state.refused]
        reader.learn(pending, state.moved_from)
        if n == 0:
            reader.relabel(describe.versions_label(installed_versions(target, first, reader.new)))
        facts = Facts(reader.old, reader.new, dict(state.moved_from))
        todo = [d for d in (decide(f, facts) for f in pending) if isinstance(d, Fix)]
        if not todo:
            break
        warm.join()
        errors = _edit_and_recheck(todo, state, target, recheck)
        for fx in todo:
            if fx.moved and fx in state.fixes and fx.symbol is not None:
                reader.seed(fx.moved[0], fx.symbol)
    return errors


def _edit_and_recheck(
    todo: list[Fix], state: _State, target: Target, recheck: Rechecker
) -> list[Finding]:
    """Edit each file, compile it on the target, re-check; take back what did not hold."""
    from harness.fixing.cst import apply_edits  # LibCST: loaded in the background meanwhile

    before = {rel: state.texts.get(rel, text) for rel, text in state.base.items()}
    applied: list[Fix] = []
    by_file: dict[str, list[Fix]] = {}
    for fx in todo:
        by_file.setdefault(fx.finding.file, []).append(fx)
    for rel, fs in sorted(by_file.items()):
        if rel not in before:
            for fx in fs:
                _refuse(state, fx, f"{rel} could not be read on {target.label}")
            continue
        out = apply_edits(before[rel], [fx.edit for fx in fs])
        refused = {id(r.edit): r.reason for r in out.refused}
        for fx in fs:
            if id(fx.edit) in refused:
                _refuse(state, fx, refused[id(fx.edit)])
            else:
                applied.append(fx)
        state.texts[rel] = out.text
    changed = {p: t for p, t in state.texts.items() if t != before.get(p)}
    with ThreadPoolExecutor(max_workers=1) as pool:  # compile while the re-check scans
        compiled = pool.submit(compile_errors, target, changed)
        errors = _recheck(state, recheck)
        bad = compiled.result()
    for rel, why in bad.items():
        _take_back(state, rel, before, applied, f"the edited file does not compile: {why}")
    if bad:
        errors = _recheck(state, recheck)
    still = {_key(f) for f in errors}
    failed = {
        fx.finding.file
        for fx in applied
        if _key(fx.finding, _moved_line(fx.finding, before, state)) in still
    }
    if failed:  # the finding did not go away: take that file's edits of this round back
        for rel in failed:
            _take_back(state, rel, before, applied, "the re-check still reported it")
        errors = _recheck(state, recheck)
    for rel in changed:
        if rel not in failed:
            state.shift(rel, before[rel], state.texts[rel])
    for fx in applied:
        state.fixes.append(fx)
        if fx.moved:
            state.moved_from[fx.moved[0]] = fx.moved[1]
    return errors


def _recheck(state: _State, recheck: Rechecker) -> list[Finding]:
    """The errors with the edited texts standing in for the files (nothing written)."""
    state.rechecks += 1
    return recheck.errors(state.texts)


def _moved_line(f: Finding, before: dict[str, str], state: _State) -> int:
    text = before.get(f.file)
    return f.line if text is None else line_map(text, state.texts[f.file])(f.line)


def _take_back(
    state: _State, rel: str, before: dict[str, str], applied: list[Fix], why: str
) -> None:
    state.texts[rel] = before[rel]
    for fx in [a for a in applied if a.finding.file == rel]:
        applied.remove(fx)
        _refuse(state, fx, f"{why} after the edit ({fx.summary})")


def _refuse(state: _State, fx: Fix, reason: str) -> None:
    state.refused[_key(fx.finding)] = f"{fx.context}, but {reason}" if fx.context else reason


def _left(f: Finding, state: _State, facts: Facts) -> Manual:
    """A remaining error as "needs a person": a refused fix's reason, else the rules' word."""
    d = decide(f, facts)
    why = state.refused.get(_key(f))
    if why is not None:
        sig = d.signature if isinstance(d, Manual) else f.signature
        callee = f"{f.callee_file}:{f.callee_line}" if f.callee_file else None
        where = d.location if isinstance(d, Manual) else callee
        return Manual(f, why, sig, where)
    if isinstance(d, Manual):
        return d
    return Manual(d.finding, f"{d.summary}; not attempted within {MAX_ROUNDS} rounds")
