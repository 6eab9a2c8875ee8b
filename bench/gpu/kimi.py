#!/usr/bin/env python3
"""A tiny Kimi-K2.5-shaped checkpoint, built here (nothing from a hub): ``python3 bench/gpu/kimi.py OUT``.

What it writes to ``OUT`` (and why each piece is there):

* ``config.json``: ``model_type = "kimi_k25"``, ``architectures =
  ["KimiK25ForConditionalGeneration"]``, ``auto_map.AutoConfig =
  "configuration_kimi_k25.KimiK25Config"``; a ``text_config`` (DeepSeek-V3: ``TEXT`` below) and a
  ``vision_config`` (MoonViT3d: ``VISION``), ``media_placeholder_token_id`` = the tokenizer's
  ``<|media_pad|>``. vLLM 0.20.2 reads it with its *own* ``KimiK25Config``
  (``vllm/transformers_utils/config.py``: ``kimi_k25`` is in ``_CONFIG_REGISTRY``, so the remote
  class is not used by vLLM); speculators' generator and harness's verifier read it through
  ``AutoConfig.from_pretrained(..., trust_remote_code=True)``, i.e. through our
  ``configuration_kimi_k25.py``. The text part:
  - MLA dims FlashMLA / FA3 on Hopper take: ``kv_lora_rank 512``, ``qk_rope_head_dim 64``,
    ``qk_nope_head_dim 128``, ``v_head_dim 128``; 16 heads (DeepSeek-V3's per-GPU count at TP 8);
    ``q_lora_rank`` set (Kimi has one: vLLM then builds ``fused_qkv_a_proj``).
  - 8 layers, ``first_k_dense_replace = 1`` (Kimi: 1); 8 routed experts, 2 per token, 1 shared,
    (not 6: speculators' generator picks ``[2, n // 2, n - 3, n - 1]`` = ``[2, 3, 3, 5]`` there, the
    worker captures each layer once, and training then gets 2 layers where it wants 3 --
    ``[4096, 1024] X [1536, 512]`` on the H200 run of 2026-12-01; 8 gives ``[2, 4, 5, 7]``)
    ``n_group = topk_group = 1``; ``topk_method = "noaux_tc"`` and ``scoring_func = "sigmoid"``
    written explicitly: transformers 5 drops them on save and vLLM then builds the router without
    ``e_score_correction_bias`` (``KeyError ...mlp.gate.e_score_correction_bias`` at load).
  - plain RoPE (no YaRN), ``rope_interleave`` as transformers' default (vLLM's DeepSeek is
    GPT-J style, interleaved: the same).
* ``configuration_kimi_k25.py``: the config classes (``KimiK25Config``, ``KimiK25VisionConfig``;
  mirrors vLLM's copy of Kimi's file). It also exposes the text model's ``vocab_size`` and
  ``hidden_size`` at the top, as Kimi's does.
* ``tokenization_kimi.py`` + ``tokenizer_config.json`` (``auto_map.AutoTokenizer``) +
  ``kimi_tokenizer.json``: a ``PreTrainedTokenizerFast`` subclass reading its vocabulary from a
  file of its own name (no ``tokenizer.json``), so ``AutoTokenizer`` loads it only with
  ``trust_remote_code=True`` (patch 0001), as Kimi's tiktoken tokenizer (``tiktoken.model``);
  without it transformers 5.17 raises "Couldn't instantiate the backend tokenizer". (transformers
  5.17 ships its own ``kimi_k25`` config: ``AutoConfig`` without trust_remote_code gives
  ``Kimi_K25Config``, which has no top-level ``vocab_size``/``hidden_size``.) The vocabulary is
  e2e.py's byte-level
  BPE with its chat template, plus Kimi's media tokens (``<|media_begin|>``,
  ``<|media_content|>``, ``<|media_pad|>``, ``<|media_end|>``,
  ``<|kimi_k25_video_placeholder|>``): vLLM's ``KimiK25ProcessingInfo`` resolves
  ``<|media_pad|>`` through the tokenizer and decodes it.
* ``kimi_k25_vision_processing.py`` + ``preprocessor_config.json``
  (``auto_map.AutoImageProcessor``): vLLM builds Kimi's multimodal processor in the engine and in
  every worker even for text-only requests (``MultiModalBudget`` in the GPU model runner, the
  encoder budget of the scheduler) -- ``cached_get_image_processor(model,
  trust_remote_code=True)`` -- and profiles the vision tower with a dummy 3000x3000 image / a
  4-frame video chunk. The processor needs ``num_frames_per_chunk``, ``media_tokens_calculator``
  and ``preprocess(vision_chunks)`` -> ``pixel_values [N, 3, p, p]``, ``grid_thws [B, 3]``.
  ``in_patch_limit`` keeps that dummy small (256 patches per frame -> 64 tokens).
* ``model.safetensors`` (bf16), names as Kimi ships them, which vLLM's
  ``KimiK25ForConditionalGeneration.load_weights`` maps (``hf_to_vllm_mapper``: only
  ``mm_projector.proj.0/2`` -> ``mm_projector.linear_1/2`` and the legacy
  ``language_model.layers.`` -> ``language_model.model.layers.``; the rest go by module path
  through ``AutoWeightsLoader``):
  - ``language_model.`` + every name transformers 5.17's ``DeepseekV3ForCausalLM.save_pretrained``
    writes (``model.embed_tokens``, ``model.layers.N.self_attn.{q_a_proj, q_a_layernorm, q_b_proj,
    kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o_proj}``, ``mlp.{gate_proj, up_proj,
    down_proj}`` (dense), ``mlp.gate.{weight, e_score_correction_bias}``,
    ``mlp.experts.E.{gate,up,down}_proj``, ``mlp.shared_experts.*``, ``model.norm``, ``lm_head``):
    vLLM's ``language_model`` is its ``DeepseekV2ForCausalLM`` whose ``load_weights`` takes
    exactly these (it stacks q_a + kv_a into ``fused_qkv_a_proj``, gate/up into
    ``gate_up_proj``, and the per-expert tensors into its fused MoE). The values are those of a
    seeded transformers ``DeepseekV3ForCausalLM`` of ``TEXT``, also saved on its own as
    ``OUT/text`` (a plain DeepSeek-V3 folder: the reference the extraction is verified against).
  - ``vision_tower.patch_embed.{proj.weight, proj.bias, pos_emb.weight}``,
    ``vision_tower.encoder.blocks.N.{norm0, norm1, wqkv, wo, mlp.fc0, mlp.fc1}.{weight, bias}``,
    ``vision_tower.encoder.final_layernorm.{weight, bias}``, ``mm_projector.pre_norm.{weight,
    bias}``, ``mm_projector.proj.{0,2}.{weight, bias}``: random (``vision_names``).

``build(out)`` returns a dict of what it made. ``run_e2e()`` (``python3 bench/gpu/kimi.py --e2e
extract|train``) drives prepare -> extract (verified) -> extract --smoke -> vocab -> train on it
through harness on the GPU machine (see its docstring). ``kimi_cpu_check.py`` checks the
checkpoint against vLLM 0.20.2's classes on a CPU.

Beyond the dense-Llama payload, vLLM's Kimi-K2.5 path imports ``compressed_tensors`` and
(through transformers 5.17's ``AutoImageProcessor``) ``torchvision`` (``NEEDS``).
"""

