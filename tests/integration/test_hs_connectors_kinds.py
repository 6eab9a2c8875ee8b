"""Issue 43 item 2 on the real wheels: what changed where no signature did, hs-connectors 0.9.0
against vLLM 0.26 -> 0.29 -> 0.31 -> 0.34 (``pypi:`` wheels, read lazily).

hs-connectors pins no vLLM, so ``matrix`` checks each version against the one listed before
it. Every vLLM name it imports binds on all four (0 errors, 0 drift); what the rows say now:
0.29 dropped ``prefer_cross_layer_blocks`` from the connector base (the Mooncake connector's
override is never called) and added methods both connectors inherit; 0.31's
``ExampleHiddenStatesConnector.get_finished_count`` (``return 1``) is the default the FP8
connector now runs; and 0.29 changed the literals the FP8 connector's inherited code depends
on (the layout "NHD" -> "LBNHC", ``kv_cache.shape[1]`` -> ``shape[2]``).
"""

from __future__ import annotations

import json

from tests.support.cli import run_cli


def test_the_rows_say_what_each_release_changed_under_the_subclasses(
    cli_env: dict[str, str],
) -> None:
    r = run_cli("matrix", "hs-connectors==0.9.0", "--against", "vllm", "--versions",
                "0.26.0,0.29.0,0.31.0,0.34.0", "--json", env=cli_env, timeout=600)  # fmt: skip
    assert r.code == 0, r.err
    rows = {v["version"]: v for v in json.loads(r.out)["versions"]}
    assert {v: (row["errors"], row["drift"]) for v, row in rows.items()} == {
        v: (0, 0) for v in ("0.26.0", "0.29.0", "0.31.0", "0.34.0")
    }
    assert rows["0.26.0"]["kinds"] == []  # the first row has nothing before it
    k29, k31 = rows["0.29.0"]["kinds"], rows["0.31.0"]["kinds"]
    assert "overrides the base no longer has: KVConnectorBase_V1.prefer_cross_layer_blocks" in k29
    assert any(
        k.startswith("base gained") and "ExampleHiddenStatesConnector.get_finished_count" in k
        for k in k31
    )
    assert not any("prefer_cross_layer_blocks" in k for k in k31)  # said once, where it went
    (lit,) = [k for k in k29 if k.startswith("literals changed in")]
    assert "ExampleHiddenStatesConnector.get_required_kvcache_layout" in lit
    assert "extract_from_kv_cache" in lit


def test_check_shows_the_layout_that_changed_under_the_fp8_connector(
    cli_env: dict[str, str],
) -> None:
    r = run_cli("check", "hs-connectors", "--against", "vllm", "-t",
                "pypi:hs-connectors==0.9.0,vllm==0.29.0", "--baseline", "vllm==0.26.0",
                "--json", env=cli_env, timeout=300)  # fmt: skip
    assert r.code == 0, r.err
    said = {
        f["symbol"].rpartition(":")[2].rpartition(".")[2]: f["message"]
        for f in json.loads(r.out)["findings"]
        if f["category"] == "literal-changed"
        and f["file"] == "hs_connectors/fp8_hidden_states_connector.py"
    }
    assert said["get_required_kvcache_layout"].endswith("since vllm 0.26.0: 'NHD' -> 'LBNHC'")
    assert said["extract_from_kv_cache"].endswith("kv_cache.shape[1] -> kv_cache.shape[2]")


def test_check_shows_the_default_the_fp8_connector_now_runs(cli_env: dict[str, str]) -> None:
    r = run_cli("check", "hs-connectors", "--against", "vllm", "-t",
                "pypi:hs-connectors==0.9.0,vllm==0.31.0", "--baseline", "vllm==0.29.0",
                "--json", env=cli_env, timeout=300)  # fmt: skip
    assert r.code == 0, r.err
    got = [
        f
        for f in json.loads(r.out)["findings"]
        if f["file"] == "hs_connectors/fp8_hidden_states_connector.py"
        and f["symbol"].endswith(".get_finished_count")
    ]
    assert len(got) == 1 and got[0]["category"] == "base-method-added"
    assert "so it runs 'return 1'" in got[0]["message"]
    assert "example_hidden_states_connector.py:106" in got[0]["message"]
