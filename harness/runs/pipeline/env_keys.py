"""``pipeline.toml``'s keys for where a step runs and what it waits for (pure).

``python = "{vllm_python}"``: the interpreter the step runs in, when not the target's own
(``{python}`` in its command means it; the review reads that interpreter's packages).
``service = { port = "{port}", health = "/health", ready_timeout = 1800 }``: the step is a
server, ready once ``health`` answers 200. ``needs = ["serve"]``: service steps this one talks
to, started (or a live one reused) and ready before it launches. Every error names
``file:line: key`` through the checker of :mod:`.pipeline`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from harness.errors import ConfigError
from harness.runs.pipeline.steps import READY_TIMEOUT, UNCLAIMED_MINUTES, ServiceSpec, Step

SERVICE_KEYS = ("port", "health", "ready_timeout", "unclaimed_minutes")
_SERVICE_HINT = 'service = { port = "{port}", health = "/health", ready_timeout = 1800 }'


class Checker(Protocol):
    """What these parsers use of :mod:`.pipeline`'s checker."""

    def fail(self, key: tuple[str, ...], problem: str, hint: str | None = None) -> ConfigError: ...
    def table(self, value: Any, key: tuple[str, ...]) -> None: ...
    def keys(
        self, table: Mapping[str, Any], prefix: tuple[str, ...], valid: Sequence[str]
    ) -> None: ...
    def scalar(self, value: Any, key: tuple[str, ...]) -> str: ...
    def placeholders(self, text: str, key: tuple[str, ...]) -> None: ...
    def params(self, table: Any, key: tuple[str, ...]) -> dict[str, str]: ...


def service(check: Checker, table: Any, key: tuple[str, ...]) -> ServiceSpec:
    check.table(table, key)
    check.keys(table, key, SERVICE_KEYS)
    if "port" not in table:
        raise check.fail((*key, "port"), "required key missing", _SERVICE_HINT)
    port = check.scalar(table["port"], (*key, "port"))
    check.placeholders(port, (*key, "port"))
    if "{" not in port and not (port.isdigit() and 1 <= int(port) <= 65535):  # known at load
        raise check.fail(
            (*key, "port"), f"the port is {port!r}, not a port number (1..65535)", _SERVICE_HINT
        )
    health = table.get("health", "/health")
    if not isinstance(health, str) or not (
        health.startswith("/") or health.startswith(("http://", "https://"))
    ):
        raise check.fail(
            (*key, "health"),
            "expected a path on the service's port (/health) or a whole http:// URL",
            'health = "/health"',
        )
    check.placeholders(health, (*key, "health"))
    limit = seconds(
        check,
        table.get("ready_timeout", READY_TIMEOUT),
        (*key, "ready_timeout"),
        f"ready_timeout = {READY_TIMEOUT:g} (the default; a day is 86400)",
    )
    idle = table.get("unclaimed_minutes", UNCLAIMED_MINUTES)
    if isinstance(idle, bool) or not isinstance(idle, (int, float)) or not 0 < idle < float("inf"):
        raise check.fail(
            (*key, "unclaimed_minutes"),
            "expected a finite number of minutes, more than 0",
            "unclaimed_minutes = 10",
        )
    return ServiceSpec(port, health, limit, float(idle))


def seconds(check: Checker, value: Any, key: tuple[str, ...], hint: str) -> float:
    """A time limit: a finite number of seconds, at least 1 (TOML reads ``nan``, ``inf`` and
    ``1e-300`` as numbers; none is a limit a step can keep)."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not 1 <= value < float("inf")  # nan too
    ):
        raise check.fail(
            key, f"expected a finite number of seconds, at least 1, got {value!r}", hint
        )
    return float(value)


#: ``disk = {...}``: what the step will write, counted before it starts (runs/target/disk.py)
DISK_KEYS = ("out", "prepared", "layers", "hidden", "model", "format", "staging", "max_samples")
DISK_FORMATS = ("bf16", "fp16", "fp32", "fp8")
_DISK_HINT = (
    'disk = { out = "{hidden_states}", prepared = "{prepared}", layers = "{layer_ids}", '
    'model = "{model}" }'
)


def disk(check: Checker, table: Any, key: tuple[str, ...]) -> dict[str, str]:
    """The disk budget's inputs, each a template (resolved with the step's parameters)."""
    check.table(table, key)
    check.keys(table, key, DISK_KEYS)
    for need in ("out", "prepared", "layers"):
        if need not in table:
            raise check.fail((*key, need), "required key missing", _DISK_HINT)
    if "hidden" not in table and "model" not in table:
        raise check.fail(
            (*key, "model"),
            "give the hidden size (hidden) or the model whose config.json holds it (model)",
            _DISK_HINT,
        )
    out = {}
    for name, value in table.items():
        text = check.scalar(value, (*key, name))
        check.placeholders(text, (*key, name))
        out[name] = text
    fmt = out.get("format", "bf16")
    if "{" not in fmt and fmt not in DISK_FORMATS:
        raise check.fail(
            (*key, "format"), f"expected one of {', '.join(DISK_FORMATS)}", 'format = "bf16"'
        )
    return out


def needs(check: Checker, value: Any, key: tuple[str, ...]) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise check.fail(key, "expected a list of service step names", 'needs = ["serve"]')
    return tuple(value)


def python(check: Checker, value: Any, key: tuple[str, ...]) -> str:
    if not isinstance(value, str) or not value.strip():
        raise check.fail(
            key,
            "expected the path of an interpreter on the target",
            'python = "{vllm_python}", with vllm_python = "/opt/vllm/bin/python" in [params]',
        )
    check.placeholders(value, key)
    if "{python}" in value:
        raise check.fail(key, "{python} is what this key sets; it cannot use itself")
    return value


def check_needs(check: Checker, steps: Mapping[str, Step]) -> None:
    """Every ``needs`` names a service step of this file; a service is one host's, needs none."""
    for name, step in steps.items():
        here = ("steps", name)
        if step.service is not None and step.spread is not None:
            raise check.fail((*here, "spread"), "a service runs on one host; it cannot spread")
        if step.service is not None and step.needs:
            raise check.fail((*here, "needs"), "a service step cannot need another service")
        for need in step.needs:
            other = steps.get(need)
            if other is None or other.service is None:
                services = [n for n, s in steps.items() if s.service is not None]
                why = "no such step" if other is None else "it is not a service (no `service`)"
                raise check.fail(
                    (*here, "needs"),
                    f"{need!r}: {why}",
                    "service steps: " + (", ".join(services) or "none; " + _SERVICE_HINT),
                )
