"""What a step passes to ``vllm serve``, and what the chosen vLLM accepts. Pure.

:func:`find_serve` finds the server in a step's argv (``vllm serve ...``, ``python -m
vllm.entrypoints.openai.api_server ...``, either inside a shell step's text) and reads its
flags and the top-level keys of its JSON configs into a :class:`ServeCall`;
:meth:`ServeVocab.from_dict` reads the ``serveargs`` probe's answer: the flags vLLM's argument
parser defines (``EngineArgs``/``FrontendArgs`` fields as ``--field-name``, and every literal
``add_argument`` option) and the fields of the config dataclasses. The rule that compares them
is :mod:`harness.analysis.rules.serve`.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.analysis.uses import Site

#: The classes whose fields are ``vllm serve`` flags (``--field-name``), in every release
#: that has them (``FrontendArgs`` since 0.10; 0.8's frontend flags are literal).
FLAG_CLASSES = (
    "vllm.engine.arg_utils:AsyncEngineArgs",
    "vllm.entrypoints.openai.cli_args:FrontendArgs",
)
#: The modules whose ``add_argument("--x", "-y", ...)`` literals are flags too.
PARSER_MODULES = (
    "vllm.engine.arg_utils",
    "vllm.entrypoints.openai.cli_args",
    "vllm.entrypoints.cli.serve",
)
#: A JSON-valued flag -> the config dataclass its keys must be fields of (vLLM forbids extras).
CONFIGS = {
    "--speculative-config": "vllm.config:SpeculativeConfig",
    "--kv-transfer-config": "vllm.config:KVTransferConfig",
}
#: Where vLLM registers its KV connectors by name (``register_connector("Name", module, cls)``).
CONNECTOR_FACTORY = "vllm.distributed.kv_transfer.kv_connector.factory"
#: argparse's own.
ALWAYS = frozenset({"-h", "--help"})
API_SERVER = "vllm.entrypoints.openai.api_server"
CLI_MAIN = "vllm.entrypoints.cli.main"
_SHELL_OPS = frozenset({"&&", "||", ";", "|", "&", ";;"})


def flag_name(text: str) -> str:
    """``--speculative_config=...`` -> ``--speculative-config`` (vLLM's parser turns the
    underscores of a flag's name, up to a ``.``, into dashes)."""
    name = text.split("=", 1)[0].split(".", 1)[0]
    return "--" + name[2:].replace("_", "-") if name.startswith("--") else name


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class ServeFlag:
    """One option as written (``text``), its canonical ``name``, where it is."""

    text: str
    name: str
    site: Site


@dataclass(frozen=True)
class ConfigKeys:
    """A JSON config flag's value: its top-level keys (each with where it is written), or
    why it is not a JSON object (``problem``)."""

    flag: str
    keys: tuple[tuple[str, Site], ...] = ()
    problem: str | None = None
    site: Site | None = None
    #: the top-level keys whose values are strings (``kv_connector``), as written
    strings: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ConnectorUse:
    """The KV connector ``--kv-transfer-config`` names: by its registered ``name`` alone, or
    as a class of ``module`` (``kv_connector_module_path``: hs-connectors' connectors, which
    run inside the server and must be installed in *its* environment)."""

    name: str
    module: str | None
    site: Site


@dataclass(frozen=True)
class ServeCall:
    """``vllm serve`` as a step runs it: the form it is started in, its options, the keys of
    its JSON configs (``--speculative-config '{...}'``, or ``--speculative-config.method X``)."""

    form: str
    program: str = ""  # the executable as written: ``vllm``, ``/opt/env/bin/vllm``, a python
    flags: tuple[ServeFlag, ...] = ()
    configs: tuple[ConfigKeys, ...] = ()

    @property
    def connector(self) -> ConnectorUse | None:
        """The connector ``--kv-transfer-config`` names, when it names one by a string."""
        for given in self.configs:
            name = given.strings.get("kv_connector")
            if given.flag == "--kv-transfer-config" and name:
                site = dict(given.keys).get("kv_connector", given.site)
                if site is not None:
                    return ConnectorUse(name, given.strings.get("kv_connector_module_path"), site)
        return None


#: Where a token of the argv is written: (token index, the text to look for) -> Site.
Locate = Callable[[int, str], Site]


def _server_span(argv: Sequence[str]) -> tuple[str, int, int, int] | None:
    """(form, program, first argument, end) of the server command in ``argv``, else None."""
    for i, tok in enumerate(argv):
        base = tok.rsplit("/", 1)[-1]
        if base == "vllm" and i + 1 < len(argv) and argv[i + 1] == "serve":
            form, start = "vllm serve", i + 2
        elif base.startswith("python") and list(argv[i + 1 : i + 3]) == ["-m", API_SERVER]:
            form, start = f"python -m {API_SERVER}", i + 3
        elif base.startswith("python") and list(argv[i + 1 : i + 4]) == ["-m", CLI_MAIN, "serve"]:
            form, start = "vllm serve", i + 4  # speculators' launch_vllm.py execs this
        else:
            continue
        end = next((j for j in range(start, len(argv)) if argv[j] in _SHELL_OPS), len(argv))
        return form, i, start, end
    return None


def shell_words(text: str) -> list[str] | None:
    """A shell step's text as words (``;``, ``&&`` ... standing alone), None if unsplittable."""
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        return list(lexer)
    except ValueError:
        return None


def find_serve(argv: Sequence[str], locate: Locate) -> ServeCall | None:
    """Pure: the ``vllm serve`` call in ``argv`` (a shell step's words, or its argv), read."""
    span = _server_span(argv)
    if span is None:
        return None
    form, program, i, end = span
    flags: list[ServeFlag] = []
    configs: list[ConfigKeys] = []
    while i < end:
        tok = argv[i]
        i += 1
        if tok == "--":
            break
        if not tok.startswith("-") or tok == "-" or _number(tok) or "$" in tok:
            continue
        name = flag_name(tok)
        site = locate(i - 1, tok.split("=", 1)[0])
        flags.append(ServeFlag(tok.split("=", 1)[0], name, site))
        if name not in CONFIGS:
            continue
        head = tok.split("=", 1)[0]
        if "." in head:  # --speculative-config.method X: one key
            key = head.split(".", 2)[1].rstrip("+")
            configs.append(ConfigKeys(name, ((key, site),), site=site))
            i += 0 if "=" in tok else 1
            continue
        if "=" in tok:
            value = tok.split("=", 1)[1]
        elif i < end:
            value, i = argv[i], i + 1
        else:
            continue
        configs.append(_keys(name, value, site, _key_site(locate, i - 1)))
    return ServeCall(form, argv[program], tuple(flags), tuple(configs))


def _key_site(locate: Locate, index: int) -> Callable[[str], Site]:
    """Where a JSON key of the value at ``index`` is written (``"key"`` in the file)."""
    return lambda key: locate(index, f'"{key}"')


def _keys(flag: str, value: str, site: Site, where: Callable[[str], Site]) -> ConfigKeys:
    if "$" in value or value.startswith("@"):  # a shell variable, a file: not ours to read
        return ConfigKeys(flag, site=site)
    try:
        data = json.loads(value)
    except ValueError as exc:
        return ConfigKeys(flag, problem=f"its value is not JSON ({exc})", site=site)
    if not isinstance(data, dict):
        return ConfigKeys(flag, problem="its value is not a JSON object", site=site)
    strings = {str(k): v for k, v in data.items() if isinstance(v, str)}
    return ConfigKeys(
        flag, tuple((str(k), where(str(k))) for k in data), site=site, strings=strings
    )


@dataclass(frozen=True)
class ConfigFields:
    """A config dataclass as the target's vLLM defines it."""

    ref: str
    fields: frozenset[str] = frozenset()
    open: bool = False  # it also takes **kwargs
    file: str | None = None
    line: int | None = None


@dataclass(frozen=True)
class ServeVocab:
    """What the chosen vLLM's ``vllm serve`` accepts, read statically on the target."""

    dist: str | None
    version: str | None
    flags: frozenset[str] = frozenset()
    #: the flags a ``--no-`` form exists for: a config field's only when it is a bool (also
    #: when an ``add_argument`` spells it: vLLM passes the field's own kwargs); a literal flag
    #: no field makes, always (its action is not read)
    negatable: frozenset[str] = frozenset()
    flag_lines: Mapping[str, tuple[str, int]] = field(default_factory=dict)
    configs: Mapping[str, ConfigFields] = field(default_factory=dict)
    unread: tuple[str, ...] = ()  # classes/modules this vLLM does not have
    #: the connector names this vLLM registers -> the line (None: the factory was not read)
    connectors: Mapping[str, int] | None = None
    connectors_file: str | None = None
    #: the step's ``kv_connector_module_path`` as the server's environment has it
    connector_module: ConnectorModule | None = None

    @property
    def label(self) -> str:
        return f"{self.dist or 'vllm'} {self.version}" if self.version else "vllm"

    def accepts(self, name: str) -> bool:
        """Pure: does the parser take ``name`` as written (long, ``--no-``, ``-O3``)?"""
        if name in self.flags:
            return True
        if name.startswith("--no-") and "--" + name[5:] in self.negatable:
            return True  # BooleanOptionalAction
        if name.startswith("-O") and "--optimization-level" in self.flags:
            return True  # vLLM's parser rewrites -O3 / -O=3 / -O 3 into --optimization-level
        return not name.startswith("--") and len(name) > 2 and name[:2] in self.flags

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ServeVocab:
        flags: set[str] = set(ALWAYS)
        negatable: set[str] = set()
        literal: set[str] = set()
        fields: set[str] = set()
        lines: dict[str, tuple[str, int]] = {}
        unread: list[str] = []
        classes = d.get("classes") or {}  # a flag's line: its add_argument, else its class
        for module, got in (d.get("options") or {}).items():
            if not got.get("found"):
                unread.append(module)
                continue
            for flag, line in (got.get("flags") or {}).items():
                flags.add(flag)
                literal.add(flag)
                lines.setdefault(flag, (got.get("file") or "", int(line)))
        for ref in FLAG_CLASSES:
            got = classes.get(ref) or {}
            if not got.get("found"):
                unread.append(ref)
                continue
            booleans = got.get("booleans")
            for name in got.get("fields") or ():
                flag = "--" + name.replace("_", "-")
                flags.add(flag)
                fields.add(flag)
                if booleans is None or name in booleans:  # a result from before booleans
                    negatable.add(flag)
                lines.setdefault(flag, (got.get("file") or "", int(got.get("line") or 0)))
        configs = {}
        for flag, ref in CONFIGS.items():
            got = classes.get(ref) or {}
            if got.get("found"):
                configs[flag] = ConfigFields(
                    ref,
                    frozenset(got.get("fields") or ()),
                    bool(got.get("open")),
                    got.get("file"),
                    got.get("line"),
                )
        raw = d.get("connectors")
        conn: Mapping[str, Any] = raw if isinstance(raw, dict) else {}
        registered = conn.get("registered")
        module = conn.get("module")
        return cls(
            dist=d.get("dist"),
            version=d.get("version"),
            flags=frozenset(flags),
            negatable=frozenset(negatable | (literal - fields)),
            flag_lines=lines,
            configs=configs,
            unread=tuple(unread),
            connectors=(
                {str(k): int(v) for k, v in registered.items()}
                if isinstance(registered, dict)
                else None
            ),
            connectors_file=conn.get("file"),
            connector_module=ConnectorModule.from_dict(module)
            if isinstance(module, dict)
            else None,
        )


@dataclass(frozen=True)
class ConnectorModule:
    """A ``kv_connector_module_path`` as the server's environment has it (read, not imported)."""

    name: str
    found: bool
    file: str | None = None
    classes: Mapping[str, int] = field(default_factory=dict)  # top-level class -> line

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ConnectorModule:
        raw = d.get("classes")
        classes = {str(k): int(v) for k, v in raw.items()} if isinstance(raw, dict) else {}
        return cls(str(d.get("name") or ""), bool(d.get("found")), d.get("file"), classes)


def probe_args(call: ServeCall | None = None) -> dict[str, Any]:
    """What the ``serveargs`` probe reads for ``vllm serve``: its vocabulary, and the KV
    connectors the call's ``--kv-transfer-config`` can name."""
    connector = call.connector if call is not None else None
    return {
        "classes": [*FLAG_CLASSES, *CONFIGS.values()],
        "parsers": list(PARSER_MODULES),
        "connectors": {
            "factory": CONNECTOR_FACTORY,
            "module": connector.module if connector is not None else None,
        },
    }


@dataclass(frozen=True)
class ServeFacts:
    """The rule's input: the call as the step makes it, the vocabulary as vLLM defines it."""

    call: ServeCall
    vocab: ServeVocab
    #: the range the step declares its environment known to work in for the server's dist
    #: (``vllm>=0.22,<=0.26 (pipeline.toml:107)``; ``known_good``), "" when it declares none
    known_good: str = ""
