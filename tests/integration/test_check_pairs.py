"""`harness check` on real caller/callee pairs from PyPI: complete expected lists, and controls.

Every expected error below was verified by reading both sides' source:

speculators 0.3.0 -> vLLM (baseline 0.11.0, its Requires-Dist pin), beyond the seed errors:
* vllm_hidden_states_generator.py:267 ``collective_rpc("_get_captured_states",
  unique_reply_rank=0)`` then ``captured_states_list[0]``: 0.11.0 returns ``responses`` (the
  list, multiproc_executor.py:271); 0.16.0 returns ``responses[0] if output_rank is not None
  else responses`` from ``get_response`` (:363), 0.20.2 the same through a FutureWrapper
  (:395) -- the element, which the caller then indexes again;
* :166 ``CacheConfig(block_size=..., gpu_memory_utilization=...)`` leaves
  ``enable_prefix_caching`` to its default: ``None`` in 0.11.0 (config/cache.py:70), ``True``
  since 0.16 (:76); :194 ``SchedulerConfig(...)`` leaves ``async_scheduling``: ``False`` in
  0.11.0, ``Field(default=None)`` in 0.16, resolved by ``VllmConfig.__post_init__``;
* custom_worker.py:109 installs ``_patched_forward`` (reads ``self.get_input_embeddings``) as
  ``base_model.forward``; vLLM 0.16 renamed the decoders' ``get_input_embeddings`` to
  ``embed_input_ids`` (model_executor/models/llama.py:398), same parameters.

llmcompressor 0.8.0 -> compressed-tensors 0.14.0 (control: its pin, compressed-tensors==0.12.1):
``is_kv_cache_quant_scheme`` and ``is_fp4`` were in compressed_tensors/quantization/utils/
helpers.py (``__all__``) in 0.12.1 and are gone from the package in 0.14.0; both are imported at
module level, so importing either llmcompressor module raises ImportError.

llamafactory 0.9.3 -> trl 0.19.0 (control: trl 0.9.6, the top of its ``trl<=0.9.6``; transformers
4.52.4, the top of its range, on the target so trl's Trainer base is read):
* ppo/trainer.py:36 ``from trl.core import ..., logprobs_from_logits``: trl/core.py 0.19 has no
  such function;
* :87 ``PPOConfig(model_name=...)``: 0.19's PPOConfig is an OnPolicyConfig/TrainingArguments
  dataclass without ``model_name``;
* :128 ``PPOTrainer.__init__(self, config=..., model=..., tokenizer=..., dataset=...)``: 0.19's
  ``__init__(self, args, processing_class, model, ref_model, reward_model, train_dataset,
  value_model, ...)`` (ppo_trainer.py:102) -- one TypeError, reported as the unknown keyword and
  the five missing arguments;
* :298 ``create_optimizer(self, model, training_args, finetuning_args)`` and :325
  ``create_scheduler(self, training_args, ...)``: 0.19's PPOTrainer is a transformers Trainer
  whose ``__init__`` calls ``create_optimizer_and_scheduler``, which calls
  ``self.create_optimizer()`` and ``self.create_scheduler(num_training_steps=, optimizer=)``;
* :477 ``save_model(self, output_dir=None)``: Trainer calls ``save_model(output_dir,
  _internal_call=True)`` and 0.19's PPOTrainer.save_model takes ``_internal_call``.
  (0.19's DPO/KTO ``compute_loss`` gained ``num_items_in_batch``, which llamafactory's
  ``**kwargs`` takes by name as transformers passes it: a warning, not an error.)

llamafactory 0.9.3 -> vLLM 0.11.0 (control: vllm 0.8.5.post1, the top of its ``vllm<=0.8.6``):
chat/vllm_engine.py:71 builds ``engine_args = {..., "disable_log_requests": True, ...}``, at :89
``engine_args.update(model_args.vllm_config)`` (a mapping from the user's config), then :97
``AsyncEngineArgs(**engine_args)``. The literal keys are passed whatever the update adds, and
0.11.0's ``AsyncEngineArgs`` (engine/arg_utils.py:1686) has an ``enable_log_requests`` field and
``disable_log_requests`` only as a deprecated property, which the dataclass ``__init__`` does
not take: TypeError. Every other key is a field; the other uses bind (``SamplingParams(n=...,
skip_special_tokens=...)`` fields, ``LoRARequest(name, int_id, path)``,
``AsyncLLMEngine.from_engine_args(args)`` -- AsyncLLM's, v1/engine/async_llm.py:221 --,
``generate(prompt, sampling_params=, request_id=, lora_request=)`` :323, ``vllm.__version__``,
the lazy ``vllm`` exports and ``vllm.model_executor.models.llava``).

trl 0.19.0 -> vLLM 0.16.0 (control: vllm 0.8.5.post1, in its ``vllm>=0.8.3`` extra and the
vLLM of its day; 0.11.0 is clean too, with ``GuidedDecodingParams`` and ``guided_decoding`` as
deprecated aliases):
* scripts/vllm_serve.py:55 and trainer/grpo_trainer.py:75 ``from vllm.sampling_params import
  GuidedDecodingParams``: 0.16's sampling_params.py has only ``StructuredOutputsParams`` (:34),
  no alias and no module ``__getattr__``. Both imports run at module level under
  ``is_vllm_available()``, so importing ``trl.trainer.grpo_trainer`` raises ImportError, and
  so does ``trl.scripts.vllm_serve`` and with it ``trl/cli.py`` (:28 imports it);
* vllm_serve.py:56 ``from vllm.utils import get_open_port``: 0.16 moved it to
  ``vllm/utils/network_utils.py:150``; ``vllm/utils/__init__.py`` (36 lines) neither imports it
  nor has a module ``__getattr__``: ImportError;
* vllm_serve.py:491 and grpo_trainer.py:1128 ``SamplingParams(**generation_kwargs)``, the dict
  built just above with the literal key ``"guided_decoding"`` (:488 / :1125) and then
  ``update``-d from the request / ``args.generation_kwargs``: the literal key is passed
  whatever the update adds. 0.16's ``SamplingParams`` is a ``msgspec.Struct``
  (sampling_params.py:117) whose fields renamed it ``structured_outputs`` (:233): its
  generated ``__init__`` raises TypeError on the unknown keyword (0.8.5.post1 has the field,
  :245).
Every other use binds in 0.16: ``LLM(model=, revision=, tensor_parallel_size=, ...)`` (named
parameters of entrypoints/llm.py:199, the rest -- ``enable_prefix_caching``,
``kv_cache_dtype``, ``max_model_len``, ``worker_extension_cls``, ``max_num_seqs``,
``distributed_executor_backend``, ``max_num_batched_tokens`` -- ``EngineArgs`` fields through
``**kwargs``), ``generate``/``chat``/``collective_rpc(method=)``/``reset_prefix_cache()``,
online_dpo_trainer.py:258's ``SamplingParams(n=, max_tokens=, temperature=, top_k=, top_p=,
detokenize=)``, ``StatelessProcessGroup.create(host=, port=, rank=, world_size=)``,
``get_world_group().rank`` and ``llm_engine``. ``PyNcclCommunicator(pg, device=)``
(vllm_serve.py:108, extras/vllm_client.py:260) is not checked -- the name may be rebound to
vllm_ascend's ``PyHcclCommunicator`` -- and binds in 0.16 anyway (pynccl.py:59).
"""

