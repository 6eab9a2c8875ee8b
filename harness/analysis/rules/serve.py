"""What a step passes to ``vllm serve``: the one rule saying ``serve-argument``.

A flag the chosen vLLM's parser does not define makes argparse exit before any model loads
("unrecognized arguments"); a key of ``--speculative-config``/``--kv-transfer-config`` that is
no field of its config dataclass is refused when the config is built (vLLM's configs forbid
extra fields). Both are errors here, at ``file:line`` of the step's command, with the nearest
valid name. A prefix argparse completes (``--enforce`` for ``--enforce-eager``) is a warning: it
binds while it stays unique.

The connector ``--kv-transfer-config`` names is a value, not a key, and the server refuses it
at start-up all the same: a ``kv_connector`` this vLLM does not register ("Unsupported
connector type"), or a ``kv_connector_module_path`` the server's own environment cannot import
-- hs-connectors' connectors run inside ``vllm serve``, yet pip installs hs-connectors only
where speculators is (it declares no vLLM, and speculators' docs use two environments).
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
    from harness.analysis.serve import ConnectorUse, ServeFacts, ServeVocab
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


#: (severity, subject keyword, message, fix, (file, line) of the definition)
_Problem = tuple[Severity, str, str, str, tuple[str | None, int | None]]


def connector_problem(
    use: ConnectorUse, vocab: ServeVocab, known_good: str = ""
) -> _Problem | None:
    """Pure: what is wrong with the connector ``use`` names, in ``vocab``'s environment.
    ``known_good``: the step's declared range for the server (the fix of a module vLLM
    itself lacks is another vLLM, not an install)."""
    flag = "--kv-transfer-config"
    if use.module is None:  # a registered name
        if vocab.connectors is None or use.name in vocab.connectors:
            return None
        near = nearest(use.name, vocab.connectors)
        return (
            Severity.ERROR,
            "kv_connector",
            f"{flag}: '{use.name}' is not a KV connector {vocab.label} registers: the "
            "server refuses it at start-up (unsupported connector type)",
            f"Did you mean '{near}'?"
            if near
            else "Name a registered one, or its module with kv_connector_module_path.",
            (vocab.connectors_file, vocab.connectors.get(near or "")),
        )
    if not use.module:
        return (
            Severity.WARNING,
            "kv_connector_module_path",
            f"{flag}: kv_connector_module_path is empty: vLLM's connector factory refuses "
            "an empty one at start-up (ValueError; read in 0.24.0 and 0.26.0)",
            "Drop the key to use a registered connector, or name the connector's module.",
            (None, None),
        )
    module = vocab.connector_module
    if module is None or module.name != use.module:
        return None  # not read
    if not module.found:
        top = use.module.split(".")[0]
        if top == (vocab.dist or "vllm").replace("-", "_"):  # vLLM's own module: a release
            return (
                Severity.ERROR,
                "kv_connector_module_path",
                f"{flag}: kv_connector_module_path '{use.module}' is not part of "
                f"{vocab.label}: the server imports it at start-up (ModuleNotFoundError)",
                f"Use a {vocab.dist or 'vllm'} release that has it: the step is known to "
                f"work with {known_good}."
                if known_good
                else f"Use a {vocab.dist or 'vllm'} release that has it (known_good = {{ "
                f'{vocab.dist or "vllm"} = "..." }} in the step says which one works).',
                (None, None),
            )
        known = ": e.g. hs-connectors for hs_connectors." if top == "hs_connectors" else "."
        return (
            Severity.ERROR,
            "kv_connector_module_path",
            f"{flag}: kv_connector_module_path '{use.module}' is not installed where "
            f"{vocab.label} is: the server imports it at start-up (ModuleNotFoundError)",
            f"Install the package that has {top} into the server's environment (the serve "
            f"step's interpreter), not only beside the client{known}",
            (None, None),
        )
    if use.name in module.classes:
        return None
    near = nearest(use.name, module.classes)
    return (
        Severity.ERROR,
        "kv_connector",
        f"{flag}: {use.module} defines no class '{use.name}': the server refuses it at start-up",
        f"Did you mean '{near}'?" if near else f"Name a class of {use.module}.",
        (module.file, module.classes.get(near or "")),
    )


def connector_findings(ctx: Context, facts: ServeFacts) -> list[Finding]:
    """The connector the call names, against what the server's environment has."""
    use = facts.call.connector
    found = connector_problem(use, facts.vocab, facts.known_good) if use is not None else None
    if use is None or found is None:
        return []
    severity, subject, message, fix, where = found
    symbol = f"--kv-transfer-config kv_connector {use.name}"
    return [_finding(ctx, severity, use.site, symbol, subject, message, fix, where)]


def check(ctx: Context, earlier: Earlier) -> Produced:
    if ctx.serve is None:
        return Produced()
    serve = ctx.serve
    return Produced(
        (*flag_findings(ctx, serve), *key_findings(ctx, serve), *connector_findings(ctx, serve))
    )


RULE = Rule("serve", frozenset({Category.SERVE_ARGUMENT}), check)
