"""hosts.toml -> frozen config. Errors name file:line and key, and touch no network."""

from __future__ import annotations

import difflib
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from harness.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on 3.10
    import tomli as tomllib

HOSTS_FILENAME = "hosts.toml"
HOSTS_ENV_VAR = "HARNESS_HOSTS"
_HOST_NAME = re.compile(r"[A-Za-z0-9_.-]+")
_TOP_KEYS = ("default", "hosts", "groups")
#: The key that says which target kind an entry is (harness.targets.registry).
KIND_KEY = "kind"


class HostEntry(Protocol):
    """One ``[hosts.NAME]`` entry, as its target kind parsed it (``kind = "ssh"`` by default:
    :class:`harness.targets.ssh.entry.HostConfig`; ``"exec"``:
    :class:`harness.targets.wrapped.ExecEntry`; both on
    :class:`harness.targets.entries.Entry`): what harness reads of any entry."""

    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def address(self) -> str:
        """Where the other hosts of a spread step reach this one."""

    @property
    def python(self) -> str: ...
    @property
    def workdir(self) -> str | None: ...
    @property
    def source(self) -> str | None:
        """``hosts.toml:LINE`` where the table starts."""

    def reach(self) -> str:
        """How the host is reached, one line (``harness hosts``' table)."""

    def listing(self) -> dict[str, Any]:
        """What ``harness hosts --json`` shows of the entry."""

    def link(self, check: TableChecker, host: Linker) -> HostEntry:
        """The entry with the other hosts it names resolved (``host(name, key_path)``);
        an entry that names none returns itself."""


#: Another entry of the same file by name, linked first; errors name ``key_path``'s line.
Linker = Callable[[str, tuple[str, ...]], HostEntry]


@dataclass(frozen=True)
class HostsConfig:
    """Every host from one hosts.toml; empty when no file exists, which is not an error."""

    path: Path | None  # None when no file was found (that is fine)
    default: str | None = None
    hosts: Mapping[str, HostEntry] = field(default_factory=dict)
    #: ``[groups] nodes = ["gpu1", "gpu2"]``: a name for several hosts, usable as ``-t nodes``
    groups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


#: Parses one ``[hosts.NAME]`` table of its kind: (checker, name, table without ``kind``).
EntryParser = Callable[["TableChecker", str, dict[str, Any]], HostEntry]


