"""Check extracted hidden states (speculators' ``data_{i}.pt`` files) on the target's GPU.

Run by the supervisor after ``extract`` exits 0 (``verify`` in pipeline.toml), with the step's
environment; prints one ``HARNESS_VERIFY {json}`` line and exits 0 (every checked sample
right) or 1 (some wrong). Two checks:

* **against a reference** (real weights): a transformers forward pass of the same model and
  token ids, hooks on the captured decoder layers' outputs (the residual stream, which is what
  the worker captures: ``hidden_states + residual``). The state after layer k depends only on
  the embeddings and layers <= k, and a wrong alignment shows at every captured layer, so by
  default only the layers up to the *lowest* captured one are loaded (``--layers lowest``):
  the check fits where the model barely does. ``--layers all`` loads up to the highest.
  A multimodal wrapper (Kimi-K2.5: ``KimiK25ForConditionalGeneration``, a vision tower around a
  DeepSeek-V3 whose weights the checkpoint keeps under ``language_model.``) is checked on its
  text path: transformers' model for ``text_config``, cut there, weights read under the prefix.
* ``--alone`` (a smoke run: random weights, no reference): the same samples extracted again,
  one request per batch, by the same generator under the same start-up hook, compared with
  what the batched run wrote. A batching path that mixes samples up fails it in minutes.

Every file's length is checked (its states have one row per input id; loaded memory-mapped,
cheap); values are compared on ``--samples`` files spread evenly over all of them (first and
last included; 0 = all). Tolerance: the relative Frobenius error per sample and layer must stay
under ``--tolerance`` (0.05). Why: bf16 keeps 8 significant bits (a rounding of 2^-9 ~ 0.2% per
operation); vLLM and transformers use different kernels and summation orders, so the error
grows with depth -- 0.9% measured over 8 layers of a dense Llama. A sample holding other
tokens' states is off by ~1.0 (sqrt(2) for unrelated states of equal norm): the threshold sits
5x above the measured noise and 20x under a misalignment.
"""

import argparse
import json
import re
import sys
import time
from pathlib import Path

MARK = "HARNESS_VERIFY "


def spread(total: int, want: int) -> list[int]:
    """``want`` indices over ``0..total-1``, evenly, first and last included (0: all)."""
    if want <= 0 or want >= total:
        return list(range(total))
    if want == 1:
        return [0]
    return sorted({round(i * (total - 1) / (want - 1)) for i in range(want)})


def layer_ids(data: Path) -> list:
    cfg = json.loads((data / "data_config.json").read_text())
    for holder in (cfg.get("hidden_states") or {}, cfg):
        if isinstance(holder, dict) and holder.get("layer_ids"):
            return [int(x) for x in holder["layer_ids"]]
    raise SystemExit(f"{data}/data_config.json names no layer_ids")


def files(data: Path) -> list:
    found = {}
    for f in data.glob("data_*.pt"):
        try:
            found[int(f.stem[5:])] = f
        except ValueError:
            continue
    return [found.get(i) for i in range(max(found) + 1)] if found else []


def rel_err(got, ref) -> float:
    got, ref = got.float(), ref.float()
    return float((got - ref).norm() / ref.norm().clamp_min(1e-12))


def report(checked: int, total: int, failed: list, detail: str, **metrics) -> int:
    line = {"checked": checked, "total": total, "failed": failed, "unit": "samples",
            "detail": detail, "metrics": metrics}  # fmt: skip
    print(MARK + json.dumps(line), flush=True)
    return 1 if failed else 0


def lengths(paths: list, torch) -> dict:
    """name -> why, for files that are missing or whose states do not match their ids."""
    bad = {}
    for i, f in enumerate(paths):
        if f is None:
            bad[f"data_{i}"] = "missing"
            continue
        d = torch.load(f, map_location="cpu", mmap=True, weights_only=True)
        n = int(d["input_ids"].shape[0])
        rows = sorted({int(h.shape[0]) for h in d["hidden_states"]})
        if rows != [n]:
            bad[f.stem] = f"{rows} rows of states for {n} ids"
    return bad


# where a multimodal wrapper keeps its decoder's causal LM in the checkpoint: Kimi-K2.5 saves
# ``language_model.model.layers.N...`` and ``language_model.lm_head.weight`` around a DeepSeek-V3
WRAPPER_PREFIXES = ("language_model.",)


def checkpoint_files(model: str) -> dict:
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


def decoder_prefix(model: str, cfg) -> str:
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


def cut_layers(text, loaded: int) -> None:
    """``text`` (a decoder config) says ``loaded`` layers; per-layer lists cut to match. What
    depends on a layer's index stays as it is (``first_k_dense_replace``: the first k layers are
    dense, the rest MoE -- the loaded layers keep the checkpoint's kinds, dense or MoE)."""
    text.num_hidden_layers = loaded
    for name in ("layer_types", "mlp_layer_types"):
        value = getattr(text, name, None)
        if isinstance(value, (list, tuple)) and len(value) > loaded:
            setattr(text, name, list(value)[:loaded])


