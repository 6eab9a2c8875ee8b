"""``pipeline.toml`` -> frozen steps (:mod:`.steps`); every error names ``file:line: key``.

The file declares pipeline-wide ``[params]`` and ``[steps.NAME]`` tables (command as a list,
no shell unless ``shell = true``; ``cwd``; ``env``; step-local ``params``; ``help``; what the
step needs: ``requires`` = dist versions the step's own imports must see, ``checks`` = the
caller dists whose calls the step exercises, so the review gates it on those only).
An ``env`` value that resolves to the empty string is left out: an optional parameter can feed
a variable (``PYTHONPATH = "{train_pythonpath}"``) without clobbering the host's.
Parameters are substituted as ``{name}`` (``{{``/``}}`` for literal braces), may refer to each
other and to the built-ins ``{workdir}``, ``{python}``, ``{run_id}``, ``{run_dir}``,
``{step}``, ``{smoke_dir}``, and are overridden per run with ``--set k=v``; ``-- extra args``
are appended.

Loading is pure apart from reading the file; lines come from
:func:`harness.config.locate_line`. Resolving a step for a launch is :mod:`.resolve`.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.config import locate_line
from harness.errors import ConfigError
from harness.runs.pipeline import check_keys, env_keys
from harness.runs.pipeline.steps import (
    BUILTINS,
    NAME,
    PIPELINE_ENV_VAR,
    PIPELINE_FILENAME,
    PLACEHOLDER,
    SPREADS,
    Pipeline,
    Step,
)
from harness.runs.record.state import LATEST_WORDS
from harness.targets import shell

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on 3.10
    import tomli as tomllib

_TOP_KEYS = ("params", "steps")
_STEP_KEYS = (
    "help", "command", "shell", "cwd", "env", "params", "requires", "checks", "smoke",
    "spread", "nproc", "port", "verify", "known_good", "service", "needs", "python", "disk",
)  # fmt: skip
_STEP_NAME = re.compile(r"[A-Za-z0-9_.-]+\Z")
_NUL_HINT = (
    "a program's arguments and environment end at a NUL (\\u0000), so the step could not "
    "start; remove it"
)


def find_pipeline_file(
    explicit: Path | None, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> Path:
    """``--pipeline`` > ``$HARNESS_PIPELINE`` > ``pipeline.toml`` in cwd or a parent."""
    env = os.environ if env is None else env
    named = explicit or (Path(env[PIPELINE_ENV_VAR]) if env.get(PIPELINE_ENV_VAR) else None)
    if named is not None:
        path = named if named.is_absolute() or cwd is None else cwd / named
        if not path.is_file():
            origin = "--pipeline" if explicit else f"${PIPELINE_ENV_VAR}"
            raise ConfigError(f"{path}: pipeline file not found (given by {origin})")
        return path
    start = (cwd if cwd is not None else Path.cwd()).absolute()
    for folder in (start, *start.parents):
        if (folder / PIPELINE_FILENAME).is_file():
            return folder / PIPELINE_FILENAME
    raise ConfigError(
        f"no {PIPELINE_FILENAME} in {start} or any parent folder",
        "pass --pipeline FILE, or run from the repository that holds pipeline.toml",
    )


def load_pipeline(path: Path) -> Pipeline:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read pipeline file: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: not valid UTF-8", "save the file as UTF-8") from None
    return parse_pipeline(text, str(path))


def parse_pipeline(text: str, path: str = PIPELINE_FILENAME) -> Pipeline:
    """Pure: TOML text -> Pipeline, checking every key, type and placeholder name."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        line = m.group(1) if m else "1"
        msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        raise ConfigError(f"{path}:{line}: invalid TOML: {msg}") from None
    check = _Checker(path, text)
    check.no_nul(data, ())
    check.keys(data, (), _TOP_KEYS)
    params = check.params(data.get("params", {}), ("params",))
    steps_table = data.get("steps", {})
    check.table(steps_table, ("steps",))
    if not steps_table:
        raise check.fail(("steps",), "no steps defined", "add a [steps.NAME] table")
    steps = {name: check.step(name, table) for name, table in steps_table.items()}
    env_keys.check_needs(check, steps)
    return Pipeline(path=path, params=params, steps=steps, lines=check.lines)