from __future__ import annotations

import json

import pytest

from tests.support.cli import run_cli

SPEC = "speculators/data_generation"
GEN = f"{SPEC}/vllm_hidden_states_generator.py"


def check(env: dict[str, str], caller: str, spec: str, *args: str) -> dict:
    r = run_cli("check", caller, "-t", f"pypi:{spec}", "--json", *args, env=env)
    assert r.code in (0, 1), r.err
    return json.loads(r.out)


def errors(data: dict) -> set[tuple[str, int, str, str]]:
    return {
        (f["file"], f["line"], f["category"], f["symbol"])
        for f in data["findings"]
        if f["severity"] == "error"
    }


def at(data: dict, file: str, line: int) -> list[dict]:
    return [f for f in data["findings"] if f["file"] == file and f["line"] == line]


@pytest.mark.parametrize("vllm", ["0.16.0", "0.20.2"])
def test_speculators_behaviour_defaults_and_patched_forward(
    cli_env: dict[str, str], vllm: str
) -> None:
    data = check(cli_env, "speculators", f"speculators==0.3.0,vllm=={vllm}")
    assert data["baseline"] == {"vllm": "0.11.0"}
    (rpc,) = [
        f for f in at(data, GEN, 267) if f["changes"][0]["kind"] == "returns-behaviour-changed"
    ]
    assert "unique_reply_rank=0" in rpc["message"] and "`responses[0]`" in rpc["message"]
    assert "vllm 0.11.0 returned `responses`" in rpc["message"]
    assert "captured_states_list[0] (line 271)" in rpc["message"]
    # the same method called without the selecting parameter returns the list in both
    assert not any(
        c["kind"] == "returns-behaviour-changed" for f in at(data, GEN, 126) for c in f["changes"]
    )
    (cache,) = [f for f in at(data, GEN, 166) if f["severity"] == "warning"]
    assert {c["name"]: (c["old"], c["new"]) for c in cache["changes"]} == {
        "enable_prefix_caching": ("None", "True")
    }
    (sched,) = [f for f in at(data, GEN, 194) if f["category"] == "drift"]
    async_ = next(c for c in sched["changes"] if c["name"] == "async_scheduling")
    assert (async_["old"], async_["new"]) == ("False", "None")
    assert "VllmConfig.__post_init__ then sets to False or True" in async_["text"]
    (fwd,) = at(data, f"{SPEC}/custom_worker.py", 109)
    assert fwd["severity"] == "warning" and "self.get_input_embeddings" in fwd["message"]
    assert "LlamaModel" in fwd["changes"][0]["classes"]
    assert fwd["changes"][0]["new"] == "embed_input_ids"
    assert "No class of vllm" in fwd["message"]  # none defines them all any more


