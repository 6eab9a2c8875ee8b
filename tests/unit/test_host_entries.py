"""Issue 45 item 5: hosts.toml-backed kinds (``ssh``, ``exec``) share one entry schema and one
place for what their targets mirror of the entry (``harness/targets/entries.py``): the keys
every entry has are checked alike -- the same error, the same line -- whatever the kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import ConfigError
from harness.targets.entries import Entry, EntryTarget
from harness.targets.registry import load_hosts, open_target

#: each kind's smallest valid table (its own required keys)
KINDS = {
    "ssh": 'address = "10.0.0.5"\n',
    "exec": 'kind = "exec"\nvia = "local"\nexec = ["docker", "exec", "-i", "c"]\n',
}


def load(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "hosts.toml"
    path.write_text(text, encoding="utf-8")
    return path, load_hosts(path)


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("timeout = 0", "hosts.box.timeout: expected seconds > 0, got 0"),
        ("timeout = inf", "hosts.box.timeout: expected seconds > 0, got inf"),
        ("timeout = nan", "hosts.box.timeout: expected seconds > 0, got nan"),
        ('timeout = "9"', "hosts.box.timeout: expected seconds > 0, got '9'"),
        ('python = "  "', "hosts.box.python: must not be empty"),
        ("workdir = 3", "hosts.box.workdir: expected string, got integer 3"),
        ("env = { A = 1 }", "hosts.box.env.A: expected string, got integer 1"),
        ('pyhton = "x"', "hosts.box.pyhton: unknown key"),
    ],
)  # fmt: skip
def test_the_keys_every_entry_has_are_checked_alike(
    tmp_path: Path, kind: str, line: str, said: str
) -> None:
    path = tmp_path / "hosts.toml"
    with pytest.raises(ConfigError) as err:
        load(tmp_path, f"[hosts.box]\n{KINDS[kind]}{line}\n")
    lines = KINDS[kind].count("\n") + 2
    assert err.value.message == f"{path}:{lines}: {said}", err.value.message


@pytest.mark.parametrize("kind", list(KINDS))
def test_what_a_target_reads_of_its_entry_is_read_in_one_place(tmp_path: Path, kind: str) -> None:
    text = (f'[hosts.box]\n{KINDS[kind]}python = "/opt/py"\nworkdir = "/w"\n'
            'env = { HF_HOME = "/hf" }\ntimeout = 90\n')  # fmt: skip
    path, config = load(tmp_path, text)
    entry = config.hosts["box"]
    assert isinstance(entry, Entry) and entry.kind == kind
    lines = KINDS[kind].count("\n") + 1
    with open_target("box", config) as target:  # nothing connects
        assert isinstance(target, EntryTarget) and target.entry == entry
        assert (target.name, target.python_argv(), target.default_workdir) == (
            "box",
            ["/opt/py"],
            "/w",
        )
        assert target.run_env == {"HF_HOME": "/hf"} and target.command_timeout == 90
        assert target.setting_line("workdir") == f"{path}:{lines + 2}"
        assert target.setting_line("nope") == f"{path}:1"
    listing = entry.listing()
    assert list(listing)[-3:] == ["python", "workdir", "source"]
    assert listing["python"] == "/opt/py" and listing["source"] == f"{path}:1"
