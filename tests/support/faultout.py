"""One clean output of ``tests/support/faultdata.py`` per test session (a tiny Llama's 48
hs_{i}.safetensors, its model, the prepared dataset, a second model's copy, a tiny MoE's), for
the tests that plant faults in copies of it or judge it: built once, ~1-2 minutes on a CPU."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.pipvenvs import verify_cpu_venv

REPO = Path(__file__).resolve().parents[2]
#: the environment every check of these outputs runs with
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "0"}


@pytest.fixture(scope="session")
def faultdata_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder faultdata.py wrote (``clean/``, ``model/``, ``prepared/``, ``other/``,
    ``moe/``). Tests copy from it; they never change what is there."""
    python = verify_cpu_venv().python
    out = tmp_path_factory.mktemp("faultdata")
    r = subprocess.run([str(python), str(REPO / "tests" / "support" / "faultdata.py"), str(out)],
                       capture_output=True, text=True, timeout=1800, env=ENV)  # fmt: skip
    assert r.returncode == 0, r.stderr[-4000:]
    return out
