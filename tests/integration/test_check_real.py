"""`harness check speculators` on the real seed pair: every break, in one pass.

Each pinned error was verified by reading the vLLM 0.16.0 source:
* ``get_kv_cache_config_from_groups(vllm_config, kv_cache_groups, available_memory)`` --
  ``kv_cache_specs`` was dropped (vllm/v1/core/kv_cache_utils.py:1069);
* ``Scheduler.__init__`` gained a required ``block_size: int`` after
  ``structured_output_manager`` (vllm/v1/core/sched/scheduler.py:64);
* ``SchedulerConfig`` declares ``max_model_len: InitVar[int]`` and
  ``is_encoder_decoder: InitVar[bool]`` without defaults under ``@config``
  (a ``dataclass_transform`` over pydantic dataclasses; vllm/config/scheduler.py:26-35).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import CliResult, run_cli
from tests.support.sshd import SshServer
from tests.support.wheels import SeedVenv

GEN = "speculators/data_generation/vllm_hidden_states_generator.py"
ERRORS_ON_016 = {
    (GEN, 136, "unexpected-kwarg", "vllm.v1.core.kv_cache_utils:get_kv_cache_config_from_groups"),
    (GEN, 148, "missing-required-arg", "vllm.v1.core.sched.scheduler:Scheduler"),
    (GEN, 194, "missing-required-arg", "vllm.config:SchedulerConfig"),
}


def errors(data: dict) -> set[tuple[str, int, str, str]]:
    return {
        (f["file"], f["line"], f["category"], f["symbol"])
        for f in data["findings"]
        if f["severity"] == "error"
    }


def drift(data: dict) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for f in data["findings"]:
        if f["category"] == "drift":
            out.setdefault(f["symbol"], set()).update(
                f"{c['kind']}:{c['name']}" for c in f["changes"]
            )
    return out


def check_json(env: dict[str, str], *args: str) -> tuple[CliResult, dict]:
    r = run_cli("check", "speculators", "--json", *args, env=env)
    assert r.code in (0, 1), r.err
    return r, json.loads(r.out)


def test_seed_pair_on_016_finds_every_break(cli_env: dict[str, str]) -> None:
    r, data = check_json(cli_env, "-t", "pypi:speculators==0.3.0,vllm==0.16.0")
    assert r.code == 1
    assert errors(data) == ERRORS_ON_016
    assert data["baseline"] == {"vllm": "0.11.0"}  # from Requires-Dist: vllm==0.11.0
    d = drift(data)
    ex = "vllm.v1.executor.multiproc_executor:MultiprocExecutor"
    assert "method-added:sample_tokens" in d[ex]  # the two-phase protocol
    assert "returns-changed:" in d[f"{ex}.execute_model"]
    by_line = {f["line"]: f for f in data["findings"] if f["severity"] == "error"}
    kv = by_line[136]
    assert kv["signature"] == (
        "get_kv_cache_config_from_groups(vllm_config: VllmConfig, "
        "kv_cache_groups: list[KVCacheGroupSpec], available_memory: int)"
        " -> KVCacheConfig"
    )
    assert (kv["callee_file"], kv["callee_line"]) == ("vllm/v1/core/kv_cache_utils.py", 1069)
    assert "is_encoder_decoder" in by_line[194]["message"]
    assert "block_size" in by_line[148]["message"]


def test_seed_pair_on_011_is_clean(cli_env: dict[str, str]) -> None:
    r, data = check_json(cli_env, "-t", "pypi:speculators==0.3.0,vllm==0.11.0")
    assert r.code == 0
    assert errors(data) == set()
    assert data["stats"]["calls"] >= 30  # it did look at every call


def test_terminal_view_groups_by_file_and_exits_1(cli_env: dict[str, str]) -> None:
    r = run_cli(
        "check",
        "speculators",
        "--against",
        "vllm",
        "-t",
        "pypi:speculators==0.3.0,vllm==0.16.0",
        env=cli_env,
    )
    assert r.code == 1
    assert GEN in r.out
    assert "got an unexpected keyword argument 'kv_cache_specs'" in r.out
    assert "3 error(s)" in r.out


def test_second_run_is_served_from_the_cache(cli_env: dict[str, str]) -> None:
    spec = "pypi:speculators==0.3.0,vllm==0.16.0"
    _, first = check_json(cli_env, "-t", spec)
    _, second = check_json(cli_env, "-t", spec)
    assert second["stats"]["cached"] is True
    assert second["findings"] == first["findings"]


def test_unknown_caller_is_a_clear_error(cli_env: dict[str, str]) -> None:
    r = run_cli("check", "nosuchdist", "-t", "pypi:vllm==0.16.0", env=cli_env)
    assert r.code == 2
    assert "nosuchdist is not installed" in r.err and "Traceback" not in r.err


@pytest.mark.parametrize("extra", [(), ("--no-baseline",)])
def test_same_errors_over_ssh(
    sshd: SshServer,
    seed_venv: SeedVenv,
    tmp_path: Path,
    cli_env: dict[str, str],
    extra: tuple[str, ...],
) -> None:
    hosts = tmp_path / "hosts.toml"
    hosts.write_text('default = "box"\n' + sshd.host_entry("box", python=str(seed_venv.python)))
    r, data = check_json({**cli_env, "HARNESS_HOSTS": str(hosts)}, *extra)
    assert r.code == 1
    assert errors(data) == ERRORS_ON_016
    assert data["target"].startswith("box (")


def test_nothing_installed_to_check_against_is_an_error_not_a_pass(
    cli_env: dict[str, str],
) -> None:
    r = run_cli("check", "speculators", "-t", "pypi:speculators==0.3.0", env=cli_env)
    assert r.code == 2
    assert "nothing to check" in r.err and "vllm" in r.err
    assert "pypi:speculators==VER,vllm==VER" in r.err


def test_named_callee_missing_is_an_error_not_22_findings(cli_env: dict[str, str]) -> None:
    r = run_cli(
        "check", "speculators", "--against", "vllm", "-t", "pypi:speculators==0.3.0", env=cli_env
    )
    assert r.code == 2
    assert "vllm (the callee to check against) is not installed" in r.err
    assert "speculators-0.3.0" in r.err  # where it looked


def test_unchecked_imports_are_named(cli_env: dict[str, str]) -> None:
    _, data = check_json(cli_env, "-t", "pypi:speculators==0.3.0,vllm==0.16.0")
    (note,) = [n for n in data["notes"] if "not installed on" in n]
    assert "torch" in note and "transformers" in note and "vllm" not in note.split(":")[0]