class _Checker:
    """Validation that remembers the line of every key it saw, for later errors too."""

    def __init__(self, path: str, text: str) -> None:
        self.path, self.text = path, text
        self.lines: dict[str, int] = {}

    def line(self, key: tuple[str, ...]) -> int:
        dotted = ".".join(key)
        if dotted not in self.lines:
            self.lines[dotted] = locate_line(self.text, key)
        return self.lines[dotted]

    def fail(self, key: tuple[str, ...], problem: str, hint: str | None = None) -> ConfigError:
        return ConfigError(f"{self.path}:{self.line(key)}: {'.'.join(key)}: {problem}", hint)

    def no_nul(self, value: Any, key: tuple[str, ...]) -> None:
        """No NUL (``\\u0000``) anywhere: an argv or environment string ends at one, so the
        step could not start -- refused here, with its line, before any target is asked."""
        if isinstance(value, dict):
            items: list[tuple[Any, Any]] = list(value.items())
        elif isinstance(value, list):
            items = list(enumerate(value))
        else:
            return
        for name, item in items:
            here = (*key, name) if isinstance(name, str) else key
            if "\x00" in (name if isinstance(name, str) else ""):
                raise self.fail(key, f"the key {name!r} holds a NUL byte", _NUL_HINT)
            if isinstance(item, str) and "\x00" in item:
                raise self.fail(here, f"{item[:40]!r} holds a NUL byte", _NUL_HINT)
            self.no_nul(item, here)

    def keys(self, table: Mapping[str, Any], prefix: tuple[str, ...], valid: Sequence[str]) -> None:
        for key in table:
            self.line((*prefix, key))
            if key not in valid:
                close = difflib.get_close_matches(key, list(valid), n=1)
                guess = f"did you mean '{close[0]}'? " if close else ""
                raise self.fail((*prefix, key), "unknown key", guess + "valid: " + ", ".join(valid))

    def table(self, value: Any, key: tuple[str, ...]) -> None:
        if not isinstance(value, dict):
            raise self.fail(key, f"expected a table, got {type(value).__name__}")

    def params(self, table: Any, key: tuple[str, ...]) -> dict[str, str]:
        self.table(table, key)
        out = {}
        for name, value in table.items():
            here = (*key, name)
            self.line(here)
            if not NAME.match(name):
                raise self.fail(here, "parameter names are identifiers", "e.g. max_samples = 5000")
            if name in BUILTINS:
                raise self.fail(
                    here,
                    f"'{name}' is built in and filled in by harness",
                    "use it as {" + name + "} without defining it; set workdir in hosts.toml "
                    "or with --workdir",
                )
            out[name] = self.scalar(value, here)
            self.placeholders(out[name], here)
        return out

    def scalar(self, value: Any, key: tuple[str, ...]) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (str, int, float)):
            return str(value)
        raise self.fail(key, f"expected a string or number, got {type(value).__name__}")

    def placeholders(self, text: str, key: tuple[str, ...]) -> None:
        for m in PLACEHOLDER.finditer(text):
            if m.group(1) is not None and not NAME.match(m.group(1)):
                raise self.fail(
                    key,
                    f"bad placeholder {m.group(0)!r}",
                    "write {name} for a parameter and {{ }} for literal braces",
                )

    def step(self, name: str, table: Any) -> Step:
        here = ("steps", name)
        self.line(here)  # later messages about the step (--smoke, --set) name its own line
        if not _STEP_NAME.match(name):
            raise self.fail(here, f"step name {name!r} is not valid", "use letters, digits, _ . -")
        if name in LATEST_WORDS:
            raise self.fail(
                here,
                f"step name {name!r} is reserved: `harness logs {name}` and `harness stop "
                f"{name}` mean the newest run of any step",
                f"rename the step, e.g. {name}_step",
            )
        self.table(table, here)
        self.keys(table, here, _STEP_KEYS)
        use_shell = table.get("shell", False)
        if not isinstance(use_shell, bool):
            raise self.fail((*here, "shell"), "expected true or false")
        if "command" not in table:
            raise self.fail((*here, "command"), "required key missing", 'command = ["python", ...]')
        command = table["command"]
        cmd: tuple[str, ...] | str
        if use_shell:
            if not isinstance(command, str) or not command.strip():
                raise self.fail(
                    (*here, "command"),
                    "with shell = true the command is one string of shell text",
                    'command = "python x.py | tee out.txt"',
                )
            cmd = command
            self.placeholders(cmd, (*here, "command"))
        else:
            if not isinstance(command, list) or not command:
                raise self.fail(
                    (*here, "command"),
                    "expected a non-empty list of arguments",
                    'command = ["{python}", "train.py", "--lr", "{lr}"]; '
                    "or set shell = true for a string",
                )
            cmd = tuple(self.scalar(a, (*here, "command")) for a in command)
            for a in cmd:
                self.placeholders(a, (*here, "command"))
        cwd = table.get("cwd")
        if cwd is not None:
            if not isinstance(cwd, str):
                raise self.fail((*here, "cwd"), "expected a string", 'cwd = "{workdir}/repo"')
            self.placeholders(cwd, (*here, "cwd"))
        env = table.get("env", {})
        self.table(env, (*here, "env"))
        env_out = {}
        for var, value in env.items():
            where = (*here, "env", var)
            self.line(where)
            if not shell.ENV_NAME_RE.match(var):
                raise self.fail(where, "not a valid environment variable name")
            env_out[var] = self.scalar(value, where)
            self.placeholders(env_out[var], where)
        help_text = table.get("help", "")
        if not isinstance(help_text, str):
            raise self.fail((*here, "help"), "expected a string")
        return Step(
            name=name,
            command=cmd,
            shell=use_shell,
            cwd=cwd,
            env=env_out,
            params=self.params(table.get("params", {}), (*here, "params")),
            help=help_text,
            requires=self.requires(table.get("requires", {}), (*here, "requires")),
            known_good=self.requires(table.get("known_good", {}), (*here, "known_good")),
            checks=self.checks(table["checks"], (*here, "checks")) if "checks" in table else None,
            smoke=check_keys.smoke(self, table["smoke"], (*here, "smoke"))
            if "smoke" in table
            else None,
            verify=check_keys.verify(self, table["verify"], (*here, "verify"))
            if "verify" in table
            else None,
            **self.spread(table, here, use_shell),
            **self.environment(table, here),
        )

    def environment(self, table: Mapping[str, Any], here: tuple[str, ...]) -> dict[str, Any]:
        """``service``, ``needs``, ``python`` (:mod:`.pipeline_env`), those declared."""
        out: dict[str, Any] = {}
        for key, parse in (
            ("service", env_keys.service),
            ("needs", env_keys.needs),
            ("python", env_keys.python),
            ("disk", env_keys.disk),
        ):
            if key in table:
                out[key] = parse(self, table[key], (*here, key))
        return out

    def spread(
        self, table: Mapping[str, Any], here: tuple[str, ...], use_shell: bool
    ) -> dict[str, Any]:
        spread = table.get("spread")
        if spread is not None and spread not in SPREADS:
            raise self.fail(
                (*here, "spread"), f"unknown spread {spread!r}", "one of: " + ", ".join(SPREADS)
            )
        if spread is not None and use_shell and spread != "shard":
            raise self.fail((*here, "spread"), f"a {spread} step needs an argv command, not shell")
        for key in ("nproc", "port"):
            if key in table and spread != "torchrun" and not (key == "port" and spread == "ray"):
                raise self.fail(
                    (*here, key),
                    f'{key} is for spread = "torchrun"' + (' or "ray"' if key == "port" else ""),
                )
        port = table.get("port")
        if port is not None and (
            isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535
        ):
            raise self.fail((*here, "port"), "expected a port number, 1..65535")
        nproc = self.scalar(table.get("nproc", 1), (*here, "nproc"))
        self.placeholders(nproc, (*here, "nproc"))
        return {"spread": spread, "nproc": nproc, "port": port}

    def requires(self, table: Any, key: tuple[str, ...]) -> dict[str, str]:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet
        from packaging.utils import canonicalize_name

        self.table(table, key)
        out = {}
        for dist, spec in table.items():
            here = (*key, dist)
            self.line(here)
            if not isinstance(spec, str):
                raise self.fail(
                    here, "expected a version specifier string", f'{dist} = ">=4.56,<5"'
                )
            try:
                SpecifierSet(spec)
            except InvalidSpecifier:
                raise self.fail(
                    here, f"{spec!r} is not a version specifier", f'e.g. {dist} = ">=4.56,<5"'
                ) from None
            out[str(canonicalize_name(dist))] = spec.strip()
        return out

    def checks(self, value: Any, key: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
        """``["speculators"]`` (every callee) or ``{ speculators = ["vllm"] }`` (those only)."""
        hint = 'checks = ["speculators"], or checks = { speculators = ["vllm"] }'
        if _names(value):
            return {c: () for c in value}
        if isinstance(value, dict):
            for caller, callees in value.items():
                self.line((*key, caller))
                if not _names(callees) or not callees:
                    raise self.fail(
                        (*key, caller), "expected a non-empty list of callee dists", hint
                    )
            return {c: tuple(v) for c, v in value.items()}
        raise self.fail(key, "expected a list of caller dists or a table of their callees", hint)


def _names(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(x, str) and x for x in value)