def test_speculators_on_its_baseline_reports_no_drift(cli_env: dict[str, str]) -> None:
    data = check(cli_env, "speculators", "speculators==0.3.0,vllm==0.11.0")
    assert data["summary"] == {"error": 0, "warning": 0, "info": 0}


@pytest.mark.parametrize("transformers", ["4.57.6", "5.17.0"])
def test_speculators_on_transformers_has_no_false_errors_and_finds_the_slide(
    cli_env: dict[str, str], transformers: str
) -> None:
    """Configs take any keyword (PretrainedConfig's setattr loop; transformers 5's @strict
    dataclasses under a dataclass_transform base), tokenizers are called through __call__.
    Against 5.17.0 (written for 4.57.6): ``apply_rotary_pos_emb(q, k, cos, sin, position_ids)``
    (eagle3_legacy_model.py:106) fits ``(q, k, cos, sin, unsqueeze_dim=1)`` by count, and the
    position ids land in ``unsqueeze_dim`` -- ``cos.unsqueeze(tensor)`` raises TypeError.
    ``SpeculatorModelConfig(PydanticClassRegistryMixin, PretrainedConfig)`` (config.py:160) is a
    pydantic model (the mixin is a ``ReloadableBaseModel``, a ``BaseModel``) and a config: 5.17's
    ``PreTrainedConfig.__init_subclass__`` runs ``dataclass(cls, ...)`` on it (:365), and
    ``save_pretrained`` calls ``self.validate()`` (:605), @strict's (:146) -- but pydantic's
    ``BaseModel.validate(value)`` comes first in its MRO. ``Eagle3Speculator(SpeculatorModel)``
    (eagle3_legacy_model.py:235; ``SpeculatorModel`` derives from ``PreTrainedModel``) overrides
    ``tie_weights(self)`` (:342), and 5.17's ``PreTrainedModel.init_weights`` calls
    ``self.tie_weights(recompute_mapping=False)`` (modeling_utils.py:3104): TypeError.
    4.57.6 has none of these (``tie_weights(self)``, called bare)."""
    data = check(
        cli_env,
        "speculators",
        f"speculators==0.3.0,transformers=={transformers}",
        "--against",
        "transformers",
        "--baseline",
        "transformers==4.57.6",
    )
    legacy = "speculators/convert/eagle/eagle3_legacy_model.py"
    rope = "transformers.models.llama.modeling_llama:apply_rotary_pos_emb"
    config = ("speculators/config.py", 160)
    base = "transformers:PretrainedConfig"
    new = {
        (legacy, 106, "argument-shifted", rope),
        (*config, "base-construction", base),
        (*config, "base-method-collision", base),
        (
            legacy,
            342,
            "override-incompatible",
            "transformers.modeling_utils:PreTrainedModel.tie_weights",
        ),
    }
    assert errors(data) == (new if transformers != "4.57.6" else set())
    assert data["stats"]["calls"] >= 50
    if transformers == "4.57.6":
        return
    (f,) = at(data, legacy, 106)
    assert "argument 5 was 'position_ids' in transformers 4.57.6" in f["message"]
    assert "it lands in 'unsqueeze_dim'" in f["message"]
    assert (f["keywords"], f["argument"]) == (["position_ids"], 4)
    got = {f["category"]: f["message"] for f in at(data, *config)}
    made = got["base-construction"]
    assert "__init_subclass__ (transformers/configuration_utils.py:365) runs dataclass" in made
    assert "SpeculatorModelConfig is also a pydantic model (pydantic.BaseModel" in made
    clash = got["base-method-collision"]
    assert "save_pretrained calls self.validate() (transformers/configuration_utils.py:605)" in (
        clash
    )
    assert "reaches pydantic.BaseModel.validate(value)" in clash
    assert "missing 'value'" in clash
    (tie,) = [f for f in at(data, legacy, 342) if f["category"] == "override-incompatible"]
    assert "PreTrainedModel.init_weights calls it with (recompute_mapping=) at " in tie["message"]
    assert "transformers/modeling_utils.py:3104" in tie["message"]


