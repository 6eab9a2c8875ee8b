"""Issue 43 item 2 (a), (b) and (d): what changed where no signature did, on a handwritten pair.

``inheritapp`` 0.1.0 was written for inheritlib 1.0.0 (its ``Requires-Dist``: the baseline). Its
``FP8Connector`` subclasses ``inheritlib.Connector`` and overrides only a private staticmethod
and ``prefer_blocks`` -- the shape of hs-connectors 0.9.0's FP8 connector on vLLM's example
connector. inheritlib 2.0.0 (a) gained ``Base.finished_count`` (default ``return 1``) and
dropped ``prefer_blocks``; (b) changed its ``LAYOUT`` constant "NHD" -> "LBNHC" and the
index its ``block_size`` (called by ``Connector.load``) reads, ``shape[1]`` -> ``shape[2]``;
(d) raises when ``INHERITLIB_NEW_RUNNER`` != "1", which the caller sets to "0" (vLLM 0.34's
``VLLM_USE_V2_MODEL_RUNNER``). Every signature the caller uses binds:
before this, check said nothing.
"""

from __future__ import annotations

import json

from tests.support.cli import run_cli
from tests.support.fixcheck import check_fixpair

FILE = "inheritapp/__init__.py"


def check(env: dict[str, str], lib: str) -> dict:
    data = check_fixpair(env, "inheritapp", "inheritlib", lib)
    # the pair also holds test_check_receivers' Trainer subclasses (inheritapp/train.py, base.py)
    data["findings"] = [f for f in data["findings"] if f["file"] == FILE]
    return data


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
        (11, "warning", "literal-changed", "inheritlib:LAYOUT"),
        (11, "warning", "literal-changed", "inheritlib:block_size"),
    }
    by = {f["category"]: f for f in data["findings"]}
    lit = {
        f["symbol"]: f["message"] for f in data["findings"] if f["category"] == "literal-changed"
    }
    assert lit["inheritlib:LAYOUT"].endswith("since inheritlib 1.0.0: 'NHD' -> 'LBNHC'")
    assert "block_size (inheritlib/__init__.py:" in lit["inheritlib:block_size"]
    assert lit["inheritlib:block_size"].endswith("cache.shape[1] -> cache.shape[2]")
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


SERIES = "tests/fixtures/inheritseries/patches"


def test_with_the_series_the_ceiling_is_said_before_a_launch(
    fixpairs_env: dict[str, str],
) -> None:
    """(c) and (d) through a series (tests/fixtures/inheritseries): inheritlib's 1.0.0 series
    patches legacy_runner.py, which 2.0.0 deleted; inheritapp's series sets INHERITLIB_MODE to
    "legacy" in a patch gated to inheritlib <2, a value 2.0.0 refuses -- the series cannot be
    carried there, and the project's 0.2.0 series (named by its pipeline) is where to go."""
    r = run_cli("check", "inheritapp", "-t", "pypi:inheritapp==0.1.0,inheritlib==2.0.0",
                "--with-patches", "--patches", SERIES, "--json", env=fixpairs_env)  # fmt: skip
    assert r.code == 1, r.err
    found = json.loads(r.out)["findings"]
    got = {(f["file"], f["line"], f["severity"], f["category"]) for f in found}
    assert ("patches/inheritlib/1.0.0/0001-runner-keeps-order.patch", 3, "error",
            "patched-file-deleted") in got  # fmt: skip
    assert ("patches/inheritapp/0.1.0/0001-legacy-mode.patch", 9, "error", "env-refused") in got
    (mode,) = [f for f in found if f["symbol"] == "INHERITLIB_MODE"]
    assert "0001-legacy-mode (gated off here: inheritlib >=1,<2) sets" in mode["message"]
    assert "INHERITLIB_MODE in 'legacy', 'v0'" in mode["message"]
    assert "inheritapp 0.2.0's series" in mode["fix"]
    assert "run by pipelines/inheritapp-0.2.toml" in mode["fix"]
    (gone,) = [f for f in found if f["category"] == "patched-file-deleted"]
    assert "patches inheritlib/legacy_runner.py, which inheritlib 2.0.0 deleted" in gone["message"]


def test_with_the_series_on_its_own_release_nothing_is_said(
    fixpairs_env: dict[str, str],
) -> None:
    r = run_cli("check", "inheritapp", "-t", "pypi:inheritapp==0.1.0,inheritlib==1.0.0",
                "--with-patches", "--patches", SERIES, "--json", env=fixpairs_env)  # fmt: skip
    assert r.code == 0, r.err
    assert json.loads(r.out)["findings"] == []
