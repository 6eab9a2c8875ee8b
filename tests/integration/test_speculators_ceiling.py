"""Issue 43 items 2 (c), (d) and 3 on the real wheels: speculators 0.3.0's series on vLLM 0.34.

The shipped series (patches/speculators/0.3.0) forces Model Runner V1 in patch 0014
(``os.environ["VLLM_USE_V2_MODEL_RUNNER"] = "0"``, gated to vLLM >=0.21,<0.27); vLLM 0.34.0's
``Platform.validate_environ`` raises for any value but "1" (V1 removed). ``matrix`` and
``check --with-patches`` say so before any launch, and point at the 0.9 pipeline -- read from
the source, not keyed to a version. (c): a vLLM series made for 0.26.0 that patches
``vllm/v1/worker/gpu_input_batch.py`` (here a one-line stand-in, written by the test), carried
to 0.34.0, which deleted that file.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.support.cli import run_cli

REPO = Path(__file__).resolve().parents[2]

_PATCH = """The V1 input batch: a stand-in patch (the test's own).

--- a/vllm/v1/worker/gpu_input_batch.py
+++ b/vllm/v1/worker/gpu_input_batch.py
@@ -1,3 +1,3 @@
 # SPDX-License-Identifier: Apache-2.0
 # SPDX-FileCopyrightText: Copyright contributors to the vLLM project
-# Datastructures defining a GPU input batch
+# Datastructures defining a GPU input batch (patched)
"""


def _project(tmp: Path) -> Path:
    """A project folder: the shipped speculators series and pipelines, and a vLLM 0.26.0
    series patching a module vLLM 0.34 deleted."""
    shutil.copytree(REPO / "patches" / "speculators", tmp / "patches" / "speculators")
    shutil.copytree(REPO / "pipelines", tmp / "pipelines")
    series = tmp / "patches" / "vllm" / "0.26.0"
    series.mkdir(parents=True)
    (series / "0001-input-batch.patch").write_text(_PATCH)
    (series / "series.toml").write_text(
        '[[patch]]\nfile = "0001-input-batch.patch"\nwhy = "a stand-in"\n'
    )
    return tmp / "patches"


def test_the_series_ceiling_on_vllm_034_is_said_before_a_launch(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    patches = _project(tmp_path)
    r = run_cli("check", "speculators", "--against", "vllm", "-t",
                "pypi:speculators==0.3.0,vllm==0.34.0", "--with-patches", "--patches",
                str(patches), "--json", env=cli_env, timeout=600)  # fmt: skip
    assert r.code == 1, r.err
    found = json.loads(r.out)["findings"]
    (env,) = [f for f in found if f["category"] == "env-refused"]
    assert env["file"] == "patches/speculators/0.3.0/0014-v1-model-runner.patch"
    assert env["symbol"] == "VLLM_USE_V2_MODEL_RUNNER"
    assert "(gated off here: vllm >=0.21,<0.27) sets VLLM_USE_V2_MODEL_RUNNER='0'" in env["message"]
    assert "vllm/platforms/interface.py:1483 raises" in env["message"]
    assert "Model Runner V1 has been removed" in env["message"]
    assert "pipelines/speculators-0.9.toml" in env["fix"]
    (gone,) = [f for f in found if f["category"] == "patched-file-deleted"]
    assert gone["file"] == "patches/vllm/0.26.0/0001-input-batch.patch"
    assert "vllm/v1/worker/gpu_input_batch.py, which vllm 0.34.0 deleted" in gone["message"]
    assert gone["severity"] == "error"


def test_the_matrix_row_of_034_says_the_refusal(cli_env: dict[str, str], tmp_path: Path) -> None:
    patches = _project(tmp_path)
    r = run_cli("matrix", "speculators==0.3.0", "--against", "vllm", "--versions",
                "0.26.0,0.34.0", "--with-patches", "--patches", str(patches), "--json",
                env=cli_env, timeout=600)  # fmt: skip
    rows = {v["version"]: v for v in json.loads(r.out)["versions"]}
    assert rows["0.26.0"]["kinds"] == []
    assert 'refuses: os.environ["VLLM_USE_V2_MODEL_RUNNER"] = "0"' in rows["0.34.0"]["kinds"]
    assert any(k.startswith("patches a file the release deleted") for k in rows["0.34.0"]["kinds"])