def test_speculators_fix_drops_the_argument_that_slid(cli_env: dict[str, str]) -> None:
    """transformers 4.57.6's ``apply_rotary_pos_emb`` never read ``position_ids`` ("Deprecated
    and unused", modeling_llama.py:116): dropping it is what the call meant all along."""
    data = check(
        cli_env,
        "speculators",
        "speculators==0.3.0,transformers==5.17.0",
        "--against",
        "transformers",
        "--baseline",
        "transformers==4.57.6",
        "--fix",
        "--dry-run",
    )
    assert [(f["kind"], f["line"]) for f in data["fixed"]] == [("shifted-argument", 106)]
    assert "transformers 4.57.6 never read it" in data["fixed"][0]["summary"]
    # the class-hierarchy breaks have no mechanical fix: left to the reader
    assert sorted((f["line"], f["category"]) for f in data["manual"]) == [
        (160, "base-construction"),
        (160, "base-method-collision"),
        (342, "override-incompatible"),
    ]
    removed = [
        ln for ln in data["diff"].splitlines() if ln.startswith("-") and "position_ids" in ln
    ]
    added = [ln for ln in data["diff"].splitlines() if ln.startswith("+") and "cos, sin" in ln]
    assert removed == ["-                query_states, key_states, cos, sin, position_ids"]
    assert added == ["+                query_states, key_states, cos, sin"]


def test_llmcompressor_on_compressed_tensors(cli_env: dict[str, str]) -> None:
    args = ("--against", "compressed-tensors")  # the dist name, as a user types it
    control = check(
        cli_env, "llmcompressor", "llmcompressor==0.8.0,compressed-tensors==0.12.1", *args
    )
    assert errors(control) == set()
    data = check(cli_env, "llmcompressor", "llmcompressor==0.8.0,compressed-tensors==0.14.0", *args)
    assert data["baseline"] == {"compressed-tensors": "0.12.1"}
    utils = "compressed_tensors.quantization.utils"
    assert errors(data) == {
        (
            "llmcompressor/modifiers/quantization/calibration.py",
            13,
            "import-missing",
            f"{utils}:is_kv_cache_quant_scheme",
        ),
        ("llmcompressor/observers/base.py", 11, "import-missing", f"{utils}:is_fp4"),
    }


PPO = "llamafactory/train/ppo/trainer.py"
DPO, KTO = "llamafactory/train/dpo/trainer.py", "llamafactory/train/kto/trainer.py"


