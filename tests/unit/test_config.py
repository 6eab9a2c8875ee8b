"""hosts.toml loading: valid files, every error kind with its FILE:LINE, file discovery."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from harness.config import HostsConfig, find_hosts_file, locate_line
from harness.errors import ConfigError
from harness.targets.registry import load_hosts
from harness.targets.ssh.entry import HostConfig

REPO_HOSTS = Path(__file__).resolve().parents[2] / "hosts.toml"

FULL = """\
# a comment
default = "gpu"

[hosts.gpu]
address = "gpu-box"
user = "root"
port = 2222
identity = "~/.ssh/id_ed25519"
known_hosts = "/etc/ssh/known"
python = "/root/ml-env/bin/python"
workdir = "/root/eagle3"
env = { HF_HOME = "/data/hf", CUDA_VISIBLE_DEVICES = "0" }

[hosts."spare.box"]
address = "10.0.0.7"
"""


def write(tmp_path: Path, text: str | bytes, name: str = "hosts.toml") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def error_of(path: Path) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_hosts(path)
    return info.value


def test_full_file_loads_every_field(tmp_path: Path) -> None:
    path = write(tmp_path, FULL)
    config = load_hosts(path)
    assert config.path == path
    assert config.default == "gpu"
    assert list(config.hosts) == ["gpu", "spare.box"]
    assert config.hosts["gpu"] == HostConfig(
        name="gpu",
        address="gpu-box",
        user="root",
        port=2222,
        identity=os.path.expanduser("~/.ssh/id_ed25519"),
        known_hosts="/etc/ssh/known",
        python="/root/ml-env/bin/python",
        workdir="/root/eagle3",
        env={"HF_HOME": "/data/hf", "CUDA_VISIBLE_DEVICES": "0"},
        source=f"{path}:4",
    )
    assert not config.hosts["gpu"].identity.startswith("~")  # type: ignore[union-attr]
    assert config.hosts["spare.box"].source == f"{path}:14"


def test_minimal_file_uses_defaults(tmp_path: Path) -> None:
    path = write(tmp_path, '[hosts.box]\naddress = "box"\n')
    config = load_hosts(path)
    assert config.default is None
    assert config.hosts == {"box": HostConfig(name="box", address="box", source=f"{path}:1")}
    assert config.hosts["box"].python == "python3"


@pytest.mark.parametrize(
    "text",
    ["", "# nothing here\n", "[hosts]\n"],
    ids=["empty", "comment-only", "empty-hosts-table"],
)
def test_files_without_hosts_are_empty(tmp_path: Path, text: str) -> None:
    config = load_hosts(write(tmp_path, text))
    assert config.hosts == {} and config.default is None


def test_no_file_is_an_empty_config() -> None:
    assert load_hosts(None) == HostsConfig(path=None, default=None, hosts={})


def test_shipped_example_loads_empty() -> None:
    config = load_hosts(REPO_HOSTS)
    assert config.hosts == {} and config.default is None


def test_shipped_example_is_valid_once_uncommented(tmp_path: Path) -> None:
    """The commented example must itself be correct, or copying it would fail."""
    lines = REPO_HOSTS.read_text(encoding="utf-8").splitlines()
    active = [re.sub(r"^# (?=default|\[hosts|[a-z_]+ +=)", "", line) for line in lines]
    config = load_hosts(write(tmp_path, "\n".join(active) + "\n"))
    assert config.default == "gpu"
    host = config.hosts["gpu"]
    assert (host.address, host.user, host.port) == ("10.0.3.42", "root", 22)
    assert host.env["HF_HOME"] == "/data/hf"


# (file text, expected line, message after "FILE:LINE: ", substrings the hint must contain)
ERRORS = [
    pytest.param(
        '[hosts.gpu]\naddress = "a"\nprot = 22\n',
        3,
        "hosts.gpu.prot: unknown key",
        ["did you mean 'port'?", "valid keys: address, user, port"],
        id="unknown-host-key",
    ),
    pytest.param(
        'defualt = "gpu"\n[hosts.gpu]\naddress = "a"\n',
        1,
        "defualt: unknown key",
        ["did you mean 'default'?", "valid keys: default, hosts"],
        id="unknown-top-key",
    ),
    pytest.param(
        '[hosts.gpu]\naddress = "a"\n\n[servers.x]\naddress = "b"\n',
        4,
        "servers: unknown key",
        ["valid keys: default, hosts"],
        id="unknown-top-table",
    ),
    pytest.param(
        '[hosts.gpu]\naddress = "a"\nport = "22"\n',
        3,
        "hosts.gpu.port: expected integer, got string '22'",
        ["port = 22"],
        id="port-as-string",
    ),
    pytest.param(
        '[hosts.gpu]\naddress = "a"\nport = true\n',
        3,
        "hosts.gpu.port: expected integer, got boolean True",
        ["port = 22"],
        id="port-as-bool",
    ),
    pytest.param(
        '[hosts.gpu]\naddress = "a"\nport = 70000\n',
        3,
        "hosts.gpu.port: 70000 is out of range",
        ["1..65535"],
        id="port-range",
    ),
    pytest.param(
        '[hosts.gpu]\naddress = "a"\nenv = 3\n',
        3,
        "hosts.gpu.env: expected table, got integer 3",
        ["env = {"],
        id="env-not-table",
    ),
    pytest.param(
        '[hosts.gpu]\naddress = "a"\n\n[hosts.gpu.env]\nHF_HOME = "/x"\nDEBUG = 1\n',
        6,
        "hosts.gpu.env.DEBUG: expected string, got integer 1",
        ['DEBUG = "1"'],
        id="env-value-not-str",
    ),
    pytest.param(
        '[hosts.gpu]\nuser = "root"\n',
        1,
        "hosts.gpu.address: required key missing",
        ['address = "', "ssh/config alias"],
        id="missing-address",
    ),
    pytest.param(
        '[hosts.gpu]\naddress = "  "\n',
        2,
        "hosts.gpu.address: must not be empty",
        ["address ="],
        id="empty-address",
    ),
    pytest.param(
        'default = "gpu2"\n[hosts.gpu]\naddress = "a"\n[hosts.cpu]\naddress = "b"\n',
        1,
        "default: no host named 'gpu2'",
        ["defined hosts: gpu, cpu"],
        id="default-missing-host",
    ),
    pytest.param(
        'default = "gpu"\n',
        1,
        "default: no host named 'gpu'",
        ["defined hosts: none"],
        id="default-without-hosts",
    ),
    pytest.param(
        '[hosts]\ngpu = "gpu-box"\n',
        2,
        "hosts.gpu: expected table, got string",
        ['[hosts.gpu] then address = "gpu-box"'],
        id="host-not-table",
    ),
    pytest.param(
        'hosts = ["a"]\n',
        1,
        "hosts: expected table, got array ['a']",
        ["[hosts.gpu]"],
        id="hosts-not-table",
    ),
    pytest.param(
        '\n[hosts.local]\naddress = "a"\n',
        2,
        "hosts.local: host name 'local' is reserved (a target kind)",
        ["not local, venv or pypi"],
        id="reserved-name",
    ),
    pytest.param(
        '[hosts."gpu:1"]\naddress = "a"\n',
        1,
        "hosts.gpu:1: host name 'gpu:1' is not valid",
        ["no ':'"],
        id="colon-in-name",
    ),
    pytest.param(
        '[hosts.gpu]\naddress = "a"\n\n[hosts."b"]\naddress = "b"\nidentity = 5\n',
        6,
        "hosts.b.identity: expected string, got integer 5",
        ["identity ="],
        id="quoted-header",
    ),
    pytest.param(
        'hosts.gpu.address = "a"\nhosts.gpu.port = "x"\n',
        2,
        "hosts.gpu.port: expected integer, got string 'x'",
        ["port = 22"],
        id="dotted-keys",
    ),
    pytest.param(
        '[hosts]\ngpu = { address = "a", prot = 1 }\n',
        2,
        "hosts.gpu.prot: unknown key",
        ["did you mean 'port'?"],
        id="inline-table",
    ),
    pytest.param(
        "[hosts.gpu]\naddress = gpu-box\n",
        2,
        "invalid TOML: Invalid value (column 11)",
        ["double quotes"],
        id="toml-syntax",
    ),
    pytest.param(
        '[hosts.gpu]\naddress = "a"\n[hosts.gpu]\n',
        3,
        "invalid TOML: Cannot declare ('hosts', 'gpu') twice (column 11)",
        ["[hosts.NAME]"],
        id="toml-duplicate-table",
    ),
    pytest.param(
        '[hosts.gpu]\naddress = "a"\nport =',
        3,
        "invalid TOML: Invalid value",
        ["double quotes"],
        id="toml-end-of-document",
    ),
]


@pytest.mark.parametrize(("text", "line", "message", "hints"), ERRORS)
def test_errors_name_file_line_key_and_hint(
    tmp_path: Path, text: str, line: int, message: str, hints: list[str]
) -> None:
    path = write(tmp_path, text)
    error = error_of(path)
    assert error.message == f"{path}:{line}: {message}"
    assert error.hint is not None
    for part in hints:
        assert part in error.hint
    assert "Traceback" not in str(error)


def test_invalid_utf8_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, b'[hosts.gpu]\naddress = "\xff"\n')
    error = error_of(path)
    assert error.message.startswith(f"{path}:2: not valid UTF-8")
    assert error.__cause__ is None and error.__suppress_context__


@pytest.mark.parametrize("kind", ["directory", "missing", "unreadable"])
def test_unreadable_file_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    path = tmp_path / "hosts.toml"
    if kind == "directory":
        path.mkdir()
    elif kind == "unreadable":  # chmod 0 does not stop root, so fail the read itself
        write(tmp_path, '[hosts.gpu]\naddress = "a"\n')

        def denied(self: Path) -> bytes:
            raise PermissionError(13, "Permission denied", str(self))

        monkeypatch.setattr(Path, "read_bytes", denied)
    error = error_of(path)
    assert error.message.startswith(f"{path}: cannot read hosts file: ")
    if kind == "unreadable":
        assert error.message.endswith("Permission denied")
    assert error.hint and error.__suppress_context__


@pytest.mark.parametrize(
    ("text", "key_path", "line"),
    [
        ("[a]\nx = 1\n[b]\nx = 2\n", ("b", "x"), 4),
        ("[a]\nx = 1\n", ("a", "y"), 1),
        ("top = 1\n[a]\n", ("zzz",), 1),
        ('[ hosts . "gpu" ]  # c\nport = 1\n', ("hosts", "gpu", "port"), 2),
        ("[hosts.'gpu']\n", ("hosts", "gpu"), 1),
        ('s = """\n[hosts.gpu]\n"""\n[hosts.gpu]\n', ("hosts", "gpu"), 4),
        ("# [hosts.gpu]\n[hosts.gpu.env]\n", ("hosts", "gpu"), 2),
        ("[hosts]\n[hosts.gpu]\n", ("hosts", "gpu", "nope"), 2),
        ("", ("x",), 1),
    ],
    ids=[
        "key-in-second-table",
        "missing-key-falls-back-to-table",
        "nothing-falls-back-to-1",
        "spaced-quoted-header",
        "single-quoted",
        "skips-multiline-string",
        "implicit-table-first-child",
        "deepest-enclosing",
        "empty-text",
    ],
)
def test_locate_line(text: str, key_path: tuple[str, ...], line: int) -> None:
    assert locate_line(text, key_path) == line


def test_find_prefers_explicit_over_env_and_cwd(tmp_path: Path) -> None:
    explicit = write(tmp_path, "", "mine.toml")
    from_env = write(tmp_path, "", "env.toml")
    write(tmp_path, "")
    env = {"HARNESS_HOSTS": str(from_env)}
    assert find_hosts_file(explicit, env, cwd=tmp_path) == explicit
    assert find_hosts_file(None, env, cwd=tmp_path) == from_env
    assert find_hosts_file(None, {}, cwd=tmp_path) == tmp_path / "hosts.toml"
    assert find_hosts_file(None, {"HARNESS_HOSTS": ""}, cwd=tmp_path) == tmp_path / "hosts.toml"


def test_find_relative_paths_resolve_against_cwd(tmp_path: Path) -> None:
    write(tmp_path, "", "mine.toml")
    assert find_hosts_file(Path("mine.toml"), {}, cwd=tmp_path) == tmp_path / "mine.toml"
    env = {"HARNESS_HOSTS": "mine.toml"}
    assert find_hosts_file(None, env, cwd=tmp_path) == tmp_path / "mine.toml"


def test_find_walks_up_parents(tmp_path: Path) -> None:
    found = write(tmp_path, "")
    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    assert find_hosts_file(None, {}, cwd=deep) == found
    write(tmp_path / "a", "")
    assert find_hosts_file(None, {}, cwd=deep) == tmp_path / "a" / "hosts.toml"


def test_find_nothing_is_none(tmp_path: Path) -> None:
    if any((p / "hosts.toml").exists() for p in (tmp_path, *tmp_path.parents)):
        pytest.skip("a hosts.toml exists above the temporary folder")
    assert find_hosts_file(None, {}, cwd=tmp_path) is None


@pytest.mark.parametrize(
    ("explicit", "env", "origin"),
    [
        (Path("nope.toml"), {"HARNESS_HOSTS": "other.toml"}, "--hosts"),
        (None, {"HARNESS_HOSTS": "nope.toml"}, "$HARNESS_HOSTS"),
    ],
    ids=["explicit", "env"],
)
def test_find_named_file_must_exist(
    tmp_path: Path, explicit: Path | None, env: dict[str, str], origin: str
) -> None:
    write(tmp_path, "")  # a cwd file must NOT be used as a silent fallback
    write(tmp_path, "", "other.toml")
    with pytest.raises(ConfigError) as info:
        find_hosts_file(explicit, env, cwd=tmp_path)
    assert (
        info.value.message == f"{tmp_path / 'nope.toml'}: hosts file not found (given by {origin})"
    )
