"""``pipeline.toml``'s keys for how a step is checked (pure): ``smoke`` (what ``--smoke`` cuts
and sets: :mod:`.smoke`) and ``verify`` (the output check the run program runs once the step
exits 0). Every error names ``file:line: key`` through the checker of :mod:`.file`."""

from __future__ import annotations

from typing import Any

from harness.runs.pipeline.env_keys import Checker, seconds
from harness.runs.pipeline.steps import NAME, VERIFY_TIMEOUT, SmokeSpec, VerifySpec

SMOKE_KEYS = ("samples", "layers", "params", "args", "layer_ids")
VERIFY_KEYS = ("command", "smoke", "timeout")


def verify(check: Checker, table: Any, key: tuple[str, ...]) -> VerifySpec:
    """``[steps.NAME.verify]``: ``command`` (an argv list), ``smoke`` (one for --smoke
    runs), ``timeout`` (seconds)."""
    check.table(table, key)
    check.keys(table, key, VERIFY_KEYS)
    hint = 'command = ["{python}", "{verifiers}/hidden_states.py", "--data", "{out}"]'
    if "command" not in table:
        raise check.fail((*key, "command"), "required key missing", hint)
    argvs = []
    for name in ("command", "smoke"):
        value = table.get(name, [])
        if not isinstance(value, list) or (name == "command" and not value):
            raise check.fail((*key, name), "expected a non-empty list of arguments", hint)
        argv = tuple(check.scalar(a, (*key, name)) for a in value)
        for a in argv:
            check.placeholders(a, (*key, name))
        argvs.append(argv)
    timeout = seconds(
        check,
        table.get("timeout", VERIFY_TIMEOUT),
        (*key, "timeout"),
        f"e.g. timeout = {VERIFY_TIMEOUT:g} (the default; a day is 86400)",
    )
    return VerifySpec(argvs[0], argvs[1], timeout)


def smoke(check: Checker, table: Any, key: tuple[str, ...]) -> SmokeSpec:
    """``[steps.NAME.smoke]``: ``samples`` / ``layer_ids`` (parameter names), ``layers`` (at
    least 1), ``args`` (appended in smoke mode), ``params`` (overrides in smoke mode)."""
    check.table(table, key)
    check.keys(table, key, SMOKE_KEYS)
    samples = table.get("samples")
    if samples is not None and (not isinstance(samples, str) or not NAME.match(samples)):
        raise check.fail(
            (*key, "samples"),
            "expected the name of the parameter that counts samples",
            'samples = "max_samples"',
        )
    layers = table.get("layers", 1)
    if isinstance(layers, bool) or not isinstance(layers, int) or layers < 1:
        raise check.fail((*key, "layers"), "expected a whole number of layers, at least 1")
    args = table.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise check.fail(
            (*key, "args"),
            "expected a list of strings, appended in smoke mode",
            'args = ["--load-format", "dummy"]',
        )
    for a in args:
        check.placeholders(a, (*key, "args"))
    ids = table.get("layer_ids")
    if ids is not None and (not isinstance(ids, str) or not NAME.match(ids)):
        raise check.fail(
            (*key, "layer_ids"),
            "expected the name of the parameter that holds the captured layer ids",
            'layer_ids = "layer_ids"',
        )
    params = check.params(table.get("params", {}), (*key, "params"))
    return SmokeSpec(samples, layers, params, tuple(args), ids)
