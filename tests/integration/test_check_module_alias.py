"""A module a package makes at import by a function is importable (transformers 5).

transformers 5.17.0's ``__init__.py`` (:824-845, in the ``else`` of ``if TYPE_CHECKING``)
defines ``_create_module_alias(alias, target)``, which stores a ``types.ModuleType`` in
``sys.modules[alias]`` whose ``__getattr__`` is ``getattr(importlib.import_module(target,
__name__), name)``, and calls it for ``tokenization_utils_fast`` ->
``.tokenization_utils_tokenizers``, ``tokenization_utils`` -> ``.tokenization_utils_sentencepiece``
and ``image_processing_utils_fast`` -> ``.image_processing_backends``. No file
``transformers/tokenization_utils.py`` exists in 5.17.0, yet mellea 0.3.2's
``mellea/backends/huggingface.py:29`` ``from transformers.tokenization_utils import
PreTrainedTokenizer`` works: ``tokenization_utils_sentencepiece.py:28`` imports
``PreTrainedTokenizer`` from ``tokenization_python``. check reported it as ``import-missing``.
"""

from __future__ import annotations

import json
from pathlib import Path

from probes._finder import Finder
from probes.callsites._callees import Callees
from probes.signatures._astindex import Index
from probes.signatures._lookup import Lookup
from probes.signatures._resolvable import from_import
from tests.support.cli import run_cli

ARGS = ("--against", "transformers", "--baseline", "transformers==4.57.6")
HELPERS = "mellea/backends/kv_block_helpers.py"


def check(env: dict[str, str], spec: str) -> dict:
    r = run_cli("check", "mellea", "-t", f"pypi:{spec}", "--json", *ARGS, env=env)
    assert r.code in (0, 1), r.err
    return json.loads(r.out)


def test_mellea_imports_through_the_alias_and_only_the_real_breaks_remain(
    cli_env: dict[str, str],
) -> None:
    data = check(cli_env, "mellea==0.3.2,transformers==5.17.0")
    cache = "transformers.cache_utils:DynamicCache"
    assert {
        (f["file"], f["line"], f["category"], f["symbol"])
        for f in data["findings"]
        if f["severity"] == "error"
    } == {
        (HELPERS, 28, "missing-attribute", f"{cache}.from_legacy_cache"),
        (HELPERS, 37, "missing-attribute", f"{cache}.to_legacy_cache"),
        (HELPERS, 47, "missing-attribute", f"{cache}.to_legacy_cache"),
    }
    said = [f for f in data["findings"] if f["file"] == "mellea/backends/huggingface.py"]
    assert not [f for f in said if f["line"] == 29]


def test_the_alias_is_read_from_the_real_init_and_a_missing_module_still_is(
    cli_env: dict[str, str], harness_cache: Path
) -> None:
    check(cli_env, "mellea==0.3.2,transformers==5.17.0")  # unpacks the wheel into the cache
    index = Index(Finder([str(harness_cache / "pypi" / "transformers-5.17.0")]))
    lookup = Lookup(index, lambda _: None)
    callees = Callees(index, lookup, {"transformers"})
    tf = "transformers"
    assert callees.alias_of(f"{tf}.tokenization_utils") == f"{tf}.tokenization_utils_sentencepiece"
    assert callees.alias_of(f"{tf}.tokenization_utils_fast") == (
        f"{tf}.tokenization_utils_tokenizers"
    )
    assert callees.alias_of(f"{tf}.image_processing_utils_fast") == (
        f"{tf}.image_processing_backends"
    )
    assert callees.is_module(f"{tf}.tokenization_utils")
    # a module nothing makes is still missing, and so is a name the target does not have
    assert callees.alias_of(f"{tf}.tokenization_utils_slow") is None
    assert not callees.is_module(f"{tf}.tokenization_utils_slow")
    assert callees.alias_of(f"{tf}.tokenization_python") is None  # a real file: no alias
    real = callees.module_of(f"{tf}.tokenization_utils")
    assert from_import(index.finder, lookup, real, "PreTrainedTokenizer")["ok"]
    assert not from_import(index.finder, lookup, real, "NoSuchTokenizer")["ok"]
    # the loop over models/*/image_processing_*.py (__init__.py:847-851): one alias per file
    lfm2 = f"{tf}.models.lfm2_vl.image_processing_lfm2_vl"
    assert callees.alias_of(f"{lfm2}_fast") == lfm2
    assert callees.alias_of(f"{tf}.models.llama4.image_processing_llama4_fast") == (
        f"{tf}.models.llama4.image_processing_llama4"
    )
    # vLLM 0.26.0's lfm2_vl.py:15 imports these through it (check said import-missing)
    for name in ("find_closest_aspect_ratio", "round_by_factor"):
        assert from_import(index.finder, lookup, callees.module_of(f"{lfm2}_fast"), name)["ok"]
    # no file, no alias: a model without an image processor has no _fast module
    assert callees.alias_of(f"{tf}.models.llama.image_processing_llama_fast") is None
    assert not callees.is_module(f"{tf}.models.llama.image_processing_llama_fast")
    # a lazy model package serves every module beside its __init__ (define_import_structure),
    # also one its TYPE_CHECKING block leaves out: vLLM 0.26.0's opencua.py:16
    assert from_import(index.finder, lookup, f"{tf}.models.qwen2_vl", "Qwen2VLVideoProcessor")["ok"]
    assert not from_import(index.finder, lookup, f"{tf}.models.qwen2_vl", "Qwen2VLNoSuch")["ok"]
