"""One step + parameters -> the exact argv, cwd and env to launch (pure).

Parameters are substituted as ``{name}`` (``{{``/``}}`` for literal braces), may refer to each
other and to the built-ins, and are overridden per run with ``--set k=v``; ``-- extra args``
are appended. An ``env`` value that resolves to the empty string is left out.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping, Sequence

from harness.errors import ConfigError, UsageError
from harness.runs.pipeline.steps import (
    BUILTINS,
    NAME,
    PLACEHOLDER,
    UNCLAIMED_MINUTES,
    VERIFY_TIMEOUT,
    Pipeline,
    ResolvedStep,
    Step,
)
from harness.runs.record.parts import ServiceRecord
from harness.targets import shell


def parse_sets(items: Sequence[str]) -> dict[str, str]:
    """``["tp=8", "model=x"]`` -> ``{"tp": "8", "model": "x"}``; the last one wins."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if sep and name != name.strip() and NAME.match(name.strip()):
            raise UsageError(  # a typo, or a quoting slip: not a name harness would guess
                f"--set {item!r}: the name {name!r} has spaces around it",
                f"write it without them: --set {name.strip()}={value}",
            )
        if not sep or not NAME.match(name):
            raise UsageError(f"--set {item!r}: expected NAME=VALUE", "e.g. --set tp=8")
        out[name] = value
    return out


def step_parameters(pipeline: Pipeline, step: Step) -> dict[str, str]:
    """The step's parameter defaults: pipeline-wide, then the step's own."""
    return {**pipeline.params, **step.params}


def resolve_step(
    pipeline: Pipeline,
    name: str,
    builtins: Mapping[str, str],
    sets: Mapping[str, str] | None = None,
    extra: Sequence[str] = (),
    base_env: Mapping[str, str] | None = None,
    smoke: bool = False,
) -> ResolvedStep:
    """Pure: substitute every parameter into ``name``'s command, cwd and env.

    Args:
        builtins: ``workdir``, ``python``, ``run_id``, ``run_dir``, ``step``.
        sets: ``--set`` overrides; only declared parameters may be set.
        extra: ``-- extra args`` appended to the command (quoted for a shell step).
        base_env: hosts.toml's ``env`` for the host; the step's own env wins.
        smoke: a ``--smoke`` run: its output check is the step's ``verify.smoke``, its smoke
            ``args`` go before ``extra`` (``{smoke_layers}`` in them is a built-in).
    """
    step, declared = _declared(pipeline, name, sets or {})
    raw = {**declared, **(sets or {}), **builtins}
    origin = {k: ("steps", name, "params", k) if k in step.params else ("params", k) for k in raw}
    values = _resolve_values(pipeline, raw, origin, set(sets or {}))

    def sub(text: str, key: tuple[str, ...], quote: bool = False) -> str:
        def known(n: str) -> str:
            return values[n] if n in values else _missing(pipeline, key, n, values)

        return _substitute(text, known, quote)

    python = None
    if step.python is not None:  # its own interpreter: what {python} means for this step
        python = sub(step.python, ("steps", name, "python"))
        values = _resolve_values(pipeline, {**raw, "python": python}, origin, set(sets or {}))
    more: tuple[str, ...] = ()  # smoke args: a step that cuts its model itself
    if smoke and step.smoke is not None:
        more = tuple(sub(a, ("steps", name, "smoke", "args")) for a in step.smoke.args)
    if step.shell:
        assert isinstance(step.command, str)
        text = sub(step.command, ("steps", name, "command"), quote=True)
        if more or extra:
            text += " " + " ".join(shell.quote(a) for a in (*more, *extra))
        argv: tuple[str, ...] = ("/bin/sh", "-c", text)
    else:
        argv = tuple(sub(a, ("steps", name, "command")) for a in step.command) + more + tuple(extra)
    cwd = sub(step.cwd, ("steps", name, "cwd")) if step.cwd else values["workdir"]
    env = dict(base_env or {})
    for k, v in step.env.items():
        value = sub(v, ("steps", name, "env", k))
        if value:  # empty: an optional parameter left unset; the host's value stays
            env[k] = value
    params = {k: v for k, v in values.items() if k not in BUILTINS}
    check: tuple[str, ...] = ()
    timeout = VERIFY_TIMEOUT
    if step.verify is not None:
        which = "smoke" if smoke else "command"
        check = tuple(sub(a, ("steps", name, "verify", which)) for a in getattr(step.verify, which))
        timeout = step.verify.timeout
    service = None if step.service is None else _service(pipeline, name, step, sub)
    disk = None
    if step.disk is not None:
        disk = {k: sub(v, ("steps", name, "disk", k)) for k, v in step.disk.items()}
    return ResolvedStep(
        step=name,
        argv=argv,
        cwd=cwd,
        env=env,
        params=params,
        shell=step.shell,
        verify=check,
        verify_timeout=timeout,
        service=service,
        python=python,
        disk=disk,
    )