# ruff: noqa: E501 -- result lines are built in place, as they are printed

from __future__ import annotations

import json
import random
import shutil
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

MEDIA = ["<|media_begin|>", "<|media_content|>", "<|media_pad|>", "<|media_end|>",
         "<|kimi_k25_video_placeholder|>"]  # fmt: skip

TEXT: dict[str, Any] = dict(
    model_type="deepseek_v3",
    hidden_size=512,
    intermediate_size=1024,  # the dense layers' MLP
    moe_intermediate_size=256,
    num_hidden_layers=8,  # not 6: see the docstring (speculators' default layers repeat one)
    first_k_dense_replace=1,
    num_attention_heads=16,
    num_key_value_heads=16,
    q_lora_rank=128,
    kv_lora_rank=512,
    qk_rope_head_dim=64,
    qk_nope_head_dim=128,
    v_head_dim=128,
    n_routed_experts=8,
    num_experts_per_tok=2,
    n_shared_experts=1,
    n_group=1,
    topk_group=1,
    routed_scaling_factor=2.5,
    norm_topk_prob=True,
    topk_method="noaux_tc",
    scoring_func="sigmoid",
    max_position_embeddings=4096,
    rms_norm_eps=1e-6,
    tie_word_embeddings=False,
)

VISION: dict[str, Any] = dict(
    model_type="kimi_k25_vision",
    patch_size=14,
    init_pos_emb_height=16,
    init_pos_emb_width=16,
    init_pos_emb_time=4,
    pos_emb_type="divided_fixed",
    num_attention_heads=2,  # head dim 64: FA3 (the payload keeps it) takes it in vLLM's ViT attention
    num_hidden_layers=2,
    hidden_size=128,
    intermediate_size=256,
    merge_kernel_size=[2, 2],
    video_attn_type="spatial_temporal",
    merge_type="sd2_tpool",
    mm_projector_type="patchmerger",
    projector_hidden_act="gelu",
    projector_ln_eps=1e-5,
)

