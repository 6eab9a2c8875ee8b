"""Issue 21 item 3: both timeouts are settable, per host in hosts.toml and per command."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import ConfigError, UsageError
from harness.targets.registry import load_hosts, open_target
from harness.targets.timeouts import command_timeout, connect_timeout


def _load(tmp_path: Path, extra: str) -> tuple[Path, object]:
    path = tmp_path / "hosts.toml"
    path.write_text(f'[hosts.gpu]\naddress = "gpu-box"\n{extra}')
    return path, load_hosts(path)


def test_hosts_toml_sets_both_timeouts_per_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HARNESS_TIMEOUT", raising=False)
    monkeypatch.delenv("HARNESS_CONNECT_TIMEOUT", raising=False)
    _, cfg = _load(tmp_path, "timeout = 900\nconnect_timeout = 2.5\n")
    target = open_target("gpu", cfg)  # type: ignore[arg-type]
    assert target.command_timeout == 900
    assert target.connect_timeout == 2.5  # type: ignore[attr-defined]
    # the environment wins, for one command
    monkeypatch.setenv("HARNESS_TIMEOUT", "30")
    monkeypatch.setenv("HARNESS_CONNECT_TIMEOUT", "60")
    target = open_target("gpu", cfg)  # type: ignore[arg-type]
    assert target.command_timeout == 30
    assert target.connect_timeout == 60  # type: ignore[attr-defined]


def test_defaults_are_300_and_10(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HARNESS_TIMEOUT", raising=False)
    monkeypatch.delenv("HARNESS_CONNECT_TIMEOUT", raising=False)
    assert command_timeout() == 300 and connect_timeout() == 10


@pytest.mark.parametrize("value", ["0", '"ten"', "-5", "true"])
def test_a_bad_timeout_names_its_line(tmp_path: Path, value: str) -> None:
    path = tmp_path / "hosts.toml"
    path.write_text(f'[hosts.gpu]\naddress = "gpu-box"\n\ntimeout = {value}\n')
    with pytest.raises(ConfigError) as e:
        load_hosts(path)
    assert e.value.message.startswith(f"{path}:4: hosts.gpu.timeout: expected seconds > 0")
    assert e.value.hint == "e.g. timeout = 900"


def test_a_bad_harness_timeout_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_TIMEOUT", "soon")
    with pytest.raises(UsageError, match=r"\$HARNESS_TIMEOUT='soon': expected a number"):
        command_timeout()
