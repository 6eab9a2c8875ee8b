"""What a step passes to ``vllm serve``: the one rule saying ``serve-argument``.

A flag the chosen vLLM's parser does not define makes argparse exit before any model loads
("unrecognized arguments"); a key of ``--speculative-config``/``--kv-transfer-config`` that is
no field of its config dataclass is refused when the config is built (vLLM's configs forbid
extra fields). Both are errors here, at ``file:line`` of the step's command, with the nearest
valid name. A prefix argparse completes (``--enforce`` for ``--enforce-eager``) is a warning: it
binds while it stays unique.
"""

from __future__ import annotations

import difflib
from dataclasses import replace
from typing import TYPE_CHECKING

from harness.analysis.findings import Category, Finding, Severity
from harness.analysis.rules.base import Produced, Rule

if TYPE_CHECKING:
    from collections.abc import Iterable

    from harness.analysis.rules.base import Context, Earlier
    from harness.analysis.serve import ServeFacts
    from harness.analysis.uses import Site


def nearest(name: str, pool: Iterable[str]) -> str | None:
    """Pure: the valid name ``name`` most likely meant (None: nothing close)."""
    got = difflib.get_close_matches(name, sorted(pool), n=1, cutoff=0.6)
    return got[0] if got else None


def _finding(
    ctx: Context,
    severity: Severity,
    site: Site,
    symbol: str,
    subject: str,
    message: str,
    fix: str,
    where: tuple[str | None, int | None] = (None, None),
) -> Finding:
    f = ctx.finding(
        severity, Category.SERVE_ARGUMENT, site, symbol, message, fix, keywords=(subject,)
    )
    return replace(f, callee_file=where[0], callee_line=where[1])


def flag_findings(ctx: Context, facts: ServeFacts) -> list[Finding]:
    vocab, form = facts.vocab, facts.call.form
    out: list[Finding] = []
    for flag in facts.call.flags:
        if vocab.accepts(flag.name):
            continue
        longs = [f for f in vocab.flags if f.startswith("--")]
        completes = [f for f in longs if f.startswith(flag.name)] if flag.name[:2] == "--" else []
        if len(completes) == 1:
            out.append(
                _finding(
                    ctx,
                    Severity.WARNING,
                    flag.site,
                    f"{form} {flag.name}",
                    flag.text,
                    f"{flag.text} is not a flag of {vocab.label}'s {form}: argparse takes it "
                    f"as {completes[0]} while no other flag starts so",
                    f"Write {completes[0]} in full.",
                    vocab.flag_lines.get(completes[0], (None, None)),
                )
            )
            continue
        near = nearest(flag.name, vocab.flags)
        out.append(
            _finding(
                ctx,
                Severity.ERROR,
                flag.site,
                f"{form} {flag.name}",
                flag.text,
                f"{vocab.label}'s {form} has no flag {flag.text}: it exits with "
                "'unrecognized arguments' before any model loads",
                f"Did you mean {near}?" if near else f"Drop it (see {form} --help).",
                vocab.flag_lines.get(near or "", (None, None)),
            )
        )
    return out


def key_findings(ctx: Context, facts: ServeFacts) -> list[Finding]:
    vocab, form = facts.vocab, facts.call.form
    out: list[Finding] = []
    for given in facts.call.configs:
        config = vocab.configs.get(given.flag)
        if given.problem is not None and given.site is not None:
            out.append(
                _finding(
                    ctx,
                    Severity.ERROR,
                    given.site,
                    f"{form} {given.flag}",
                    given.flag,
                    f"{given.flag}: {given.problem}; {form} cannot parse it",
                    f"Pass a JSON object, e.g. {given.flag} '{{\"method\": ...}}'.",
                )
            )
        if config is None or config.open:
            continue
        cls = config.ref.split(":")[-1]
        for key, site in given.keys:
            if key in config.fields:
                continue
            near = nearest(key, config.fields)
            out.append(
                _finding(
                    ctx,
                    Severity.ERROR,
                    site,
                    f"{config.ref}.{key}",
                    key,
                    f"{given.flag}: '{key}' is not a field of {cls} in {vocab.label}: the "
                    "config is refused (extra fields are forbidden) before any model loads",
                    f"Did you mean '{near}'?" if near else f"Drop '{key}'.",
                    (config.file, config.line),
                )
            )
    return out


def check(ctx: Context, earlier: Earlier) -> Produced:
    if ctx.serve is None:
        return Produced()
    return Produced((*flag_findings(ctx, ctx.serve), *key_findings(ctx, ctx.serve)))


RULE = Rule("serve", frozenset({Category.SERVE_ARGUMENT}), check)