def test_llamafactory_on_trl(cli_env: dict[str, str]) -> None:
    args = ("--against", "trl", "--baseline", "trl==0.9.6")
    control = check(
        cli_env, "llamafactory", "llamafactory==0.9.3,trl==0.9.6,transformers==4.52.4", *args
    )
    assert errors(control) == set()
    # the DPO/KTO reference-logprob overrides were re-signatured on purpose, already in 0.9.6
    assert {f["category"] for f in control["findings"] if f["line"] in (187, 208)} == {
        "override-incompatible"
    }
    data = check(
        cli_env, "llamafactory", "llamafactory==0.9.3,trl==0.19.0,transformers==4.52.4", *args
    )
    assert errors(data) == {
        (PPO, 36, "import-missing", "trl.core:logprobs_from_logits"),
        (PPO, 87, "unexpected-kwarg", "trl:PPOConfig"),
        # ppo_config.accelerator_kwargs / .log_with read back (under a deepspeed plugin): 0.19.0's
        # PPOConfig(OnPolicyConfig(TrainingArguments)) defines neither -- read since
        # TrainingArguments' setattr loop over its own literal names no longer opens the class
        (PPO, 108, "missing-attribute", "trl:PPOConfig.accelerator_kwargs"),
        (PPO, 111, "missing-attribute", "trl:PPOConfig.accelerator_kwargs"),
        (PPO, 112, "missing-attribute", "trl:PPOConfig.log_with"),
        (PPO, 128, "unexpected-kwarg", "trl:PPOTrainer.__init__"),
        (PPO, 128, "missing-required-arg", "trl:PPOTrainer.__init__"),
        (PPO, 298, "override-incompatible", "trl:PPOTrainer.create_optimizer"),
        (PPO, 325, "override-incompatible", "trl:PPOTrainer.create_scheduler"),
        (PPO, 477, "override-incompatible", "trl:PPOTrainer.save_model"),
        # self._prepare_deepspeed(...) in DPO/KTO subclasses: trl 0.9.6's trainers defined it,
        # 0.19.0 made it the function trl.models.prepare_deepspeed (issue 46, class a)
        (DPO, 97, "missing-attribute", "trl.trainer.dpo_trainer:DPOTrainer._prepare_deepspeed"),
        (KTO, 93, "missing-attribute", "trl.trainer.kto_trainer:KTOTrainer._prepare_deepspeed"),
    }


def test_imbalanced_learn_on_compiled_callees_has_no_false_errors(cli_env: dict[str, str]) -> None:
    """numpy and scikit-learn are partly compiled. Read from their wheels:

    * ``numpy.random`` star-imports the compiled ``mtrand``, which ``mtrand.pyi`` describes, and
      ``numpy/__init__.pyi`` declares what ``__init__.py`` pulls from compiled ``_core`` modules:
      stubs say these names exist (``np.array``, ``np.random.RandomState``,
      ``np.finfo(...).eps``), as type checkers read them;
    * ``sklearn.utils.sparsefuncs_fast`` is compiled with no stub: its names are unverifiable;
    * what is left was verified in sklearn 1.5.2's source: ``OneHotEncoder(sparse=)`` (renamed
      ``sparse_output``), ``_enforce_estimator_tags_x`` (now ``_enforce_estimator_tags_X``);
    * the Bagging/DecisionTree/Forest overrides narrower than sklearn's methods are no error:
      nothing in sklearn calls them with what they lack (``BaseBagging.fit`` calls
      ``self._fit(X, y, max_samples=..., **fit_params)``; ``_set_oob_score_and_attributes(X, y,
      scoring_function=...)`` is called from ``BaseForest.fit``, which
      ``BalancedRandomForestClassifier`` replaces with its own ``fit`` calling it with two);
    * ``from sklearn.utils import _print_elapsed_time`` (imblearn/pipeline.py:17): 1.5.2 moved it
      to ``sklearn/utils/_user_interface.py`` and ``utils/__init__.py`` no longer imports it; its
      module ``__getattr__`` (:86) serves ``IS_PYPY`` only and raises AttributeError for any
      other name, so the import fails (ImportError) -- read, not unverifiable;
    * ``RUSBoostClassifier.__init__`` calls ``super().__init__(base_estimator=...)``, which
      sklearn 1.4 renamed ``estimator`` (run: ``RUSBoostClassifier()`` raises "TypeError:
      AdaBoostClassifier.__init__() got an unexpected keyword argument 'base_estimator'" on
      1.5.2) -- found since ``super().__init__`` binds against the callee base.
    """
    spec = "imbalanced-learn==0.9.1,scikit-learn==1.5.2,numpy==2.4.6"
    data = check(cli_env, "imbalanced-learn", spec, "--no-baseline")
    smote = "imblearn/over_sampling/_smote"
    assert errors(data) == {
        (f"{smote}/base.py", 510, "unexpected-kwarg", "sklearn.preprocessing:OneHotEncoder"),
        ("imblearn/pipeline.py", 17, "import-missing", "sklearn.utils:_print_elapsed_time"),
        (
            "imblearn/ensemble/_weight_boosting.py",
            146,
            "unexpected-kwarg",
            "sklearn.ensemble._weight_boosting:AdaBoostClassifier.__init__",
        ),
        (
            "imblearn/tests/test_docstring_parameters.py",
            20,
            "import-missing",
            "sklearn.utils.estimator_checks:_enforce_estimator_tags_x",
        ),
    }  # fmt: skip
    said = {f["symbol"]: f["message"] for f in data["findings"] if f["category"] == "unverifiable"}
    fast = "sklearn.utils.sparsefuncs_fast"
    assert said[f"{fast}:csr_mean_variance_axis0"].endswith(
        f"({fast} is compiled, with no stub to read)"
    )
    assert not [s for s in said if s.startswith("numpy")]  # the stubs declare them