PROCESSOR: dict[str, Any] = dict(
    patch_size=14, merge_kernel_size=[2, 2], in_patch_limit=256, num_frames_per_chunk=4,
    image_mean=[0.5, 0.5, 0.5], image_std=[0.5, 0.5, 0.5],
)  # fmt: skip

CONFIG_PY = '''"""Kimi-K2.5 configuration (a small stand-in for the file Kimi ships; loaded with trust_remote_code)."""

from transformers import DeepseekV3Config
from transformers.configuration_utils import PretrainedConfig


class KimiK25VisionConfig(PretrainedConfig):
    model_type = "kimi_k25_vision"

    def __init__(self, patch_size=14, init_pos_emb_height=64, init_pos_emb_width=64,
                 init_pos_emb_time=4, pos_emb_type="divided_fixed", num_attention_heads=16,
                 num_hidden_layers=27, hidden_size=1152, intermediate_size=4304,
                 merge_kernel_size=(2, 2), video_attn_type="spatial_temporal",
                 merge_type="sd2_tpool", mm_projector_type="patchmerger", mm_hidden_size=None,
                 projector_hidden_act="gelu", projector_ln_eps=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.patch_size = patch_size
        self.init_pos_emb_height = init_pos_emb_height
        self.init_pos_emb_width = init_pos_emb_width
        self.init_pos_emb_time = init_pos_emb_time
        self.pos_emb_type = pos_emb_type
        self.num_attention_heads = num_attention_heads
        self.num_hidden_layers = num_hidden_layers
        self.hidden_size = hidden_size
        self.intermediate_size = intermediate_size
        self.merge_kernel_size = merge_kernel_size
        self.video_attn_type = video_attn_type
        self.merge_type = merge_type
        self.mm_projector_type = mm_projector_type
        self.mm_hidden_size = hidden_size if mm_hidden_size is None else mm_hidden_size
        self.projector_hidden_act = projector_hidden_act
        self.projector_ln_eps = projector_ln_eps


class KimiK25Config(PretrainedConfig):
    model_type = "kimi_k25"

    def __init__(self, vision_config=None, text_config=None, ignore_index=-100,
                 media_placeholder_token_id=163605, pad_token_id=0,
                 use_unified_vision_chunk=False,
                 video_placeholder="<|kimi_k25_video_placeholder|>", **kwargs):
        if vision_config is None:
            vision_config = KimiK25VisionConfig()
        elif isinstance(vision_config, dict):
            vision_config = KimiK25VisionConfig(**vision_config)
        self.vision_config = vision_config
        if text_config is None:
            text_config = DeepseekV3Config()
        elif isinstance(text_config, dict):
            text_config = DeepseekV3Config(**text_config)
        self.text_config = text_config
        self.ignore_index = ignore_index
        self.media_placeholder_token_id = media_placeholder_token_id
        self.use_unified_vision_chunk = use_unified_vision_chunk
        self.video_placeholder = video_placeholder
        super().__init__(pad_token_id=pad_token_id, **kwargs)

    @property
    def hidden_size(self):
        return self.text_config.hidden_size

    @property
    def vocab_size(self):
        return self.text_config.vocab_size
'''

TOKENIZER_PY = '''"""Kimi's tokenizer stand-in: loadable only with trust_remote_code (Kimi ships tiktoken code)."""

from transformers import PreTrainedTokenizerFast


class KimiTokenizer(PreTrainedTokenizerFast):
    """The byte-level BPE saved alongside under a name of its own (kimi_tokenizer.json, as Kimi
    keeps tiktoken.model): only this class reads it."""

    vocab_files_names = {"kimi_file": "kimi_tokenizer.json"}

    def __init__(self, *args, kimi_file=None, **kwargs):
        if kimi_file is not None and kwargs.get("tokenizer_object") is None:
            kwargs["tokenizer_file"] = kimi_file
        super().__init__(*args, **kwargs)
'''

