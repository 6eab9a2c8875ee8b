"""The text model of a multimodal checkpoint, as a folder speculators' vocab and train steps read.

Why: Kimi-K2.5 (``KimiK25ForConditionalGeneration``) keeps its DeepSeek-V3 text model's config
under ``text_config`` and its weights under ``language_model.``. speculators 0.3.0's
``scripts/build_vocab_mapping.py`` reads ``AutoConfig.from_pretrained(model).vocab_size`` and
``scripts/train.py`` the verifier's top-level ``hidden_size``, ``intermediate_size``, ... (both
without trust_remote_code), and ``Eagle3DraftModel`` loads ``model.embed_tokens.weight`` /
``lm_head.weight`` by those exact names. Those scripts are not in speculators' wheel, so the
patch series cannot reach them; this folder gives them what they read instead:

* ``config.json``: the checkpoint's ``text_config``, as it is written there (read as JSON: no
  remote code runs), with its own ``model_type``;
* ``model.safetensors``: the text model's input embedding and output head only, renamed
  ``model.embed_tokens.weight`` / ``lm_head.weight``, bit-for-bit the checkpoint's (no output
  head: tied, the embedding serves both, as speculators expects);
* ``text_view.json``: where it came from (the checkpoint, the names read, the sha256 of each
  tensor), so a rerun on an unchanged checkpoint writes nothing.

``text_view.py make --model M --out DIR`` writes it (into a temporary folder first, renamed into
place: never a half-written view). ``text_view.py check --model M --out DIR`` is the step's
verification: the view loads with ``AutoConfig`` *without* remote code in this Python (the step's
env: run it with training's ``PYTHONPATH``), has every field ``scripts/train.py`` reads, its
vocabulary and hidden sizes match the tensors, and the tensors equal the checkpoint's. One
``HARNESS_VERIFY {json}`` line; exit 0 or 1. A checkpoint without ``text_config`` is refused
with one line: its own folder is what vocab and train should read.
"""

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

MARK = "HARNESS_VERIFY "
#: what speculators 0.3.0's scripts/train.py reads from the verifier's config (getattr for head_dim)
TRAIN_READS = ("vocab_size", "hidden_size", "intermediate_size", "num_attention_heads",
               "num_key_value_heads", "hidden_act", "max_position_embeddings",
               "initializer_range", "rms_norm_eps")  # fmt: skip
EMBED, HEAD = "model.embed_tokens.weight", "lm_head.weight"


class Refused(Exception):
    """Input this helper cannot make a view of: one line, no traceback."""


def text_config(model: Path) -> dict[str, Any]:
    cfg_file = model / "config.json"
    try:
        cfg = json.loads(cfg_file.read_text())
    except FileNotFoundError:
        raise Refused(f"{cfg_file}: no such file (--model names a checkpoint folder)") from None
    except json.JSONDecodeError as exc:
        raise Refused(f"{cfg_file}: not JSON ({exc})") from None
    text = cfg.get("text_config")
    if not isinstance(text, dict):
        raise Refused(
            f"{cfg_file} has no text_config: it is not a multimodal wrapper -- set "
            "verifier to the model itself (pipeline.toml's default), no view is needed"
        )
    if "model_type" not in text:
        raise Refused(f"{cfg_file}: text_config has no model_type (AutoConfig needs one)")
    return text


def weight_names(model: Path) -> dict[str, str]:
    """Every tensor name of the checkpoint -> the safetensors file holding it (read as the
    extraction's check reads them: hidden_states.py, beside this file in the run directory)."""
    from hidden_states import checkpoint_files

    names = checkpoint_files(str(model))
    if not names:
        raise Refused(f"{model}: no model.safetensors.index.json and no *.safetensors")
    return names


def pick(names: dict[str, str], leaf: str, required: bool) -> str | None:
    """The text model's tensor named ``...leaf``: the only one, else the one under a
    ``language_model`` module (a vision tower may have embeddings of its own)."""
    found = sorted(k for k in names if k == leaf or k.endswith("." + leaf))
    if len(found) > 1:
        found = [k for k in found if "language_model" in k] or found
    if len(found) == 1:
        return found[0]
    if not found and not required:
        return None
    what = "none" if not found else ", ".join(found[:4])
    raise Refused(f"cannot tell the text model's {leaf} among the checkpoint's tensors ({what})")


def sources(names: dict[str, str]) -> dict[str, str | None]:
    """The view's tensor name -> the checkpoint's (None: no output head, tied)."""
    return {EMBED: pick(names, "embed_tokens.weight", True), HEAD: pick(names, HEAD, False)}


def load(model: Path, names: dict[str, str], name: str | None) -> Any:
    assert name is not None  # the embeddings are required; the head only when picked
    from safetensors import safe_open

    with safe_open(str(model / names[name]), framework="pt") as f:
        return f.get_tensor(name)


