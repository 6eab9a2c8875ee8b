"""What every hosts.toml-backed target kind shares (``ssh``, ``exec``): one entry schema and
one place for what their targets mirror of the entry.

An entry of any kind has an interpreter, a workdir, a run environment, a time limit per
command, and the lines it was written on. :class:`Entry` holds them, :func:`common_keys` and
:func:`parse_common` check them (unknown keys, required ones, types, seconds, empty strings,
env values -- one error each, naming ``file:line``), and :class:`EntryTarget` is what a
target reads of them. A kind adds only its own keys (``address``/``user``/``port``...,
``via``/``exec``) and its own checks; a new key every kind has is one line here.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from harness.config import Linker, TableChecker
from harness.targets.base import Target

#: The keys every entry has: (TOML type, the example a hint shows); ``float``: seconds.
_COMMON: dict[str, tuple[type, str]] = {
    "python": (str, 'python = "/root/venv/bin/python"'),
    "workdir": (str, 'workdir = "/root/work"'),
    "env": (dict, 'env = { HF_HOME = "/data/hf" }'),
    "timeout": (float, "timeout = 900"),
}


def common_keys(**examples: str) -> dict[str, tuple[type, str]]:
    """The keys every entry has, with a kind's own examples (``python='python = "..."'``)."""
    return {k: (t, examples.get(k, ex)) for k, (t, ex) in _COMMON.items()}


E = TypeVar("E", bound="Entry")


@dataclass(frozen=True, kw_only=True)
class Entry:
    """What every ``[hosts.NAME]`` entry holds, whatever its kind (the kind's own keys are
    its subclass's fields)."""

    name: str
    python: str = "python3"
    workdir: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    #: seconds for one command or probe there (``None``: :mod:`harness.targets.timeouts`)
    timeout: float | None = None
    source: str | None = None  # "hosts.toml:12" where the table starts, for messages
    #: "hosts.toml:14" per key written in the table, so a late error (an identity that turns
    #: out to be a folder) can name the very line. Not part of equality.
    where: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

    def own_listing(self) -> dict[str, Any]:
        """The kind's own keys, as ``harness hosts --json`` shows them (first)."""
        return {}

    def listing(self) -> dict[str, Any]:
        """What ``harness hosts --json`` shows of the entry."""
        return {
            **self.own_listing(),
            "python": self.python,
            "workdir": self.workdir,
            "source": self.source,
        }

    def link(self: E, check: TableChecker, host: Linker) -> E:
        """The entry with the hosts it names resolved; one that names none is itself."""
        return self


def parse_common(
    check: TableChecker,
    name: str,
    table: Mapping[str, Any],
    keys: Mapping[str, tuple[type, str]],
    required: Mapping[str, str],
) -> dict[str, Any]:
    """Check one ``[hosts.NAME]`` table against its kind's ``keys`` (``required``: key -> the
    hint when it is missing) and return :class:`Entry`'s fields; the kind checks the rest."""
    here = ("hosts", name)
    check.unknown_keys(table, here, keys)
    for key, hint in required.items():
        if key not in table:
            raise check.fail((*here, key), "required key missing", hint)
    for key, value in table.items():
        kind, example = keys[key]
        if kind is float:  # seconds: a TOML integer or float, > 0 (nan and inf are not)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                value = -1
            if not 0 < value < float("inf"):
                raise check.fail(
                    (*here, key), f"expected seconds > 0, got {table[key]!r}", f"e.g. {example}"
                )
            continue
        check.typed(value, kind, (*here, key), example)
    for key in [k for k in required if keys[k][0] is str] + ["python"]:
        if key in table and not table[key].strip():
            raise check.fail((*here, key), "must not be empty", f"e.g. {keys[key][1]}")
    env = table.get("env", {})
    for var, value in env.items():
        check.typed(value, str, (*here, "env", var), f'env = {{ {var} = "{value}" }}')
    return {
        "name": name,
        "python": table.get("python", "python3"),
        "workdir": table.get("workdir"),
        "env": dict(env),
        "timeout": table.get("timeout"),
        "source": check.where(here),
        "where": {key: check.where((*here, key)) for key in table},
    }


class EntryTarget(Target):
    """A target a hosts.toml entry names: what it reads of the entry, in one place."""

    @property
    @abstractmethod
    def entry(self) -> Entry: ...

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.entry.name

    @property
    def run_env(self) -> Mapping[str, str]:
        return self.entry.env

    @property
    def default_workdir(self) -> str | None:
        return self.entry.workdir

    def python_argv(self) -> list[str]:
        return [self.entry.python]

    @property
    def command_timeout(self) -> float:
        from harness.targets.timeouts import command_timeout

        return command_timeout(self.entry.timeout)

    def setting_line(self, key: str) -> str | None:
        return self.entry.where.get(key) or self.entry.source