def find_hosts_file(
    explicit: Path | None, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> Path | None:
    """Pick the hosts file: ``--hosts`` > ``$HARNESS_HOSTS`` > ``hosts.toml`` in cwd or above.

    A file the user named must exist (a typo should not silently mean "no hosts"); finding
    nothing by search is fine and returns ``None``.
    """
    env = os.environ if env is None else env
    named = [(explicit, "--hosts")] if explicit is not None else []
    if env.get(HOSTS_ENV_VAR):
        named.append((Path(env[HOSTS_ENV_VAR]), f"${HOSTS_ENV_VAR}"))
    if named:
        path, origin = named[0]
        path = path if path.is_absolute() or cwd is None else cwd / path
        if not _is_file(path):
            raise ConfigError(
                f"{path}: hosts file not found (given by {origin})",
                f"check the path given by {origin}, or leave it unset to use ./{HOSTS_FILENAME}",
            )
        return path
    start = (cwd if cwd is not None else Path.cwd()).absolute()
    for folder in (start, *start.parents):
        if _is_file(folder / HOSTS_FILENAME):
            return folder / HOSTS_FILENAME
    return None


def read_inventory(
    path: Path | None, parsers: Mapping[str, EntryParser], reserved: Sequence[str]
) -> HostsConfig:
    """Parse and validate a hosts file, each entry by its kind's parser (``parsers``, from
    :mod:`harness.targets.registry`); ``reserved``: names ``-t`` gives to target kinds.
    ``None`` (nothing found) gives an empty config."""
    if path is None:
        return HostsConfig(path=None)
    text = _read_text(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line, msg = _toml_error_line(str(exc), text)
        raise ConfigError(
            f"{path}:{line}: invalid TOML: {msg}",
            'strings need double quotes (address = "gpu-box"), tables look like [hosts.NAME]; '
            f"see the commented example {HOSTS_FILENAME} in the harness repository",
        ) from None
    return _build(path, text, data, parsers, reserved)


def locate_line(text: str, key_path: tuple[str, ...]) -> int:
    """Best-effort 1-based line where ``key_path`` is written in TOML ``text``.

    tomllib reports no positions for values, so we scan headers (``[a."b"]``) and
    ``dotted.key =`` lines. Preference: the exact key, else the first line defining something
    inside it (``[hosts.gpu.env]`` for ``hosts.gpu``), else the deepest enclosing table, else 1.
    """
    table: tuple[str, ...] = ()
    inside: int | None = None
    enclosing, enclosing_depth = 1, 0
    in_multiline: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if in_multiline is not None:  # skip lines inside a multi-line string
            if line.count(in_multiline) % 2 == 1:
                in_multiline = None
            continue
        header = _HEADER.match(line)
        if header:
            table = path = _split_key(header.group(1))
        else:
            assign = _ASSIGN.match(line)
            if not assign:
                continue
            path = table + _split_key(assign.group(1))
            for quote in ('"""', "'''"):
                if line.count(quote) % 2 == 1:
                    in_multiline = quote
        if path == key_path:
            return number
        if path[: len(key_path)] == key_path and inside is None:
            inside = number
        if key_path[: len(path)] == path and len(path) > enclosing_depth:
            enclosing, enclosing_depth = number, len(path)
    return inside if inside is not None else enclosing


_KEY_PART = r"""\s*(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*')\s*"""
_DOTTED = rf"{_KEY_PART}(?:\.{_KEY_PART})*"
_HEADER = re.compile(rf"\s*\[\[?({_DOTTED})\]\]?\s*(?:#.*)?$")
_ASSIGN = re.compile(rf"\s*({_DOTTED})=")
_PART = re.compile(r"""\s*([A-Za-z0-9_-]+|"((?:[^"\\]|\\.)*)"|'([^']*)')\s*""")


def _split_key(dotted: str) -> tuple[str, ...]:
    """``hosts."gpu" . port`` -> ("hosts", "gpu", "port"); quotes dropped, escapes kept."""
    parts = []
    for match in _PART.finditer(dotted):
        bare, double, single = match.groups()
        parts.append(double if double is not None else single if single is not None else str(bare))
    return tuple(parts)


def _toml_error_line(message: str, text: str) -> tuple[int, str]:
    """Split tomllib's "... (at line N, column M)" into N and a message without it."""
    found = re.search(r"\s*\(at line (\d+), column (\d+)\)\s*$", message)
    if found:
        return int(found.group(1)), f"{message[: found.start()]} (column {found.group(2)})"
    if message.endswith("(at end of document)"):
        return max(1, len(text.splitlines())), message.replace(" (at end of document)", "")
    return 1, message


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # e.g. a parent folder we may not list
        return False


def _read_text(path: Path) -> str:
    """Read UTF-8 text, turning every OS or decoding failure into a ConfigError."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(
            f"{path}: cannot read hosts file: {reason}",
            "check that the path names a readable file",
        ) from None
    try:
        return raw.decode("utf-8").removeprefix("\ufeff")  # a BOM (Notepad's) is no content
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{path}:{line}: not valid UTF-8 (byte {exc.start})",
            "TOML files must be UTF-8; re-save the file as UTF-8",
        ) from None


def toml_type(value: object) -> str:
    names = {bool: "boolean", int: "integer", float: "float", str: "string", dict: "table"}
    return names.get(type(value), "array" if isinstance(value, list) else "date/time")


class TableChecker:
    """Raises ConfigErrors that carry FILE:LINE for a key path of one file's text."""

    def __init__(self, path: Path, text: str) -> None:
        self.path, self.text = path, text

    def where(self, key_path: tuple[str, ...]) -> str:
        return f"{self.path}:{locate_line(self.text, key_path)}"

    def fail(self, key_path: tuple[str, ...], problem: str, hint: str) -> ConfigError:
        return ConfigError(f"{self.where(key_path)}: {'.'.join(key_path)}: {problem}", hint)

    def unknown_keys(self, table: Mapping[str, Any], prefix: tuple[str, ...], valid: Any) -> None:
        for key in table:
            if key not in valid:
                close = difflib.get_close_matches(key, list(valid), n=1)
                guess = f"did you mean '{close[0]}'? " if close else ""
                raise self.fail(
                    (*prefix, key), "unknown key", f"{guess}valid keys: " + ", ".join(valid)
                )

    def typed(self, value: object, want: type, key_path: tuple[str, ...], example: str) -> None:
        if not isinstance(value, want) or (isinstance(value, bool) and want is not bool):
            wanted = toml_type(want())
            raise self.fail(
                key_path, f"expected {wanted}, got {toml_type(value)} {value!r}", f"e.g. {example}"
            )


def _build(
    path: Path,
    text: str,
    data: Mapping[str, Any],
    parsers: Mapping[str, EntryParser],
    reserved: Sequence[str],
) -> HostsConfig:
    """Validate parsed TOML into frozen config; the first problem found is raised."""
    check = TableChecker(path, text)
    check.unknown_keys(data, (), _TOP_KEYS)
    hosts_table = data.get("hosts", {})
    check.typed(hosts_table, dict, ("hosts",), '[hosts.gpu] with address = "gpu-box"')
    parsed = {
        name: _entry(check, name, value, parsers, reserved) for name, value in hosts_table.items()
    }
    hosts = _link(check, parsed)
    groups = _build_groups(check, data.get("groups", {}), hosts, reserved)
    default = data.get("default")
    if default is not None:
        check.typed(default, str, ("default",), 'default = "gpu"')
        if default not in hosts and default not in groups:
            defined = ", ".join(hosts) if hosts else "none (add a [hosts.NAME] table)"
            raise check.fail(
                ("default",), f"no host named {default!r}", f"defined hosts: {defined}"
            )
    return HostsConfig(path=path, default=default, hosts=hosts, groups=groups)


def _link(check: TableChecker, parsed: Mapping[str, HostEntry]) -> dict[str, HostEntry]:
    """Every entry with the hosts it names (``via = "gpu"``) resolved, in file order; a name
    that is no host, or hosts that name each other in a circle, are errors at that key."""
    linked: dict[str, HostEntry] = {}
    chain: list[str] = []

    def host(name: str, key_path: tuple[str, ...]) -> HostEntry:
        if name not in parsed:
            close = difflib.get_close_matches(name, list(parsed), n=1)
            guess = f"did you mean {close[0]!r}? " if close else ""
            raise check.fail(
                key_path,
                f"no host named {name!r}",
                guess + "defined hosts: " + (", ".join(parsed) or "none"),
            )
        if name in chain:
            circle = " -> ".join([*chain[chain.index(name) :], name])
            raise check.fail(
                key_path, f"hosts name each other in a circle: {circle}", "end it at an SSH host"
            )
        if name not in linked:
            chain.append(name)
            linked[name] = parsed[name].link(check, host)
            chain.pop()
        return linked[name]

    return {name: host(name, ("hosts", name)) for name in parsed}


def _build_groups(
    check: TableChecker, table: object, hosts: Mapping[str, HostEntry], reserved: Sequence[str]
) -> dict[str, tuple[str, ...]]:
    """``[groups]``: each a non-empty list of defined hosts, named unlike any host."""
    check.typed(table, dict, ("groups",), 'nodes = ["gpu1", "gpu2"]')
    assert isinstance(table, dict)
    out: dict[str, tuple[str, ...]] = {}
    for name, members in table.items():
        here = ("groups", name)
        if not _HOST_NAME.fullmatch(name) or name in reserved or name in hosts:
            why = "is a host's name" if name in hosts else "is not a valid group name"
            raise check.fail(here, f"group {name!r} {why}", "name groups apart from hosts")
        if (
            not isinstance(members, list)
            or not members
            or not all(isinstance(m, str) for m in members)
        ):
            raise check.fail(
                here, "expected a non-empty list of host names", f'{name} = ["gpu1", "gpu2"]'
            )
        for m in members:
            if m not in hosts:
                close = difflib.get_close_matches(m, list(hosts), n=1)
                guess = f"did you mean {close[0]!r}? " if close else ""
                raise check.fail(
                    here,
                    f"no host named {m!r}",
                    guess + "defined hosts: " + (", ".join(hosts) or "none"),
                )
        if len(set(members)) != len(members):
            raise check.fail(here, "a host is listed twice", "list each host once")
        out[name] = tuple(members)
    return out


def _entry(
    check: TableChecker,
    name: str,
    table: object,
    parsers: Mapping[str, EntryParser],
    reserved: Sequence[str],
) -> HostEntry:
    """One ``[hosts.NAME]`` table: its name checked here, the rest by its kind's parser."""
    here = ("hosts", name)
    if not _HOST_NAME.fullmatch(name) or name in reserved:
        why = "is reserved (a target kind)" if name in reserved else "is not valid"
        kinds = list(reserved)
        listed = ", ".join(kinds[:-1]) + f" or {kinds[-1]}" if len(kinds) > 1 else "".join(kinds)
        raise check.fail(
            here,
            f"host name {name!r} {why}",
            f"use letters, digits, '_', '.', '-' (no ':'), and not {listed}",
        )
    if not isinstance(table, dict):
        raise check.fail(
            here,
            f"expected table, got {toml_type(table)}",
            f'write a table: [hosts.{name}] then address = "gpu-box" on the next line',
        )
    kind = table.get(KIND_KEY, "ssh")
    if kind not in parsers:
        raise check.fail(
            (*here, KIND_KEY),
            f"unknown target kind {kind!r}",
            "kinds a hosts.toml entry may be: " + ", ".join(parsers),
        )
    return parsers[kind](check, name, {k: v for k, v in table.items() if k != KIND_KEY})


def expand(value: str | None) -> str | None:
    return None if value is None else os.path.expanduser(value)
