"""A clean extracted folder for the planted-fault study of the extraction check (issue 41).

Run by the verify-cpu venv's Python::

    python faultdata.py OUT

builds under OUT, in the shape the H100 measured (speculators 0.9.0's ``hs_{i}.safetensors``,
vLLM's meaning of a layer id -- the stream entering layer k -- ids [2, 4, 5, 8] of 8 layers, 8
being the last block's output before the final norm):

* ``model/``: a tiny random Llama whose RMSNorm weights are not all ones (a trained model's are
  not: a state written after the final norm must differ from one before it);
* ``prepared/``: its prepared dataset (``save_to_disk``, ``input_ids``);
* ``clean/``: each sample's states from a float32 forward, stored in bf16 -- against the check's
  bf16 reference forward the noise is the two precisions' (what vLLM and transformers differ by);
* ``other/``: the same ids through another random Llama of the same shape (another model);
* ``moe/``: a tiny DeepSeek-V3 (routed experts) with its ``model/``, ``prepared/``, ``clean/``
  ([1, 2, 4] of 4 layers): bf16 against float32 flips some tokens' experts, as on the H200.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import torch

N = 48
LAYERS = [2, 4, 5, 8]


def realistic_norms(model: Any, gen: torch.Generator) -> None:
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(0.5 + torch.rand(p.shape, generator=gen) * 1.5)


def block_inputs(model: Any, ids: torch.Tensor, wanted: list[int]) -> torch.Tensor:
    """[n, len(wanted), hidden]: the stream entering layer k (block k-1's output; 0: the
    embeddings), float32."""
    got: dict[int, torch.Tensor] = {}
    hooks = [model.get_input_embeddings().register_forward_hook(
        lambda m, i, o: got.__setitem__(0, o[0]))]  # fmt: skip
    for k, block in enumerate(model.model.layers):
        hooks.append(block.register_forward_hook(
            lambda m, i, o, k=k: got.__setitem__(k + 1, (o[0] if isinstance(o, tuple) else o)[0])
        ))  # fmt: skip
    with torch.no_grad():
        model(input_ids=ids[None])
    for h in hooks:
        h.remove()
    return torch.stack([got[k] for k in wanted], dim=1)


def write(folder: Path, samples: list[torch.Tensor], model: Any, wanted: list[int]) -> None:
    from safetensors.torch import save_file

    folder.mkdir(parents=True)
    for i, s in enumerate(samples):
        hs = block_inputs(model, s, wanted).to(torch.bfloat16).contiguous()
        save_file({"token_ids": s, "hidden_states": hs}, str(folder / f"hs_{i}.safetensors"))


def dataset(out: Path, gen: torch.Generator, n: int, vocab: int) -> list[torch.Tensor]:
    from datasets import Dataset

    lengths = [int(x) for x in torch.randint(8, 64, (n,), generator=gen)]
    lengths[1] = lengths[0]  # two samples of one length: their states can be mixed up
    samples = [torch.randint(3, vocab, (k,), generator=gen) for k in lengths]
    Dataset.from_dict({"input_ids": [s.tolist() for s in samples]}).save_to_disk(out / "prepared")
    return samples


def llama(seed: int, gen: torch.Generator) -> Any:
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=512, hidden_size=64, intermediate_size=128,
                      num_hidden_layers=8, num_attention_heads=4, num_key_value_heads=2,
                      max_position_embeddings=256)  # fmt: skip
    m = LlamaForCausalLM(cfg).eval()
    realistic_norms(m, gen)
    return m


def moe(out: Path, gen: torch.Generator) -> None:
    from transformers import DeepseekV3Config, DeepseekV3ForCausalLM

    torch.manual_seed(3)
    cfg = DeepseekV3Config(vocab_size=512, hidden_size=64, intermediate_size=128,
                           moe_intermediate_size=32, num_hidden_layers=4, first_k_dense_replace=1,
                           num_attention_heads=2, num_key_value_heads=2, q_lora_rank=32,
                           kv_lora_rank=32, qk_rope_head_dim=16, qk_nope_head_dim=16,
                           v_head_dim=16, n_routed_experts=8, num_experts_per_tok=2, n_group=1,
                           topk_group=1, max_position_embeddings=256)  # fmt: skip
    m = DeepseekV3ForCausalLM(cfg).eval()
    realistic_norms(m, gen)
    m.save_pretrained(out / "model")
    samples = dataset(out, gen, 24, 512)
    write(out / "clean", samples, m, [1, 2, 4])


def main(out: Path) -> dict[str, Any]:
    gen = torch.Generator().manual_seed(7)
    model = llama(0, gen)
    model.save_pretrained(out / "model")
    samples = dataset(out, gen, N, 512)
    write(out / "clean", samples, model, LAYERS)
    write(out / "other", samples, llama(1, gen), LAYERS)
    moe(out / "moe", gen)
    return {"n": N, "layers": LAYERS, "lengths": [len(s) for s in samples]}


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]))))