PROCESSING_PY = '''"""Kimi-K2.5's image/video-chunk processor, small: what vLLM's KimiK25ProcessingInfo calls."""

import math

import numpy as np
import torch
from transformers import BatchFeature
from transformers.image_processing_utils import BaseImageProcessor


class KimiK25VisionProcessor(BaseImageProcessor):
    model_input_names = ["pixel_values", "grid_thws"]

    def __init__(self, patch_size=14, merge_kernel_size=(2, 2), in_patch_limit=256,
                 num_frames_per_chunk=4, image_mean=(0.5, 0.5, 0.5), image_std=(0.5, 0.5, 0.5),
                 **kwargs):
        super().__init__(**kwargs)
        self.patch_size = patch_size
        self.merge_kernel_size = list(merge_kernel_size)
        self.in_patch_limit = in_patch_limit
        self.num_frames_per_chunk = num_frames_per_chunk
        self.image_mean = list(image_mean)
        self.image_std = list(image_std)

    @staticmethod
    def _frames(chunk):
        if chunk["type"] == "image":
            return [chunk["image"]]
        return list(chunk["video_chunk"])

    def _grid(self, image):
        """(rows, cols) of patches: the image scaled to at most in_patch_limit patches, each side
        a multiple of the merge kernel."""
        w, h = image.size
        p, (mh, mw) = self.patch_size, self.merge_kernel_size
        scale = min(1.0, math.sqrt(self.in_patch_limit / max(1.0, (w / p) * (h / p))))
        gh = max(mh, int(h * scale / p) // mh * mh)
        gw = max(mw, int(w * scale / p) // mw * mw)
        while gh * gw > self.in_patch_limit:
            if gh >= gw:
                gh -= mh
            else:
                gw -= mw
        return gh, gw

    def media_tokens_calculator(self, chunk):
        gh, gw = self._grid(self._frames(chunk)[0])
        mh, mw = self.merge_kernel_size
        return (gh // mh) * (gw // mw)  # video chunks are pooled over time: one frame's worth

    def preprocess(self, vision_chunks, return_tensors=None, **kwargs):
        pixels, grids = [], []
        p = self.patch_size
        mean = np.asarray(self.image_mean, dtype=np.float32)[:, None, None]
        std = np.asarray(self.image_std, dtype=np.float32)[:, None, None]
        for chunk in vision_chunks:
            frames = self._frames(chunk)
            gh, gw = self._grid(frames[0])
            for frame in frames:
                img = frame.convert("RGB").resize((gw * p, gh * p))
                arr = (np.asarray(img, dtype=np.float32).transpose(2, 0, 1) / 255.0 - mean) / std
                patches = arr.reshape(3, gh, p, gw, p).transpose(1, 3, 0, 2, 4)
                pixels.append(torch.from_numpy(np.ascontiguousarray(patches.reshape(-1, 3, p, p))))
            grids.append([len(frames), gh, gw])
        data = {"pixel_values": torch.cat(pixels), "grid_thws": torch.tensor(grids)}
        return BatchFeature(data=data, tensor_type=return_tensors)

    def __call__(self, vision_chunks, **kwargs):
        return self.preprocess(vision_chunks, **kwargs)
'''


