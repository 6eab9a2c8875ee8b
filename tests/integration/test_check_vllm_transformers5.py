"""`harness check vllm` on vLLM 0.26.0 (``transformers >= 5.5.3``) with transformers 5.17.0.

What transformers 5 keeps importable at run time, check must not call missing (each was a false
``import-missing`` before, checked at run time with transformers 5.17.0):

- ``models.X.image_processing_Y_fast``: aliases its ``__init__`` makes in a loop over the model
  files (``__init__.py:847-851``); helpers bind through them (``lfm2_vl.py:15``,
  ``mllama4.py:29``), and ``XImageProcessorFast`` is served as ``XImageProcessor`` with a
  warning (``__init__.py:853-871``: ``cohere2_vision.py:13``, ``interns1.py:17``,
  ``lfm2_vl.py:15``);
- a lazy model package serves every module beside its ``__init__`` (``define_import_structure``):
  ``Qwen2VLVideoProcessor`` (``opencua.py:16``), and ``_LazyModule.__getattr__`` serves
  ``SiglipImageProcessorFast`` with a warning (``gemma3n_mm.py:17``).

What stays an error is what fails at run time: ``pixtral.py:18`` imports
``PixtralRotaryEmbedding`` and ``position_ids_in_meshgrid`` from ``modeling_pixtral`` (5.17.0
has ``PixtralVisionRotaryEmbedding`` and neither name: ``ImportError`` when tried).
"""

from __future__ import annotations

import json

from tests.support.cli import run_cli

M = "vllm/model_executor/models"


def test_what_transformers_5_serves_binds_and_the_real_breaks_remain(
    cli_env: dict[str, str],
) -> None:
    r = run_cli(
        "check", "vllm", "-t", "pypi:vllm==0.26.0,transformers==5.17.0",
        "--against", "transformers", "--json", env=cli_env, timeout=600,
    )  # fmt: skip
    assert r.code == 1, r.err
    data = json.loads(r.out)
    imports = {
        (f["file"], f["line"], f["severity"], f["category"], f["imported"])
        for f in data["findings"]
        if f["category"] in ("import-missing", "deprecated", "import-guarded")
        and f["file"].startswith(M)
    }
    assert imports == {
        (f"{M}/cohere2_vision.py", 13, "info", "deprecated", "Cohere2VisionImageProcessorFast"),
        (f"{M}/interns1.py", 17, "info", "deprecated", "GotOcr2ImageProcessorFast"),
        (f"{M}/lfm2_vl.py", 15, "info", "deprecated", "Lfm2VlImageProcessorFast"),
        (f"{M}/gemma3n_mm.py", 17, "info", "deprecated", "SiglipImageProcessorFast"),
        (f"{M}/pixtral.py", 18, "error", "import-missing", "PixtralRotaryEmbedding"),
        (f"{M}/pixtral.py", 18, "error", "import-missing", "position_ids_in_meshgrid"),
    }
    (lfm2,) = [f for f in data["findings"] if f["file"] == f"{M}/lfm2_vl.py" and f["line"] == 15]
    assert lfm2["message"].endswith(
        "with a deprecation warning (transformers/__init__.py:858); it is "
        "transformers.models.lfm2_vl.image_processing_lfm2_vl:Lfm2VlImageProcessor now"
    )
    assert lfm2["fix"] == (
        "Import it from where it lives: from transformers.models.lfm2_vl.image_processing_lfm2_vl "
        "import Lfm2VlImageProcessor as Lfm2VlImageProcessorFast."
    )