def digest(t: Any) -> str:
    import torch

    raw = t.contiguous().view(torch.uint8) if t.dtype != torch.uint8 else t.contiguous()
    return hashlib.sha256(raw.numpy().tobytes()).hexdigest()


def provenance(model: Path, text: dict[str, Any], picked: dict[str, Any]) -> dict[str, Any]:
    return {
        "source": str(model.resolve()),
        "text_config_sha256": hashlib.sha256(json.dumps(text, sort_keys=True).encode()).hexdigest(),
        "tensors": dict(picked),
    }


def make(model: Path, out: Path) -> str:
    text = text_config(model)
    names = weight_names(model)  # read once: an index file, or a whole file's header
    picked = sources(names)
    want = provenance(model, text, picked)
    stamp = out / "text_view.json"
    if stamp.is_file():
        try:
            had = json.loads(stamp.read_text())
        except json.JSONDecodeError:
            had = {}
        if {k: had.get(k) for k in want} == want and (out / "model.safetensors").is_file():
            return f"{out}: up to date (from {model})"
    from safetensors.torch import save_file

    tensors = {EMBED: load(model, names, picked[EMBED])}
    if picked[HEAD] is not None:
        tensors[HEAD] = load(model, names, picked[HEAD])
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        (tmp / "config.json").write_text(json.dumps(text, indent=2, sort_keys=True) + "\n")
        save_file({k: v.contiguous() for k, v in tensors.items()}, str(tmp / "model.safetensors"),
                  metadata={"format": "pt"})  # fmt: skip
        want["sha256"] = {k: digest(v) for k, v in tensors.items()}
        (tmp / "text_view.json").write_text(json.dumps(want, indent=2) + "\n")
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o777 & ~mask)  # mkdtemp's 0700 and safetensors' 0600 are not the rest's
        for f in tmp.iterdir():
            os.chmod(f, 0o666 & ~mask)
        if out.exists():
            shutil.rmtree(out)
        os.rename(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    size = sum(v.numel() * v.element_size() for v in tensors.values())
    renamed = ", ".join(f"{picked[k]} -> {k}" for k in tensors)
    return f"{out}: {text['model_type']} text config + {renamed} ({size / 1e6:.1f} MB) from {model}"


def check(model: Path, out: Path) -> tuple[list[str], str]:
    from safetensors import safe_open
    from transformers import AutoConfig

    failed: list[str] = []
    text = text_config(model)
    names = weight_names(model)  # read once: an index file, or a whole file's header
    picked = sources(names)
    try:
        if json.loads((out / "config.json").read_text()) != text:
            failed.append("config.json is not the checkpoint's text_config")
    except (FileNotFoundError, json.JSONDecodeError) as exc:
        return ["config"], f"{out / 'config.json'}: {exc}"
    try:
        cfg = AutoConfig.from_pretrained(str(out))  # as vocab and train read it: no remote code
    except Exception as exc:  # any failure to load is the finding
        return ["config"], f"AutoConfig cannot read {out} without remote code: {exc}"
    missing = [k for k in TRAIN_READS if getattr(cfg, k, None) is None]
    if missing:
        failed.append("config fields")
    with safe_open(str(out / "model.safetensors"), framework="pt") as f:
        have = {k: f.get_tensor(k) for k in f.keys()}  # noqa: SIM118 -- not a dict
    want = {EMBED: picked[EMBED], **({HEAD: picked[HEAD]} if picked[HEAD] else {})}
    if set(have) != set(want):
        failed.append("tensor names")
    for name, src in want.items():
        if name in have and digest(have[name]) != digest(load(model, names, src)):
            failed.append(f"{name} differs from {src}")
    emb = have.get(EMBED)
    if emb is not None and tuple(emb.shape) != (cfg.vocab_size, cfg.hidden_size):
        failed.append(f"{EMBED} {list(emb.shape)} != [{cfg.vocab_size}, {cfg.hidden_size}]")
    lacks = f"; missing {', '.join(missing)}" if missing else ""
    detail = (
        f"{type(cfg).__name__}: vocab {cfg.vocab_size}, hidden {getattr(cfg, 'hidden_size', None)}"
        f"{lacks}; tensors as the checkpoint's {', '.join(str(s) for s in want.values())}"
    )
    return failed, detail


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=("make", "check"))
    ap.add_argument("--model", required=True, help="the multimodal checkpoint folder")
    ap.add_argument("--out", required=True, help="the view's folder")
    args = ap.parse_args()
    model, out = Path(args.model), Path(args.out)
    try:
        if args.what == "make":
            print(make(model, out), flush=True)
            return 0
        failed, detail = check(model, out)
    except Refused as exc:
        print(f"text_view: {exc}", file=sys.stderr, flush=True)
        if args.what == "make":
            return 2
        failed, detail = ["input"], str(exc)
    line = {"checked": 1, "total": 1, "failed": failed, "unit": "views", "detail": detail}
    print(MARK + json.dumps(line), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