def vision_names(vision: dict[str, Any], text_hidden: int) -> dict[str, tuple[int, ...]]:
    """Checkpoint name -> shape of the vision tower and projector, as vLLM 0.20.2's
    ``MoonViT3dPretrainedModel`` / ``KimiK25MultiModalProjector`` hold them (before its mapper:
    ``mm_projector.proj.0/2`` are its ``linear_1/2``)."""
    d, p, mlp = vision["hidden_size"], vision["patch_size"], vision["intermediate_size"]
    mh, mw = vision["merge_kernel_size"]
    names: dict[str, tuple[int, ...]] = {
        "vision_tower.patch_embed.proj.weight": (d, 3, p, p),
        "vision_tower.patch_embed.proj.bias": (d,),
        "vision_tower.patch_embed.pos_emb.weight": (
            vision["init_pos_emb_height"], vision["init_pos_emb_width"], d),
        "vision_tower.encoder.final_layernorm.weight": (d,),
        "vision_tower.encoder.final_layernorm.bias": (d,),
    }  # fmt: skip
    for i in range(vision["num_hidden_layers"]):
        b = f"vision_tower.encoder.blocks.{i}."
        for norm in ("norm0", "norm1"):
            names[b + norm + ".weight"] = (d,)
            names[b + norm + ".bias"] = (d,)
        names[b + "wqkv.weight"], names[b + "wqkv.bias"] = (3 * d, d), (3 * d,)
        names[b + "wo.weight"], names[b + "wo.bias"] = (d, d), (d,)
        names[b + "mlp.fc0.weight"], names[b + "mlp.fc0.bias"] = (mlp, d), (mlp,)
        names[b + "mlp.fc1.weight"], names[b + "mlp.fc1.bias"] = (d, mlp), (d,)
    merged = d * mh * mw
    names.update({
        "mm_projector.pre_norm.weight": (d,),
        "mm_projector.pre_norm.bias": (d,),
        "mm_projector.proj.0.weight": (merged, merged),
        "mm_projector.proj.0.bias": (merged,),
        "mm_projector.proj.2.weight": (text_hidden, merged),
        "mm_projector.proj.2.bias": (text_hidden,),
    })  # fmt: skip
    return names


def tokenizer(out: Path) -> Any:
    """e2e.py's byte-level BPE + chat template, Kimi's media tokens added, saved under
    ``tokenization_kimi.KimiTokenizer`` (an ``auto_map`` entry: trust_remote_code needed)."""
    sys.path.insert(0, str(HERE))
    import e2e

    fast = e2e.tokenizer(out, random.Random(0))
    fast.add_special_tokens({"additional_special_tokens": MEDIA})
    fast.save_pretrained(out)
    (out / "tokenization_kimi.py").write_text(TOKENIZER_PY)
    (out / "tokenizer.json").rename(out / "kimi_tokenizer.json")
    tc = json.loads((out / "tokenizer_config.json").read_text())
    tc["tokenizer_class"] = "KimiTokenizer"
    tc["auto_map"] = {"AutoTokenizer": [None, "tokenization_kimi.KimiTokenizer"]}
    (out / "tokenizer_config.json").write_text(json.dumps(tc, indent=2) + "\n")
    return fast