def test_llamafactory_on_vllm_keeps_literal_keys_past_an_update(cli_env: dict[str, str]) -> None:
    args = ("--against", "vllm", "--no-baseline")
    control = check(cli_env, "llamafactory", "llamafactory==0.9.3,vllm==0.8.5.post1", *args)
    assert errors(control) == set()
    assert control["summary"] == {"error": 0, "warning": 0, "info": 0}
    data = check(cli_env, "llamafactory", "llamafactory==0.9.3,vllm==0.11.0", *args)
    engine = "llamafactory/chat/vllm_engine.py"
    assert errors(data) == {(engine, 97, "unexpected-kwarg", "vllm:AsyncEngineArgs")}
    (f,) = at(data, engine, 97)
    assert "'disable_log_requests'" in f["message"]


def test_trl_on_vllm_guided_decoding_renamed(cli_env: dict[str, str]) -> None:
    args = ("--against", "vllm", "--no-baseline")
    control = check(cli_env, "trl", "trl==0.19.0,vllm==0.8.5.post1", *args)
    assert errors(control) == set()
    assert control["summary"] == {"error": 0, "warning": 0, "info": 0}
    data = check(cli_env, "trl", "trl==0.19.0,vllm==0.16.0", *args)
    serve, grpo = "trl/scripts/vllm_serve.py", "trl/trainer/grpo_trainer.py"
    guided = "vllm.sampling_params:GuidedDecodingParams"
    assert errors(data) == {
        (serve, 55, "import-missing", guided),
        (serve, 56, "import-missing", "vllm.utils:get_open_port"),
        (serve, 491, "unexpected-kwarg", "vllm:SamplingParams"),
        (grpo, 75, "import-missing", guided),
        (grpo, 1128, "unexpected-kwarg", "vllm:SamplingParams"),
    }
    for file, line in ((serve, 491), (grpo, 1128)):
        (f,) = at(data, file, line)
        assert "'guided_decoding'" in f["message"]
    assert data["stats"]["imports"] == control["stats"]["imports"] == 15
    assert data["stats"]["calls"] == control["stats"]["calls"] == 18


def test_mellea_on_transformers_5_narrowed_by_an_exact_type_check(cli_env: dict[str, str]) -> None:
    """mellea 0.3.2 (``transformers<5,>=4.53.2``) against transformers 5.17.0, which removed
    ``DynamicCache.to_legacy_cache`` and ``from_legacy_cache`` (cache_utils.py:1005/1016 in
    4.57.6; transformers issue 48479). backends/kv_block_helpers.py:37 ``if
    type(tokens_or_cache) is DynamicCache: return tokens_or_cache.to_legacy_cache()`` -- the
    class known only by the type check (issue 34, class 5) --, :28
    ``DynamicCache.from_legacy_cache(...)``, :47 ``dc.to_legacy_cache()`` on the cache the model
    hands back. backends/huggingface.py:29 ``from transformers.tokenization_utils import
    PreTrainedTokenizer`` binds: 5.17's ``__init__`` makes that module at run time
    (``_create_module_alias``, __init__.py:844; test_check_module_alias.py)."""
    args = ("--against", "transformers", "--baseline", "transformers==4.57.6")
    control = check(cli_env, "mellea", "mellea==0.3.2,transformers==4.57.6", *args)
    assert errors(control) == set()
    data = check(cli_env, "mellea", "mellea==0.3.2,transformers==5.17.0", *args)
    helpers = "mellea/backends/kv_block_helpers.py"
    cache = "transformers.cache_utils:DynamicCache"
    assert {e for e in errors(data) if e[0] == helpers} == {
        (helpers, 28, "missing-attribute", f"{cache}.from_legacy_cache"),
        (helpers, 37, "missing-attribute", f"{cache}.to_legacy_cache"),
        (helpers, 47, "missing-attribute", f"{cache}.to_legacy_cache"),
    }
    (f,) = at(data, helpers, 37)
    assert f["message"] == (
        "'DynamicCache' object has no attribute 'to_legacy_cache' (transformers 5.17.0)"
    )
