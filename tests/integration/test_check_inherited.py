"""Issue 43 item 2 (a) and (d): what changed where no signature did, on a handwritten pair.

``inheritapp`` 0.1.0 was written for inheritlib 1.0.0 (its ``Requires-Dist``: the baseline). Its
``FP8Connector`` subclasses ``inheritlib.Connector`` and overrides only a private staticmethod
and ``prefer_blocks`` -- the shape of hs-connectors 0.9.0's FP8 connector on vLLM's example
connector. inheritlib 2.0.0 (a) gained ``Base.finished_count`` (default ``return 1``) and
dropped ``prefer_blocks``; (d) raises when ``INHERITLIB_NEW_RUNNER`` != "1", which the caller
sets to "0" (vLLM 0.34's ``VLLM_USE_V2_MODEL_RUNNER``). Every signature the caller uses binds:
before this, check said nothing.
"""

from __future__ import annotations

import json

from tests.support.cli import run_cli

FILE = "inheritapp/__init__.py"


def check(env: dict[str, str], lib: str) -> dict:
    spec = f"pypi:inheritapp==0.1.0,inheritlib=={lib}"
    r = run_cli("check", "inheritapp", "-t", spec, "--json", env=env)
    assert r.code in (0, 1), r.err
    return json.loads(r.out)


def test_gained_method_orphaned_override_and_refused_variable(
    fixpairs_env: dict[str, str],
) -> None:
    data = check(fixpairs_env, "2.0.0")
    assert data["baseline"] == {"inheritlib": "1.0.0"}
    got = {(f["line"], f["severity"], f["category"], f["symbol"]) for f in data["findings"]}
    assert got == {
        (7, "error", "env-refused", "INHERITLIB_NEW_RUNNER"),
        (11, "warning", "base-method-added", "inheritlib:Connector.finished_count"),
        (16, "warning", "override-orphaned", "inheritlib:Connector.prefer_blocks"),
    }
    by = {f["category"]: f for f in data["findings"]}
    assert all(f["file"] == FILE for f in data["findings"])
    added = by["base-method-added"]["message"]
    assert "gained finished_count() since inheritlib 1.0.0" in added
    assert "(inheritlib/__init__.py:9)" in added and added.endswith("the default: return 1")
    assert "no longer has" in by["override-orphaned"]["message"]
    env = by["env-refused"]["message"]
    assert "INHERITLIB_NEW_RUNNER='0' is refused by inheritlib 2.0.0" in env
    assert "inheritlib/platforms/__init__.py:9 raises when INHERITLIB_NEW_RUNNER != '1'" in env
    # INHERITLIB_MODE is set to "fast": the callee refuses only "legacy" and "v0"
    assert not any(f["symbol"] == "INHERITLIB_MODE" for f in data["findings"])


def test_the_version_written_for_says_none_of_it(fixpairs_env: dict[str, str]) -> None:
    data = check(fixpairs_env, "1.0.0")
    assert data["findings"] == []