def reference_model(model: str, upto: int, device: str, torch, dtype=None):
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


def decoder_layers(model):
    for path in (("model", "layers"), ("model", "language_model", "layers"),
                 ("language_model", "model", "layers")):  # fmt: skip
        obj = model
        for attr in path:
            obj = getattr(obj, attr, None)
        if obj is not None:
            return obj
    raise SystemExit(f"cannot find decoder layers in {type(model).__name__}")


def check_reference(args, paths, picks, layers, torch) -> tuple:
    model, loaded, kind = reference_model(args.model, max(layers), args.device, torch)
    blocks = decoder_layers(model)
    grabbed = {}

    def hook(idx):
        def fn(_m, _inp, out):
            grabbed[idx] = (out[0] if isinstance(out, tuple) else out).detach()

        return fn

    for idx in layers:
        blocks[idx].register_forward_hook(hook(idx))
    errs = {}
    for i in picks:
        d = torch.load(paths[i], map_location="cpu", weights_only=True)
        with torch.no_grad():
            model(input_ids=d["input_ids"].to(args.device)[None])
        errs[paths[i].stem] = max(
            rel_err(d["hidden_states"][args.captured.index(k)].to(args.device), grabbed[k][0])
            for k in layers
        )
    return errs, f"transformers forward ({kind}), decoder layers 0-{loaded - 1} loaded"


def check_alone(args, paths, picks, layers, torch) -> tuple:
    from speculators.data_generation.vllm_hidden_states_generator import (
        VllmHiddenStatesGenerator,
    )

    gen = VllmHiddenStatesGenerator(
        args.model, layer_ids=args.captured, max_model_len=args.seq_length,
        gpu_memory_utilization=args.gpu_memory_utilization, tensor_parallel_size=args.tp,
    )  # fmt: skip
    errs = {}
    for i in picks:
        d = torch.load(paths[i], map_location="cpu", weights_only=True)
        (alone,) = gen.generate([d["input_ids"].tolist()])
        errs[paths[i].stem] = max(
            rel_err(d["hidden_states"][args.captured.index(k)], alone["hidden_states"][
                args.captured.index(k)]) if d["hidden_states"][0].shape[0] == alone[
                "hidden_states"][0].shape[0] else float("inf")
            for k in layers
        )  # fmt: skip
    return errs, "the same samples extracted alone (smoke: random weights)"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="the folder of data_{i}.pt files")
    ap.add_argument("--model", required=True)
    ap.add_argument("--samples", type=int, default=64, help="files compared (0 = all)")
    ap.add_argument("--layers", default="lowest", help="lowest | all | comma-separated ids")
    ap.add_argument("--tolerance", type=float, default=0.05)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--alone", action="store_true", help="smoke: batch vs one at a time")
    ap.add_argument("--seq-length", type=int, default=2048)
    ap.add_argument("--tp", type=int, default=1)
    ap.add_argument("--gpu-memory-utilization", type=float, default=0.8)
    args = ap.parse_args()
    import torch

    start = time.monotonic()
    data = Path(args.data)
    paths = files(data)
    if not paths:
        return report(0, 0, ["(no data_*.pt files)"], f"nothing in {data}")
    # the worker captures each distinct layer once, in layer order (speculators keeps the ids in
    # a frozenset): [2, 2, 1, 3] from a 4-layer smoke model is three states, layers 1, 2, 3
    args.captured = sorted(set(layer_ids(data)))
    layers = {"lowest": [min(args.captured)], "all": list(args.captured)}.get(args.layers)
    if layers is None:
        layers = [int(x) for x in args.layers.split(",")]
    bad = lengths(paths, torch)
    picks = [i for i in spread(len(paths), args.samples) if paths[i] is not None]
    picks = [i for i in picks if paths[i].stem not in bad]
    how = check_alone if args.alone else check_reference
    errs, what = how(args, paths, picks, layers, torch)
    wrong = sorted(bad.keys() | {k for k, e in errs.items() if not e <= args.tolerance},
                   key=lambda s: int(s.split("_")[-1]))  # fmt: skip
    worst = max((e for e in errs.values() if e != float("inf")), default=0.0)
    detail = (f"max relative error {worst:.4f} over {len(errs)} samples x layers {layers}, "
              f"{what}; lengths of all {len(paths)} files checked")  # fmt: skip
    for name in wrong[:20]:
        print(f"wrong: {name}: " + (bad.get(name) or f"relative error {errs[name]:.3f}"))
    return report(len(paths), len(paths), wrong, detail, max_rel_err=worst,
                  layers=layers, tolerance=args.tolerance,
                  seconds=round(time.monotonic() - start, 1))  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
