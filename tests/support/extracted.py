"""Extracted hidden states for the extraction check's tests, made from transformers' own hooks.

Run by the verify-cpu venv's Python (``pipvenvs.verify_cpu_venv``)::

    python extracted.py OUT

builds under OUT a tiny random Llama (``model/``), its prepared dataset (``prepared/``,
``save_to_disk`` with an ``input_ids`` column, as the prepare step saves it) and folders of
"extracted" files: ``clean/`` (speculators 0.3.0's ``data_{i}.pt``: the reference states of
layers 1, 2, 4 -- block outputs -- plus relative noise 1e-3, stored in bf16 as vLLM writes
them), ``v090/`` (speculators 0.9.0's ``hs_{i}.safetensors``: vLLM's aux hidden states, the
stream *entering* layers 2, 4 and 6 -- 6 being the last block's output), ``moe/`` (a tiny
DeepSeek-V3 and its files, one sample shifted), ``faulty/``, a copy of ``clean/`` with one
fault planted per sample (``PLANTED``; two samples drifted within the hard bound,
``DRIFTED``), and ``v090_shifted/`` (sample 5's rows shifted). Prints a summary.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import torch
from transformers import LlamaConfig, LlamaForCausalLM

N = 70  # a 64-sample spread over 70 files misses 6 of them
LAYERS = [1, 2, 4]
SAME_LENGTH = (10, 11)  # two samples of one length: their states can be swapped


def spread(total: int, want: int) -> list[int]:
    return sorted({round(i * (total - 1) / (want - 1)) for i in range(want)})


#: a sample a 64-sample spread skips (6 and 17 are the first two)
LATE = [i for i in range(N) if i not in spread(N, 64)][2]


def noisy(x: torch.Tensor, rel: float, gen: torch.Generator) -> torch.Tensor:
    """``x`` plus Gaussian noise of relative Frobenius size ``rel``."""
    noise = torch.randn(x.shape, generator=gen)
    return x + noise * (rel * x.norm() / noise.norm())


def main(out: Path) -> dict:
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    cfg = LlamaConfig(vocab_size=512, hidden_size=64, intermediate_size=128,
                      num_hidden_layers=6, num_attention_heads=4, num_key_value_heads=2,
                      max_position_embeddings=256)  # fmt: skip
    model = LlamaForCausalLM(cfg).eval()
    model.save_pretrained(out / "model")
    lengths = [int(x) for x in torch.randint(6, 48, (N,), generator=gen)]
    lengths[SAME_LENGTH[1]] = lengths[SAME_LENGTH[0]]
    samples = [torch.randint(3, 512, (n,), generator=gen) for n in lengths]
    from datasets import Dataset

    Dataset.from_dict({"input_ids": [s.tolist() for s in samples]}).save_to_disk(out / "prepared")
    grabbed: dict[int, torch.Tensor] = {}
    for k, block in enumerate(model.model.layers):
        block.register_forward_hook(
            lambda m, i, o, k=k: grabbed.__setitem__(k, (o[0] if isinstance(o, tuple) else o)[0])
        )
    refs = []
    with torch.no_grad():
        for s in samples:
            model(input_ids=s[None])
            refs.append({k: v.clone() for k, v in grabbed.items()})
    clean = out / "clean"
    clean.mkdir()
    (clean / "data_config.json").write_text(json.dumps({"hidden_states": {"layer_ids": LAYERS}}))
    for i, s in enumerate(samples):
        states = [noisy(refs[i][k], 1e-3, gen).to(torch.bfloat16) for k in LAYERS]
        torch.save({"input_ids": s, "hidden_states": states}, clean / f"data_{i}.pt")
    v090 = out / "v090"
    v090.mkdir()
    from safetensors.torch import save_file

    for i, s in enumerate(samples):  # layer id k: the stream entering layer k = block k-1's output
        hs = torch.stack([noisy(refs[i][k - 1], 1e-3, gen) for k in (2, 4, 6)], dim=1)
        save_file({"token_ids": s, "hidden_states": hs.to(torch.bfloat16).contiguous()},
                  str(v090 / f"hs_{i}.safetensors"))  # fmt: skip
    shutil.copytree(clean, out / "faulty")
    plant(out / "faulty", refs, gen)
    shutil.copytree(v090, out / "v090_shifted")
    d = out / "v090_shifted" / "hs_5.safetensors"
    from safetensors.torch import load_file

    t = load_file(str(d))
    save_file({"token_ids": t["token_ids"], "hidden_states": torch.cat(
        [t["hidden_states"][1:], t["hidden_states"][-1:]]).contiguous()}, str(d))  # fmt: skip
    fp8(v090, out / "v090_fp8")
    moe(out / "moe", gen)
    planted = {str(i): list(v) for i, v in PLANTED.items()}
    return {"n": N, "late": LATE, "layers": LAYERS, "planted": planted, "drifted": DRIFTED}


def fp8(src: Path, out: Path) -> None:
    """``v090_fp8/``: v090's files as hs-connectors' FP8HiddenStatesConnector stores them --
    float8_e4m3fn codes and ``hidden_states_scales`` [n, 1, 1], one scale per token over all
    layers (its absolute maximum / the format's largest value). Planted: hs_3's scales doubled
    (a file whose codes and scales do not belong together)."""
    from safetensors.torch import load_file, save_file

    out.mkdir()
    top = torch.finfo(torch.float8_e4m3fn).max
    for path in sorted(src.glob("hs_*.safetensors")):
        t = load_file(str(path))
        x = t["hidden_states"].float()
        scale = (x.abs().amax(dim=(1, 2), keepdim=True) / top).clamp(min=1e-12)
        if path.name == "hs_3.safetensors":
            codes, scale = (x / scale).to(torch.float8_e4m3fn), scale * 2
        else:
            codes = (x / scale).to(torch.float8_e4m3fn)
        save_file({"token_ids": t["token_ids"], "hidden_states": codes.contiguous(),
                   "hidden_states_scales": scale.contiguous()}, str(out / path.name))  # fmt: skip


def moe(out: Path, gen: torch.Generator) -> None:
    """A tiny DeepSeek-V3 (MLA, a dense first layer, then routed + shared experts): ``model/``
    and ``data/``, 12 samples of layers 1, 2, 3 (block outputs, noise 1e-3, bf16), sample 2's
    rows shifted by one."""
    from transformers import DeepseekV3Config, DeepseekV3ForCausalLM

    torch.manual_seed(0)
    cfg = DeepseekV3Config(vocab_size=512, hidden_size=64, intermediate_size=128,
                           moe_intermediate_size=32, num_hidden_layers=4, first_k_dense_replace=1,
                           num_attention_heads=2, num_key_value_heads=2, q_lora_rank=32,
                           kv_lora_rank=32, qk_rope_head_dim=16, qk_nope_head_dim=16,
                           v_head_dim=16, n_routed_experts=4, num_experts_per_tok=2, n_group=1,
                           topk_group=1, max_position_embeddings=256)  # fmt: skip
    model = DeepseekV3ForCausalLM(cfg).eval()
    model.save_pretrained(out / "model")
    grabbed: dict[int, torch.Tensor] = {}
    for k, block in enumerate(model.model.layers):
        block.register_forward_hook(
            lambda m, i, o, k=k: grabbed.__setitem__(k, (o[0] if isinstance(o, tuple) else o)[0])
        )
    data = out / "data"
    data.mkdir()
    (data / "data_config.json").write_text(json.dumps({"layer_ids": [1, 2, 3]}))
    for i in range(12):
        ids = torch.randint(3, 512, (int(torch.randint(6, 40, (1,), generator=gen)),),
                            generator=gen)  # fmt: skip
        with torch.no_grad():
            model(input_ids=ids[None])
        states = [noisy(grabbed[k], 1e-3, gen).to(torch.bfloat16) for k in (1, 2, 3)]
        if i == 2:
            states = [torch.cat([h[1:], h[-1:]]) for h in states]
        torch.save({"input_ids": ids, "hidden_states": states}, data / f"data_{i}.pt")


def _edit(folder: Path, i: int, fn) -> None:  # type: ignore[no-untyped-def]
    d = torch.load(folder / f"data_{i}.pt", weights_only=True)
    fn(d)
    torch.save(d, folder / f"data_{i}.pt")


def _shift(d: dict) -> None:  # rows moved up by one: row t holds row t+1's states
    d["hidden_states"] = [torch.cat([h[1:], h[-1:]]) for h in d["hidden_states"]]


def _swap_files(folder: Path, a: int, b: int) -> None:
    (folder / f"data_{a}.pt").rename(folder / "tmp.pt")
    (folder / f"data_{b}.pt").rename(folder / f"data_{a}.pt")
    (folder / "tmp.pt").rename(folder / f"data_{b}.pt")


def _swap_states(folder: Path) -> None:
    a, b = (torch.load(folder / f"data_{i}.pt", weights_only=True) for i in SAME_LENGTH)
    a["hidden_states"], b["hidden_states"] = b["hidden_states"], a["hidden_states"]
    torch.save(a, folder / f"data_{SAME_LENGTH[0]}.pt")
    torch.save(b, folder / f"data_{SAME_LENGTH[1]}.pt")


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _other_layer(folder: Path, refs: list, gen: torch.Generator) -> None:
    # layer 4's states are in fact layer 3's (not captured): near, not bit-identical
    _edit(folder, 9, lambda d: d["hidden_states"].__setitem__(
        2, noisy(refs[9][3], 1e-3, gen).to(torch.bfloat16)))  # fmt: skip


def _set(i: int, layer: int, row: int, value: float):  # type: ignore[no-untyped-def]
    def fn(d: dict) -> None:
        d["hidden_states"][layer][row] = value

    return fn


def _drift(folder: Path, refs: list, gen: torch.Generator) -> None:
    # layers 1 of samples 14 and 15 off by ~0.08 and ~0.10: above 0.05, under 0.25, aligned
    for i, rel in ((14, 0.08), (15, 0.10)):
        _edit(folder, i, lambda d, i=i, rel=rel: d["hidden_states"].__setitem__(
            0, noisy(refs[i][1], rel, gen).to(torch.bfloat16)))  # fmt: skip


#: sample index -> (the check that must name it, what was planted); in one folder, ``faulty/``
PLANTED = {
    3: ("ids", "files data_3 and data_4 swapped"),
    4: ("ids", "files data_3 and data_4 swapped"),
    5: ("position", "rows shifted by one"),
    6: ("lengths", "file cut in half"),
    7: ("layers", "layer 4's states a copy of layer 2's"),
    8: ("layers", "the last layer dropped"),
    9: ("layer", "layer 4's states are layer 3's"),
    10: ("values", "states of sample 11"),
    11: ("values", "states of sample 10"),
    12: ("zeros", "row 3 of layer 1 zeroed"),
    13: ("non-finite", "row 2 of layer 1 NaN"),
    LATE: ("position", "rows shifted by one, in a sample a 64-spread skips"),
}
DRIFTED = (14, 15)


def plant(folder: Path, refs: list, gen: torch.Generator) -> None:
    _swap_files(folder, 3, 4)
    _edit(folder, 5, _shift)
    _truncate(folder / "data_6.pt")
    _edit(folder, 7, lambda d: d["hidden_states"].__setitem__(2, d["hidden_states"][1].clone()))
    _edit(folder, 8, lambda d: d["hidden_states"].pop())
    _other_layer(folder, refs, gen)
    _swap_states(folder)
    _edit(folder, 12, _set(12, 0, 3, 0.0))
    _edit(folder, 13, _set(13, 0, 2, float("nan")))
    _drift(folder, refs, gen)
    _edit(folder, LATE, _shift)


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]))))