def _declared(
    pipeline: Pipeline, name: str, sets: Mapping[str, str]
) -> tuple[Step, dict[str, str]]:
    """The step ``name`` and its parameters' defaults; a usage error (with the closest name)
    for a step the file lacks or a ``--set`` of a parameter the step does not declare."""
    step = pipeline.steps.get(name)
    if step is None:
        known = list(pipeline.steps)
        close = difflib.get_close_matches(name, known, n=1)
        guess = f"did you mean '{close[0]}'? " if close else ""
        raise UsageError(
            f"no step {name!r} in {pipeline.path}", guess + "steps: " + ", ".join(known)
        )
    declared = step_parameters(pipeline, step)
    for key in sets:
        if key not in declared:
            close = difflib.get_close_matches(key, list(declared), n=1)
            guess = f"did you mean '{close[0]}'? " if close else ""
            why = " (it is built in)" if key in BUILTINS else ""
            raise UsageError(
                f"--set {key}=...: step {name!r} has no parameter {key!r}{why}",
                guess + "parameters: " + (", ".join(sorted(declared)) or "none"),
            )
    return step, declared


def _service(
    pipeline: Pipeline, name: str, step: Step, sub: Callable[[str, tuple[str, ...]], str]
) -> ServiceRecord:
    """A service step's port, health URL and time limit, resolved (``unclaimed_minutes`` only
    when set: else the run program's default)."""
    assert step.service is not None
    key = ("steps", name, "service", "port")
    port = sub(step.service.port, key)
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        raise ConfigError(
            f"{pipeline.where(*key)}: the port is {port!r}, not a port number (1..65535)",
            "set it with --set port=8000 or in [params]",
        )
    health = sub(step.service.health, ("steps", name, "service", "health"))
    url = health if "://" in health else f"http://127.0.0.1:{port}{health}"
    minutes = step.service.unclaimed_minutes
    return ServiceRecord(
        int(port),
        url,
        step.service.ready_timeout,
        None if minutes == UNCLAIMED_MINUTES else minutes,
    )


def _resolve_values(
    pipeline: Pipeline,
    raw: Mapping[str, str],
    origin: Mapping[str, tuple[str, ...]],
    from_cli: set[str],
) -> dict[str, str]:
    """Parameters may use each other (``data = "{workdir}/data"``); cycles are errors."""
    done: dict[str, str] = {}

    def value(name: str, chain: tuple[str, ...]) -> str:
        if name in done:
            return done[name]
        if name in chain:
            loop = " -> ".join((*chain[chain.index(name) :], name))
            raise ConfigError(
                f"{pipeline.where(*origin[chain[0]])}: parameters refer to each other: {loop}"
            )
        if name in BUILTINS:
            done[name] = raw[name]
            return raw[name]

        def inner(n: str) -> str:
            if n in raw:
                return value(n, (*chain, name))
            if name in from_cli:
                raise UsageError(
                    f"--set {name}=...: unknown parameter {{{n}}}",
                    "parameters: " + ", ".join(sorted(raw)),
                )
            return _missing(pipeline, origin[name], n, raw)

        done[name] = _substitute(raw[name], inner, quote=False)
        return done[name]

    for key in raw:
        value(key, ())
    return done


def _substitute(text: str, resolve: Callable[[str], str], quote: bool) -> str:
    """Replace ``{name}`` with ``resolve(name)`` (shell-quoted if asked), ``{{ }}`` with braces."""

    def repl(m: re.Match[str]) -> str:
        token = m.group(0)
        if token == "{{":
            return "{"
        if token == "}}":
            return "}"
        got = resolve(m.group(1))
        return shell.quote(got) if quote else got

    return PLACEHOLDER.sub(repl, text)


def _missing(pipeline: Pipeline, key: tuple[str, ...], name: str, known: Mapping[str, str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    guess = f"did you mean {{{close[0]}}}? " if close else ""
    raise ConfigError(
        f"{pipeline.where(*key)}: missing parameter {{{name}}}",
        guess
        + "define it under [params] (or the step's params), or use a built-in: "
        + ", ".join(BUILTINS),
    )
