"""`harness diff vllm` between the real 0.11.0 and 0.16.0 wheels."""

from __future__ import annotations

import json

from tests.support.cli import run_cli

OLD = "pypi:vllm==0.11.0"
NEW = "pypi:vllm==0.16.0,speculators==0.3.0"
GEN = "speculators/data_generation/vllm_hidden_states_generator.py"


def test_used_by_lists_each_change_with_the_sites_it_hits(cli_env: dict[str, str]) -> None:
    r = run_cli(
        "diff",
        "vllm",
        "--from",
        OLD,
        "--to",
        NEW,
        "--used-by",
        "speculators",
        "--json",
        env=cli_env,
    )
    assert r.code == 1, r.err  # breaking changes found
    data = json.loads(r.out)
    assert (data["from_version"], data["to_version"]) == ("0.11.0", "0.16.0")
    by = {e["symbol"]: e for e in data["entries"]}
    kv = by["vllm.v1.core.kv_cache_utils:get_kv_cache_config_from_groups"]
    assert [(c["kind"], c["name"]) for c in kv["changes"]] == [
        ("parameter-removed", "kv_cache_specs")
    ]
    assert (GEN, 136) in {(s["file"], s["line"]) for s in kv["sites"]}
    sched = {(c["kind"], c["name"]) for c in by["vllm.config:SchedulerConfig"]["changes"]}
    assert ("parameter-added-required", "is_encoder_decoder") in sched
    ex = {
        (c["kind"], c["name"])
        for c in by["vllm.v1.executor.multiproc_executor:MultiprocExecutor"]["changes"]
    }
    assert ("method-added", "sample_tokens") in ex
    assert all(e["status"] != "added" for e in data["entries"])  # only what the caller uses


def test_whole_api_diff(cli_env: dict[str, str]) -> None:
    r = run_cli(
        "diff",
        "vllm",
        "--from",
        OLD,
        "--to",
        "pypi:vllm==0.16.0",
        "--json",
        env=cli_env,
        timeout=600,
    )
    assert r.code == 1, r.err  # breaking changes found
    data = json.loads(r.out)
    by = {e["symbol"]: e for e in data["entries"]}
    kinds = {
        (c["kind"], c["name"])
        for c in by["vllm.v1.core.kv_cache_utils:get_kv_cache_config_from_groups"]["changes"]
    }
    assert ("parameter-removed", "kv_cache_specs") in kinds
    assert data["counts"]["added"] > 100 and data["counts"]["removed"] > 100
    assert all(e["status"] in ("added", "removed", "moved", "changed") for e in data["entries"])


def test_caller_missing_on_both_sides_is_a_usage_error(cli_env: dict[str, str]) -> None:
    r = run_cli(
        "diff",
        "vllm",
        "--from",
        OLD,
        "--to",
        "pypi:vllm==0.16.0",
        "--used-by",
        "speculators",
        env=cli_env,
    )
    assert r.code == 2
    assert "installed on neither side" in r.err and "speculators==VER" in r.err
