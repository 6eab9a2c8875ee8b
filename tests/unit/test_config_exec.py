"""hosts.toml entries of ``kind = "exec"``: another host (or this machine) behind a command
prefix. Valid entries link to the host they wrap; every mistake names FILE:LINE and the key,
and suggests the keys or hosts meant, like the other hosts.toml errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.config import HostsConfig
from harness.errors import ConfigError
from harness.targets.registry import load_hosts, open_target
from harness.targets.wrapped import ExecEntry, ExecTarget

GPU = '[hosts.gpu]\naddress = "10.0.0.5"\npython = "/opt/py"\n'


def load(tmp_path: Path, text: str) -> tuple[Path, HostsConfig]:
    path = tmp_path / "hosts.toml"
    path.write_text(text, encoding="utf-8")
    return path, load_hosts(path)


def test_an_exec_entry_wraps_the_host_it_names(tmp_path: Path) -> None:
    text = (
        GPU + '\n[hosts.box]\nkind = "exec"\nvia = "gpu"\n'
        'exec = ["docker", "exec", "-i", "trainer"]\npython = "/opt/conda/bin/python"\n'
        'workdir = "/workspace"\nenv = { HF_HOME = "/data/hf" }\n'
    )
    path, config = load(tmp_path, text)
    box = config.hosts["box"]
    assert isinstance(box, ExecEntry)
    assert box.exec == ("docker", "exec", "-i", "trainer") and box.inner is not None
    assert box.inner.name == "gpu" and box.address == "10.0.0.5"  # its peers reach the host
    assert box.reach() == "docker exec -i trainer on gpu" and box.source == f"{path}:5"
    target = open_target("box", config)
    assert isinstance(target, ExecTarget) and target.inner.name == "gpu"  # nothing connects
    assert target.python_argv() == ["/opt/conda/bin/python"]
    assert target.default_workdir == "/workspace" and target.run_env == {"HF_HOME": "/data/hf"}
    assert target.setting_line("python") == f"{path}:9"
    assert target.wrap(["python3", "-V"]) == ["docker", "exec", "-i", "trainer", "python3", "-V"]
    assert target.wrap(["x"], {"A": "1 2"}, "/w")[4:] == [
        "/bin/sh",
        "-c",
        "cd /w && exec env A='1 2' x",
    ]


def test_via_local_and_chains(tmp_path: Path) -> None:
    text = (
        '[hosts.node]\nkind = "exec"\nvia = "local"\nexec = ["nsenter", "-t", "1", "-a"]\n'
        '[hosts.inner]\nkind = "exec"\nvia = "node"\nexec = ["env", "-i"]\naddress = "10.1.1.1"\n'
    )
    _, config = load(tmp_path, text)
    node, inner = config.hosts["node"], config.hosts["inner"]
    assert isinstance(node, ExecEntry) and isinstance(inner, ExecEntry)
    assert node.inner is None and node.address == "127.0.0.1"
    assert inner.inner == node and inner.address == "10.1.1.1"
    target = open_target("inner", config)
    assert target.identity()["via"]["via"]["kind"] == "local"  # env -i, in nsenter, here


BOX = '[hosts.box]\nkind = "exec"\n'
# (file text, expected line, message after "FILE:LINE: ", substrings the hint must contain)
ERRORS = [
    pytest.param(
        GPU + BOX + 'via = "gpu"\nexec = ["docker"]\nwrokdir = "/w"\n',
        8,
        "hosts.box.wrokdir: unknown key",
        ["did you mean 'workdir'?", "valid keys: via, exec, python, workdir"],
        id="unknown-key",
    ),
    pytest.param(
        GPU + BOX + 'via = "gpu"\naddress2 = "x"\n',
        7,
        "hosts.box.address2: unknown key",
        ["did you mean 'address'?"],
        id="ssh-key-in-exec",
    ),
    pytest.param(
        BOX + 'exec = ["docker", "exec", "-i", "c"]\n',
        1,
        "hosts.box.via: required key missing",
        ['via = "gpu"', '"local"'],
        id="no-via",
    ),
    pytest.param(
        GPU + BOX + 'via = "gpu"\n',
        4,
        "hosts.box.exec: required key missing",
        ['exec = ["docker", "exec", "-i", "NAME"]'],
        id="no-exec",
    ),
    pytest.param(
        GPU + BOX + 'via = "gpu"\nexec = "docker exec -i c"\n',
        7,
        "hosts.box.exec: expected array, got string 'docker exec -i c'",
        ['exec = ["docker", "exec", "-i", "NAME"]'],
        id="exec-as-text",
    ),
    pytest.param(
        GPU + BOX + 'via = "gpu"\nexec = []\n',
        7,
        "hosts.box.exec: expected a non-empty list of non-empty strings",
        ["kubectl exec -i POD -c C --"],
        id="exec-empty",
    ),
    pytest.param(
        GPU + BOX + 'via = "gpo"\nexec = ["docker"]\n',
        6,
        "hosts.box.via: no host named 'gpo'",
        ["did you mean 'gpu'?", "defined hosts: gpu, box"],
        id="via-typo",
    ),
    pytest.param(
        BOX + 'via = "box"\nexec = ["docker"]\n',
        3,
        "hosts.box.via: hosts name each other in a circle: box -> box",
        ["SSH host"],
        id="via-itself",
    ),
    pytest.param(
        BOX + 'via = "b2"\nexec = ["x"]\n[hosts.b2]\nkind = "exec"\nvia = "box"\nexec = ["y"]\n',
        7,
        "hosts.b2.via: hosts name each other in a circle: box -> b2 -> box",
        ["SSH host"],
        id="via-circle",
    ),
    pytest.param(
        GPU + BOX + 'via = "gpu"\nexec = ["docker"]\ntimeout = 0\n',
        8,
        "hosts.box.timeout: expected seconds > 0, got 0",
        ["timeout = 900"],
        id="timeout",
    ),
    pytest.param(
        GPU + '[hosts.box]\nkind = "exe"\n',
        5,
        "hosts.box.kind: unknown target kind 'exe'",
        ["ssh, exec"],
        id="kind-typo",
    ),
]


@pytest.mark.parametrize(("text", "line", "message", "hints"), ERRORS)
def test_errors_name_file_line_key_and_hint(
    tmp_path: Path, text: str, line: int, message: str, hints: list[str]
) -> None:
    path = tmp_path / "hosts.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_hosts(path)
    error = info.value
    assert error.message.startswith(f"{path}:{line}: {message}"), error.message
    assert error.hint is not None
    for part in hints:
        assert part in error.hint, error.hint
