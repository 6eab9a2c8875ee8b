"""Issue 32 part 3: the undeclared coupling of hs-connectors 0.9.0 to vLLM, pinned on real wheels.

hs-connectors declares only torch and safetensors, yet its connectors import vLLM internals:
``pip check`` passes on any vLLM. ``harness matrix`` answers the import side from ``pypi:``
wheels (the lazy target fetches only the ``.py`` members): vLLM 0.21.x lacks
``vllm.v1.kv_cache_interface.HiddenStateCacheSpec``; 0.22.0 and 0.26.0 are clean -- the range
speculators' docs give (``vllm>=0.22``) and a pipeline's ``known_good`` declares.
"""

from __future__ import annotations

import json

from tests.support.cli import run_cli

CALLER = "hs-connectors==0.9.0"


def test_the_matrix_says_which_vllm_hs_connectors_imports_resolve_on(
    cli_env: dict[str, str],
) -> None:
    r = run_cli("matrix", CALLER, "--against", "vllm", "--versions", "0.21.0,0.22.0,0.26.0",
                "--json", env=cli_env, timeout=600)  # fmt: skip
    assert r.code == 1, r.err  # errors in some version
    rows = {v["version"]: v for v in json.loads(r.out)["versions"]}
    assert {v: (row["errors"], row["failed"]) for v, row in rows.items()} == {
        "0.21.0": (1, None),
        "0.22.0": (0, None),
        "0.26.0": (0, None),
    }


def test_the_failing_release_names_the_missing_class(cli_env: dict[str, str]) -> None:
    r = run_cli("check", "hs-connectors", "--against", "vllm", "-t",
                f"pypi:{CALLER},vllm==0.21.0", "--json", env=cli_env, timeout=300)  # fmt: skip
    assert r.code == 1, r.err
    (f,) = json.loads(r.out)["findings"]
    assert (f["category"], f["imported"], f["file"]) == (
        "import-missing",
        "HiddenStateCacheSpec",
        "hs_connectors/mooncake_hidden_states_connector.py",
    )
    assert "from 'vllm.v1.kv_cache_interface' (vllm 0.21.0)" in f["message"]