def build(
    out: str | Path,
    seed: int = 0,
    text_over: dict[str, Any] | None = None,
    vision_over: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write the checkpoint to ``out`` (replaced) and its text part to ``out/text``.

    ``text_over``/``vision_over`` change ``TEXT``/``VISION`` (the CPU test builds a smaller one)."""
    import torch
    from safetensors.torch import load_file, save_file
    from transformers import DeepseekV3Config, DeepseekV3ForCausalLM

    out = Path(out)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    fast = tokenizer(out)
    media_pad = fast.convert_tokens_to_ids("<|media_pad|>")
    ids = dict(bos_token_id=fast.bos_token_id, eos_token_id=fast.eos_token_id,
               pad_token_id=fast.pad_token_id)  # fmt: skip
    TEXT_, VISION_ = dict(TEXT, **(text_over or {})), dict(VISION, **(vision_over or {}))
    text = dict(TEXT_, vocab_size=len(fast), **ids)

    # the text part: a transformers DeepSeek-V3, seeded, saved on its own (the reference)
    torch.manual_seed(seed)
    lm = DeepseekV3ForCausalLM(DeepseekV3Config(**text)).to(torch.bfloat16)
    with torch.no_grad():  # transformers inits the router bias at 0: make it matter
        for name, t in lm.named_parameters():
            if name.endswith("e_score_correction_bias"):
                t.copy_(torch.randn_like(t) * 0.1)
    text_dir = out / "text"
    lm.save_pretrained(text_dir)
    cfg_path = text_dir / "config.json"
    saved = json.loads(cfg_path.read_text())
    saved.update(topk_method=TEXT_["topk_method"], scoring_func=TEXT_["scoring_func"])
    cfg_path.write_text(json.dumps(saved, indent=2) + "\n")
    fast.save_pretrained(
        text_dir
    )  # a plain tokenizer there (no auto_map: tokenizer_config rewritten below)
    tc = json.loads((text_dir / "tokenizer_config.json").read_text())
    tc.pop("auto_map", None)
    tc["tokenizer_class"] = "PreTrainedTokenizerFast"
    (text_dir / "tokenizer_config.json").write_text(json.dumps(tc, indent=2) + "\n")

    tensors: dict[str, Any] = {}
    for f in sorted(text_dir.glob("*.safetensors")):
        for k, v in load_file(f).items():
            tensors["language_model." + k] = v
    g = torch.Generator().manual_seed(seed + 1)
    for name, shape in vision_names(VISION_, TEXT_["hidden_size"]).items():
        if name.endswith("norm0.weight") or name.endswith("norm1.weight") or (
                "layernorm.weight" in name or "pre_norm.weight" in name):  # fmt: skip
            t = torch.ones(shape)
        elif name.endswith(".bias"):
            t = torch.zeros(shape)
        else:
            t = torch.randn(shape, generator=g) * 0.02
        tensors[name] = t.to(torch.bfloat16)
    save_file(tensors, str(out / "model.safetensors"), metadata={"format": "pt"})

    text_cfg = {k: v for k, v in saved.items() if k not in ("architectures", "dtype", "torch_dtype",
                                                             "transformers_version")}  # fmt: skip
    text_cfg.update(topk_method=TEXT_["topk_method"], scoring_func=TEXT_["scoring_func"])
    config = {
        "architectures": ["KimiK25ForConditionalGeneration"],
        "model_type": "kimi_k25",
        "auto_map": {"AutoConfig": "configuration_kimi_k25.KimiK25Config"},
        "text_config": text_cfg,
        "vision_config": dict(VISION_, mm_hidden_size=TEXT_["hidden_size"]),
        "media_placeholder_token_id": media_pad,
        "ignore_index": -100,
        "use_unified_vision_chunk": False,
        "video_placeholder": "<|kimi_k25_video_placeholder|>",
        "dtype": "bfloat16",
        "tie_word_embeddings": False,
        **ids,
    }
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    (out / "configuration_kimi_k25.py").write_text(CONFIG_PY)
    (out / "kimi_k25_vision_processing.py").write_text(PROCESSING_PY)
    # vLLM 0.26 builds its own fused processor from `media_proc_cfg` (kimi_k25_vision_fused.py:177-227)
    media = {k: v for k, v in PROCESSOR.items() if k != "num_frames_per_chunk"}
    media.update(patch_limit_on_one_side=512, fixed_output_tokens=None,
                 in_patch_limit_each_frame=PROCESSOR["in_patch_limit"],
                 in_patch_limit_video=PROCESSOR["in_patch_limit"],
                 temporal_merge_kernel_size=PROCESSOR["num_frames_per_chunk"])  # fmt: skip
    pre = dict(PROCESSOR, media_proc_cfg=media, image_processor_type="KimiK25VisionProcessor",
               auto_map={"AutoImageProcessor": "kimi_k25_vision_processing.KimiK25VisionProcessor"})  # fmt: skip
    (out / "preprocessor_config.json").write_text(json.dumps(pre, indent=2) + "\n")
    return {
        "dir": str(out),
        "text_dir": str(text_dir),
        "vocab_size": len(fast),
        "media_pad": media_pad,
        "params_text": sum(p.numel() for p in lm.parameters()),
        "tensors": len(tensors),
        "bytes": (out / "model.safetensors").stat().st_size,
    }


# -- the GPU bench -------------------------------------------------------------------------------


NEEDS = {  # what vLLM's Kimi-K2.5 path imports beyond what the dense-Llama payload carries
    "compressed_tensors": "compressed-tensors==0.15.0.1 (vLLM's kimi_k25.py imports its "
    "compressed-tensors quantization module at the top; pure Python)",
    "torchvision": "torchvision==0.26.0 (PyPI's cp312 manylinux_2_28 wheel is the cu130 build; "
    "transformers 5.17's AutoImageProcessor, which vLLM's Kimi processor calls, "
    "needs it)",
    "PIL": "pillow (the dummy images vLLM profiles the vision tower with)",
}


def preflight(wheels: Path) -> list[str]:
    """The imports above, in this Python; a missing one is installed (--no-deps) from a wheel in
    ``wheels`` if one is there. Returns what is still missing."""
    import importlib
    import subprocess

    missing = []
    for mod, what in NEEDS.items():
        try:
            importlib.import_module(mod)
            continue
        except ImportError:
            pass
        stem = {"compressed_tensors": "compressed_tensors-", "torchvision": "torchvision-",
                "PIL": "pillow-"}[mod]  # fmt: skip
        found = sorted(wheels.glob(stem + "*.whl")) if wheels.is_dir() else []
        if found:
            subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                            "--disable-pip-version-check", str(found[-1])], check=False)  # fmt: skip
            importlib.invalidate_caches()
            try:
                importlib.import_module(mod)
                continue
            except ImportError:
                pass
        missing.append(f"{mod}: {what}")
    return missing


def run_e2e(phase: str = "all", work: str | Path | None = None, budget_s: float = 540) -> int:
    """On the tiny Kimi-K2.5, through harness on the ``local`` target with the shipped
    pipeline.toml and the whole series: phase ``extract`` = build, prepare, extract (verified
    against transformers' DeepSeek-V3 forward: every sample, every captured layer), extract
    ``--smoke`` (verified by the alone-vs-batch check); phase ``train`` = text-view, vocab,
    train on that extraction; ``all`` = both. Call it on the GPU machine after ``bash bench/gpu/stage.sh
    --install`` with the series applied (``harness apply-patches -t local``; verify_bench's
    phases leave it applied), one phase per device call:

        python3 bench/gpu/kimi.py --e2e extract    # ~5 min: two vLLM starts + the checks
        python3 bench/gpu/kimi.py --e2e train      # ~4 min
        # results: $OUT/verify-results.txt (appended to /root/vb/results.txt), logs in
        # $OUT/verify-logs.tar.gz
        # over SSH, as the seed drives it: VB_TARGET=gpu with HARNESS_HOSTS=STATE/hosts.toml
        # from `HOST_WORKDIR=/root/vb bash bench/gpu/ssh/up.sh DEBS STATE`

    First it checks the imports vLLM's Kimi path needs beyond the dense-Llama payload
    (``NEEDS``; wheels in ``$KIMI_WHEELS``, default /root/pack/kimi-wheels, are installed with
    --no-deps if one is missing) and stops, naming them, if any is still missing.

    Reuses verify_bench's helpers (``case`` for the two extracts, its ``sets``: seq_length 2048,
    batch 8, 64 samples, verify_samples=0, verify_layers=all); the model and data under
    ``/root/vb`` (``kimi``, ``kimi-chat.jsonl``). Phase ``train``: vocab straight on the Kimi
    folder first, which must fail in speculators 0.3.0's ``build_vocab_mapping.py``
    (``AutoConfig.from_pretrained(model).vocab_size`` without trust_remote_code: transformers
    5.17's own ``Kimi_K25Config`` has none) with harness's failure summary pointing at the text
    view; then the pipeline's ``text-view`` step (the text model's config and embeddings,
    checked under training's transformers 4.57), and vocab and train with ``--set
    verifier={text_view}``, each verified. (``scripts/train.py`` reads the verifier's top-level
    ``hidden_size``/... without remote code too, and ``Eagle3`` loads
    ``model.embed_tokens.weight`` / ``lm_head.weight`` by name, which Kimi keeps under
    ``language_model.``: the view serves all three. scripts/ is not in speculators' wheel, so
    the series cannot patch them.)
    """
    import os
    import time

    os.environ.setdefault("E2E_WORK", str(work or "/root/vb"))
    os.environ.setdefault("E2E_LOGS", "/root/vb-logs")
    sys.path.insert(0, str(HERE))
    import verify_bench as vb

    vb.BUDGET = budget_s
    vb.T0 = time.monotonic()
    W = vb.WORK
    W.mkdir(parents=True, exist_ok=True)
    vb.e2e.LOGS.mkdir(parents=True, exist_ok=True)
    missing = preflight(Path(os.environ.get("KIMI_WHEELS", "/root/pack/kimi-wheels")))
    if missing:
        for m in missing:
            vb.say(f"kimi: MISSING {m}")
        return 3
    pipe = ["-t", vb.TARGET, "--pipeline", str(vb.REPO / "pipeline.toml"),
            "--patches", str(vb.REPO / "patches")]  # fmt: skip
    if phase in ("extract", "all"):
        t0 = time.perf_counter()
        info = build(W / "kimi")
        vb.say(f"built kimi: {info['params_text'] / 1e6:.1f} M text params, {info['tensors']} tensors, "
               f"{info['bytes'] / 1e6:.0f} MB, vocab {info['vocab_size']} ({time.perf_counter() - t0:.1f} s)")  # fmt: skip
        vb.build_chat(W / "kimi-chat.jsonl", 64, 8, 120, seed=3)
        vb.say(
            "== Kimi-K2.5-shaped (KimiK25ForConditionalGeneration around a DeepSeek-V3), whole series"
        )
        r = vb.harness("run", "prepare", *pipe, *vb.sets("kimi", "kimi-chat", "kimi-extract", 8, 64),
                       name="kimi prepare", timeout=240)  # fmt: skip
        vb.e2e.keep_log("prepare", "kimi-prepare")
        got = vb.newest("prepare") or {}
        vb.say(
            f"  {'OK' if got.get('state') == 'succeeded' else 'BAD'} kimi prepare: {got.get('label')} -- harness exit {r.code}"
        )
        vb.case("kimi extract", "kimi", "kimi-chat", 8, "verified")
        vb.case("kimi extract smoke", "kimi", "kimi-chat", 8, "verified", samples=8, smoke=True)
    if phase in ("train", "all"):
        # vb.case("kimi extract") wrote into data/kimi-extract: vocab and train read it
        on_kimi = vb.sets("kimi", "kimi-chat", "kimi-extract", 8, 64)
        view = ["--set", f"text_view={W / 'kimi-text-view'}"]

        # 1. vocab read straight from the Kimi folder fails in speculators' script; harness's
        #    failure summary must send the user to the text view
        r = vb.harness("run", "vocab", *pipe, *on_kimi, name="kimi vocab on the Kimi folder",
                       timeout=120)  # fmt: skip
        vb.e2e.keep_log("vocab", "kimi-vocab-no-view")
        said = r.out + r.err
        hinted = r.code != 0 and "harness run text-view" in said and "text_config" in said
        vb.say(f"  {'OK' if hinted else 'BAD'} kimi vocab without the view: exit {r.code}, "
               f"the summary {'points at' if hinted else 'does NOT point at'} text-view")  # fmt: skip
        # 2. the view, checked under training's transformers; 3. vocab and train read it
        r = vb.harness("run", "text-view", *pipe, *on_kimi, *view, name="kimi text-view",
                       timeout=180)  # fmt: skip
        vb.e2e.keep_log("text-view", "kimi-text-view")
        if vb.verified("text-view", "kimi text-view", r, tail=True):
            for step in ("vocab", "train"):
                if vb.left() < 60:
                    vb.say(f"kimi {step}: NOT RUN (budget)")
                    break
                r = vb.harness("run", step, *pipe, *on_kimi, *view, "--set", "verifier={text_view}",
                               name=f"kimi {step} on its text view",
                               timeout=max(60, vb.left() - 20))  # fmt: skip
                vb.e2e.keep_log(step, f"kimi-{step}-view")
                if not vb.verified(step, f"kimi {step} on its text view", r, tail=True):
                    break
            ckpts = sorted((W / "checkpoints" / "eagle3").glob("*/config.json"))
            if ckpts:
                cfg = json.loads(ckpts[-1].read_text())
                ver = (cfg.get("speculators_config") or {}).get("verifier") or {}
                layer = cfg.get("transformer_layer_config") or {}
                vb.say(f"  draft {ckpts[-1].parent.name}: verifier {ver.get('name_or_path')}, "
                       f"hidden {layer.get('hidden_size')}, vocab {layer.get('vocab_size')}, "
                       f"draft vocab {cfg.get('draft_vocab_size')}")  # fmt: skip
    vb.say(f"kimi e2e ({phase}) done in {time.monotonic() - vb.T0:.0f} s")
    vb.subprocess.run(["tar", "-czf", str(vb.OUT / "verify-logs.tar.gz"), "-C", str(vb.e2e.LOGS), "."],
                      check=False)  # fmt: skip
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--e2e"]:
        return run_e2e(argv[1] if len(argv) > 1 else "all")
    if len(argv) != 1:
        print(__doc__.split("\n")[0] + "\nusage: kimi.py OUT_DIR | kimi.py --e2e [extract|train|all]",
              file=sys.stderr)  # fmt: skip
        return 2
    info = build(argv[0])
    print(json.dumps(info))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
