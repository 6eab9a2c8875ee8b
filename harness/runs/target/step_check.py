"""``harness check --step STEP``: a step's ``vllm serve`` flags and JSON config keys against
the vLLM the target has, read statically (any target kind, ``pypi:vllm==X`` included).

The step is resolved as ``harness run`` would launch it
(:func:`harness.runs.target.describe.describe`),
the server's arguments are read from its argv (:func:`harness.analysis.serve.find_serve`), one
``serveargs`` probe reads what that vLLM accepts, and the ``serve`` rule decides -- before any
model loads. Findings point at the line of ``pipeline.toml`` that writes the flag or key.
"""

from __future__ import annotations

import posixpath
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from harness.analysis.checker import Checker
from harness.analysis.findings import CheckReport
from harness.analysis.scan import CallerInfo, Scan
from harness.analysis.serve import (
    CONFIGS,
    ServeCall,
    ServeFacts,
    ServeVocab,
    find_serve,
    probe_args,
    shell_words,
)
from harness.analysis.uses import Site
from harness.config import locate_line
from harness.errors import TargetError
from harness.probe_runner import run_probe
from harness.runs.target.describe import StepPlan
from harness.targets.base import Target


def words_of(argv: Sequence[str]) -> tuple[list[str], bool]:
    """Pure: the words a step runs -- a shell step's text split as the shell would (roughly),
    else its argv -- and whether they came from a shell step."""
    if len(argv) == 3 and argv[1] == "-c" and posixpath.basename(argv[0]) in ("sh", "bash"):
        return shell_words(argv[2]) or [], True
    return list(argv), False


class Locator:
    """Pure over the pipeline's text: the line a flag or key of a step's command is written
    on -- from the step's ``command`` on, then anywhere (a parameter), else the command."""

    def __init__(self, path: str, text: str, step: str, sets: Mapping[str, str] = {}) -> None:
        self.path, self.lines, self.sets = path, text.splitlines(), dict(sets)
        self.start = locate_line(text, ("steps", step, "command")) if text else 1

    def __call__(self, index: int, needle: str) -> Site:
        order = [*range(self.start - 1, len(self.lines)), *range(0, self.start - 1)]
        for name, value in self.sets.items():  # written by --set, not by the file
            words = [w.split("=", 1)[0] for w in value.split()]
            if needle in value if needle.startswith('"') else needle in words:
                return self._set(name, value, self.start)
        for i in order:
            if needle in self.lines[i]:
                row = self.lines[i].strip()
                for name, value in self.sets.items():  # the line's value is --set's
                    if "{" + name + "}" in row or re.match(rf"{re.escape(name)}\s*=", row):
                        return self._set(name, value, i + 1)
                return Site(self.path, i + 1, row)
        row = self.lines[self.start - 1].strip() if self.start <= len(self.lines) else ""
        return Site(self.path, self.start, row)

    def _set(self, name: str, value: str, line: int) -> Site:
        """The --set that wrote what the finding is about, quoted in place of the file's line
        (which holds the value it overrode)."""
        return Site(self.path, line, f"--set {name}={value}")


def serve_call(plan: StepPlan, text: str, sets: Mapping[str, str] = {}) -> ServeCall | None:
    """Pure: the ``vllm serve`` call ``plan`` runs, its arguments located in ``text`` (or in
    the ``--set`` that wrote them)."""
    words, _shell = words_of(plan.command)
    return find_serve(words, Locator(plan.pipeline or "pipeline.toml", text, plan.name, sets))


def _venv(program: str) -> str | None:
    """``/opt/env/bin/vllm`` -> ``/opt/env``: the environment the command names, if it does."""
    head, _, _name = program.rpartition("/bin/")
    return head if head.startswith("/") else None


def read_vocab(target: Target, call: ServeCall, plan: StepPlan) -> tuple[ServeVocab, bool]:
    """What the target's vLLM accepts (the environment the command names, the step's
    ``PYTHONPATH`` first): one probe, cached by the files it read."""
    from harness.runs.pipeline.requires import step_paths

    args = {**probe_args(call), "prepend": step_paths(plan.env, plan.cwd or "/")}
    venv = _venv(call.program)
    if venv is not None:
        args["venv"] = venv
        if call.program.rsplit("/", 1)[-1].startswith("python"):
            args["python"] = call.program  # asked for its paths when it is no venv
    env = run_probe(target, "serveargs", args, cache=True)
    vocab = ServeVocab.from_dict(env.data)
    if vocab.version is None:
        raise TargetError(
            f"{target.label}: step {plan.name} starts {call.form}, but vllm is not installed "
            "there: nothing to check its arguments against",
            "name the vLLM to check against, e.g. -t pypi:vllm==0.26.0",
        )
    return vocab, env.cached


def _notes(call: ServeCall, vocab: ServeVocab) -> tuple[str, ...]:
    used = {c.flag for c in call.configs}
    return tuple(
        f"{flag}'s keys not checked: {vocab.label} has no {ref} that reads statically"
        for flag, ref in CONFIGS.items()
        if flag in used and flag not in vocab.configs
    )


def check_serve(
    target: Target, plan: StepPlan, text: str, sets: Mapping[str, str] = {}
) -> CheckReport | None:
    """The step's ``vllm serve`` arguments checked on ``target``; None when the step does not
    start a vLLM server. ``text``: the pipeline file's, to point at lines; ``sets``: the
    ``--set`` values, quoted where they wrote the argument."""
    start = time.perf_counter()
    call = serve_call(plan, text, sets)
    if call is None:
        return None
    vocab, cached = read_vocab(target, call, plan)
    scan = Scan(CallerInfo(f"step {plan.name}", None), {})
    good = known_good(plan, vocab.dist or "vllm")
    facts = ServeFacts(call, vocab, good)
    findings = Checker(scan, {"vllm": vocab.version}, serve=facts).run()
    return CheckReport(
        target=target.label,
        caller=f"step {plan.name} ({call.form})",
        caller_version=None,
        callees={vocab.dist or "vllm": vocab.version},
        baseline={},
        findings=tuple(findings),
        stats={
            "flags": len(call.flags),
            "keys": sum(len(c.keys) for c in call.configs),
            "seconds": round(time.perf_counter() - start, 3),
            "cached": cached,
        },
        notes=_notes(call, vocab),
    )


def known_good(plan: StepPlan, dist: str) -> str:
    """The step's ``known_good`` range for ``dist``, with where it is declared ("" none)."""
    for need in plan.known_good:
        if need.dist.lower().replace("_", "-") == dist.lower().replace("_", "-"):
            return f"{need.dist}{need.spec}" + (
                f" ({plan.known_good_at})" if plan.known_good_at else ""
            )
    return ""


def outside(plan: StepPlan, report: CheckReport) -> CheckReport:
    """``report`` with a note when the server's version is outside the step's ``known_good``
    range (``check --step``'s; the review says it among its own reasons)."""
    from dataclasses import replace

    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    for dist, version in report.callees.items():
        for need in plan.known_good:
            if need.dist.lower() != dist.lower() or not version:
                continue
            try:
                inside = SpecifierSet(need.spec).contains(version, prereleases=True)
            except InvalidSpecifier:
                continue
            if not inside:
                note = (
                    f"{dist} {version} is outside the range step {plan.name}'s environment "
                    f"is known to work in: {known_good(plan, dist)}"
                )
                return replace(report, notes=(*report.notes, note))
    return report


def pipeline_text(plan: StepPlan) -> str:
    """The pipeline file's text, for lines ('' when it cannot be read: lines fall back)."""
    try:
        return Path(plan.pipeline or "").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
