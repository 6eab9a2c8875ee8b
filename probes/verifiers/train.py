"""Check what speculators' ``train`` step produced: checkpoints and a loss that learned.

Run by the supervisor after ``train`` exits 0; prints one ``HARNESS_VERIFY {json}`` line and
exits 0 or 1. Each epoch must have left a checkpoint folder (``<save-path>/<epoch>``) whose
weights load (safetensors, or a ``.bin``/``.pt`` state dict) and hold only finite numbers;
the step's log (``--log``, the run's own) must show a finite validation loss for every epoch,
and the last no higher than the first (a run that trained on garbage, or diverged, does not
learn). Nothing here needs a GPU.
"""

import argparse
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

MARK = "HARNESS_VERIFY "
VAL = re.compile(r"val/loss_epoch=([-+\w.]+).*?epoch=(\d+)")


def tensors(folder: Path) -> dict[str, Any]:
    import torch

    out = {}
    for f in sorted(folder.glob("*.safetensors")):  # what save_pretrained writes
        from safetensors.torch import load_file

        out.update(load_file(str(f)))
    if not out:  # an older format: a pickled state dict (optimizer states beside it are not)
        for f in sorted(folder.glob("*.bin")):
            got = torch.load(f, map_location="cpu", weights_only=True)
            out.update(got if isinstance(got, dict) else {})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--checkpoints", required=True)
    ap.add_argument("--epochs", type=int, required=True)
    ap.add_argument("--log", required=True, help="the step's log (the run's own)")
    args = ap.parse_args()
    import torch

    failed, notes = [], []
    for epoch in range(args.epochs):
        folder = Path(args.checkpoints) / str(epoch)
        name = f"checkpoint {epoch}"
        if not folder.is_dir():
            failed.append(name)
            notes.append(f"{name}: {folder} missing")
            continue
        weights = tensors(folder)
        floats = {k: v for k, v in weights.items() if torch.is_tensor(v) and v.is_floating_point()}
        bad = [k for k, v in floats.items() if not torch.isfinite(v).all()]
        if not weights or bad:
            failed.append(name)
            notes.append(f"{name}: " + (f"non-finite {bad[:3]}" if bad else "no weights"))
    val: dict[int, float] = {}
    text = Path(args.log).read_text(errors="replace") if Path(args.log).is_file() else ""
    for m in VAL.finditer(text):
        val.setdefault(int(m[2]), float(m[1]))
    for epoch in range(args.epochs):
        v = val.get(epoch)
        if v is None or not math.isfinite(v):
            failed.append(f"val loss {epoch}")
            notes.append(f"epoch {epoch}: validation loss {v}")
    if len(val) >= 2 and all(map(math.isfinite, val.values())):
        first, last = val[min(val)], val[max(val)]
        if last > first:
            failed.append("loss not falling")
            notes.append(f"validation loss rose {first:.4f} -> {last:.4f}")
    for n in notes:
        print(n)
    losses = " -> ".join(f"{val[e]:.4f}" for e in sorted(val))
    detail = f"{args.epochs} checkpoints loaded; validation loss {losses or 'not logged'}"
    line = {"checked": args.epochs, "total": args.epochs, "failed": failed, "unit": "epochs",
            "detail": detail, "metrics": {"val_loss": [val[e] for e in sorted(val)]}}  # fmt: skip
    print(MARK + json.dumps(line), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
