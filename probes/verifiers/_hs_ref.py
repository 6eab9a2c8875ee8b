"""The reference a captured layer is compared with: transformers' forward pass of the same
model and token ids, cut after the last decoder layer the check needs, batched.

What a layer id means is one function, :func:`capture_source`: ``output`` (speculators 0.3.0:
the output of decoder layer k, a hook on block k -- the residual stream, which is what its
worker captures: ``hidden_states + residual``) or ``input`` (vLLM's aux hidden states: the
residual stream entering layer k, i.e. the output of layer k-1; k == 0 the embeddings; k ==
num_layers the stream after the last layer, taken before the final norm).

A multimodal wrapper (Kimi-K2.5: ``KimiK25ForConditionalGeneration``, a vision tower around a
DeepSeek-V3 whose weights the checkpoint keeps under ``language_model.``) is checked on its
text path: transformers' model for ``text_config``, cut there, weights read under the prefix.
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path
from typing import Any

# where a multimodal wrapper keeps its decoder's causal LM in the checkpoint: Kimi-K2.5 saves
# ``language_model.model.layers.N...`` and ``language_model.lm_head.weight`` around a DeepSeek-V3
WRAPPER_PREFIXES = ("language_model.",)


def checkpoint_files(model: str) -> dict[str, Any]:
    """Tensor name -> the safetensors file holding it, of a local checkpoint (its index, else
    its safetensors files' headers); empty when it has neither. text_view.py reads it too."""
    folder = Path(model)
    index = folder / "model.safetensors.index.json"
    if index.is_file():
        return dict(json.loads(index.read_text()).get("weight_map") or {})
    files = {}
    for f in sorted(folder.glob("*.safetensors")):
        from safetensors import safe_open

        with safe_open(str(f), framework="pt") as h:
            files.update(dict.fromkeys(h.keys(), f.name))
    return files


def decoder_prefix(model: str, cfg: Any) -> str:
    """The prefix of a wrapped decoder's weights ("" when the checkpoint is the causal LM).

    A wrapper (a config with ``text_config`` whose checkpoint keeps ``PREFIX + model.layers.*``)
    is checked against the text model alone: transformers' class for ``text_config`` (Kimi-K2.5:
    DeepSeek-V3), its weights read under the prefix -- the text path is what was extracted.
    """
    if getattr(cfg, "text_config", None) is None or not Path(model).is_dir():
        return ""
    names = checkpoint_files(model)
    for prefix in WRAPPER_PREFIXES:
        if any(n.startswith(prefix + "model.layers.") for n in names):
            return prefix
    return ""


def cut_layers(text: Any, loaded: int) -> None:
    """``text`` (a decoder config) says ``loaded`` layers; per-layer lists cut to match. What
    depends on a layer's index stays as it is (``first_k_dense_replace``: the first k layers are
    dense, the rest MoE -- the loaded layers keep the checkpoint's kinds, dense or MoE)."""
    text.num_hidden_layers = loaded
    for name in ("layer_types", "mlp_layer_types"):
        value = getattr(text, name, None)
        if isinstance(value, (list, tuple)) and len(value) > loaded:
            setattr(text, name, list(value)[:loaded])


def reference_model(
    model: str, upto: int, device: str, torch: Any, dtype: Any = None
) -> tuple[Any, int, str]:
    """The checkpoint's decoder cut after layer ``upto``: only what the check needs loads.

    Returns (model, layers loaded, what it is)."""
    from transformers import AutoConfig, AutoModelForCausalLM

    dtype = dtype or torch.bfloat16
    cfg = AutoConfig.from_pretrained(model, trust_remote_code=True)
    text = getattr(cfg, "text_config", None) or cfg
    loaded = min(upto + 1, text.num_hidden_layers)
    cut_layers(text, loaded)
    prefix = decoder_prefix(model, cfg)
    if prefix:
        m, info = AutoModelForCausalLM.from_pretrained(
            model, config=text, dtype=dtype, output_loading_info=True,
            key_mapping={"^" + re.escape(prefix): ""},
        )  # fmt: skip
        if info.get("missing_keys"):
            raise SystemExit(f"{model}: {type(m).__name__} under '{prefix}' lacks weights: "
                             f"{sorted(info['missing_keys'])[:8]}")  # fmt: skip
        what = f"{type(m).__name__} of {type(cfg).__name__}.text_config, weights under '{prefix}'"
    else:
        m = AutoModelForCausalLM.from_pretrained(model, config=cfg, dtype=dtype,
                                                 trust_remote_code=True)  # fmt: skip
        what = type(m).__name__
    return m.to(device).eval(), loaded, what


def decoder_layers(model: Any) -> Any:
    for path in (("model", "layers"), ("model", "language_model", "layers"),
                 ("language_model", "model", "layers")):  # fmt: skip
        obj = model
        for attr in path:
            obj = getattr(obj, attr, None)
        if obj is not None:
            return obj
    raise SystemExit(f"cannot find decoder layers in {type(model).__name__}")


def model_depth(model: str) -> int:
    """How many decoder layers the checkpoint's (text) model has."""
    from transformers import AutoConfig

    cfg = AutoConfig.from_pretrained(model, trust_remote_code=True)
    return int((getattr(cfg, "text_config", None) or cfg).num_hidden_layers)


def capture_source(capture: str, layer_id: int, num_layers: int) -> int:
    """Which decoder block's output holds layer id ``layer_id``'s state; -1: the embeddings.

    ``output`` (speculators 0.3.0's worker: a hook on block k): block k. ``input`` (vLLM's aux
    hidden states: the residual stream entering layer k): block k-1, so 0 is the embeddings
    and ``num_layers`` the last block's output -- taken before the final norm (a block's
    output never holds the norm). The one place a layer id's meaning is decided."""
    if capture == "output":
        return layer_id
    if capture == "input":
        return min(layer_id, num_layers) - 1
    raise SystemExit(f"--capture {capture}: output or input")


def valid_ids(capture: str, num_layers: int) -> range:
    return range(num_layers) if capture == "output" else range(num_layers + 1)


class _Enough(Exception):
    """Raised by the hook on the last block a batch needs: the forward stops there."""


def moe_kind(model: str) -> str:
    """ "8 routed experts" when the model routes tokens to experts ("" when dense): a token's
    experts may flip between two bf16 implementations (``_hs_floor.py`` admits that)."""
    from transformers import AutoConfig

    cfg = AutoConfig.from_pretrained(model, trust_remote_code=True)
    text = getattr(cfg, "text_config", None) or cfg
    for name in ("n_routed_experts", "num_local_experts", "num_experts", "moe_num_experts"):
        n = getattr(text, name, None)
        if isinstance(n, int) and n > 1:
            return f"{n} routed experts"
    return ""


class Reference:
    """transformers' forward pass, cut after the highest block needed, hooks on the blocks
    whose outputs are the compared layer ids and their neighbours at hand.

    ``compared``: the layer ids compared; ``extra``: load one layer id more above the
    highest compared one when the model has it (``--layers all``: every compared layer then
    has both neighbours for the layer-identity test)."""

    def __init__(self, args: Any, compared: list[int], extra: bool, torch: Any) -> None:
        self.torch, self.device = torch, args.device
        depth = model_depth(args.model)
        ok = valid_ids(args.capture, depth)
        src = {k: capture_source(args.capture, k, depth) for k in ok}
        bad = [k for k in compared if k not in ok]
        if bad:
            raise SystemExit(f"layer ids {bad} are outside the model's {depth} layers "
                             f"(--capture {args.capture}: {ok.start}-{ok.stop - 1})")  # fmt: skip
        want = set(compared) | ({max(compared) + 1} & set(ok) if extra else set())
        upto = max(0, max(src[k] for k in want))
        dtype = getattr(torch, args.dtype)
        self.model, loaded, kind = reference_model(args.model, upto, args.device, torch, dtype)
        near = {j for k in compared for j in (k - 1, k, k + 1)}
        self.at_hand = sorted(j for j in near if j in src and src[j] <= loaded - 1)
        self.src = {j: src[j] for j in self.at_hand}
        self.grabbed: dict[int, Any] = {}
        self.stop: int | None = None
        self.moe = moe_kind(args.model)
        blocks = decoder_layers(self.model)
        for b in sorted(set(self.src.values())):
            module = self.model.get_input_embeddings() if b < 0 else blocks[b]
            module.register_forward_hook(self._hook(b))
        self.what = f"transformers forward ({kind}), decoder layers 0-{loaded - 1} loaded"

    def _hook(self, b: int) -> Any:
        def fn(_m: Any, _inp: Any, out: Any) -> None:
            self.grabbed[b] = (out[0] if isinstance(out, tuple) else out).detach()
            if self.stop is not None and b >= self.stop:
                raise _Enough  # the layers above are not needed for this batch

        return fn

    def states(self, samples: list[Any], upto: int | None = None) -> list[dict[int, Any]]:
        """Per sample, layer id -> reference states [n, hidden] (one right-padded batch;
        causal attention keeps a real row from seeing the pads after it). ``upto``: only the
        layer ids at hand up to it (and its neighbour above): the forward stops there."""
        torch = self.torch
        want = [j for j in self.at_hand if upto is None or j <= upto + 1]
        self.stop = max(self.src[j] for j in want) if upto is not None else None
        lens = [int(s.ids.shape[0]) for s in samples]
        ids = torch.zeros((len(samples), max(lens)), dtype=torch.long)
        mask = torch.zeros_like(ids)
        for b, s in enumerate(samples):
            ids[b, : lens[b]] = s.ids
            mask[b, : lens[b]] = 1
        self.grabbed.clear()
        with torch.no_grad(), contextlib.suppress(_Enough):
            self.model(input_ids=ids.to(self.device), attention_mask=mask.to(self.device))
        return [{j: self.grabbed[self.src[j]][b, : lens[b]] for j in want}
                for b in range(len(samples))]  # fmt: skip


class Alone:
    """Smoke (random weights, no reference): the same samples extracted again, one request
    per batch, by the same generator under the same start-up hook."""

    def __init__(self, args: Any, configured: list[int], torch: Any) -> None:
        from speculators.data_generation.vllm_hidden_states_generator import (
            VllmHiddenStatesGenerator,
        )

        self.configured, self.device = configured, "cpu"
        self.gen = VllmHiddenStatesGenerator(
            args.model, layer_ids=configured, max_model_len=args.seq_length,
            gpu_memory_utilization=args.gpu_memory_utilization, tensor_parallel_size=args.tp,
        )  # fmt: skip
        self.at_hand = list(configured)
        self.what = "the same samples extracted alone (smoke: random weights)"
        self.moe = ""

    def states(self, samples: list[Any], upto: int | None = None) -> list[dict[int, Any]]:
        out = []
        for s in samples:
            (alone,) = self.gen.generate([s.ids.tolist()])
            out.append(dict(zip(self.configured, alone["hidden_states"], strict=True)))
        return out
