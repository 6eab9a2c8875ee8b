"""What a hidden-states step will write, against the free space where it writes: run by the
step's own interpreter before it launches (the prepared dataset is read with its
``datasets``), one JSON object on stdout.

    python _disk_budget.py < {"out", "prepared", "layers", "hidden"|"model", "format",
                             "staging", "max_samples"}

bytes = sum over the prepared samples (the first ``max_samples``) of their token count x
captured layers x hidden size x bytes per value; FP8 files hold one byte per value and a
float32 scale per token and layer besides. Free space is the output folder's filesystem's
(its nearest existing folder), as an unprivileged user may use it.
"""

from __future__ import annotations

import glob
import json
import os
import sys

BYTES = {"bf16": 2, "fp16": 2, "fp32": 4, "fp8": 1}
SCALE_BYTES = 4  # fp8: one float32 scale per token and captured layer


def nearest(path: str) -> str:
    """``path``, or the nearest folder above it that exists."""
    path = os.path.abspath(path)
    while not os.path.exists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    return path


def tokens_of(prepared: str, limit: int) -> tuple[int, int]:
    """(samples, tokens) of the prepared dataset's first ``limit`` rows (0: all)."""
    import pyarrow.compute as pc
    from datasets import load_from_disk

    ds = load_from_disk(prepared)
    if "input_ids" not in ds.column_names:
        raise SystemExit(f"{prepared}: the prepared dataset has no input_ids column")
    n = len(ds) if limit <= 0 else min(limit, len(ds))
    column = ds.data.table.column("input_ids").slice(0, n)
    total = pc.sum(pc.list_value_length(column)).as_py() or 0
    return n, int(total)


def hidden_of(model: str) -> int:
    """``hidden_size`` of the model's config.json: a folder, or the HF cache's snapshot."""
    found = [os.path.join(model, "config.json")]
    hub = os.environ.get("HF_HUB_CACHE") or os.path.join(
        os.environ.get("HF_HOME") or os.path.expanduser("~/.cache/huggingface"), "hub"
    )
    found += sorted(glob.glob(os.path.join(hub, "models--" + model.replace("/", "--"),
                                           "snapshots", "*", "config.json")))  # fmt: skip
    for path in found:
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                config = json.load(f)
            size = config.get("hidden_size") or (config.get("text_config") or {}).get("hidden_size")
            if size:
                return int(size)
    raise SystemExit(f"{model}: no config.json with hidden_size found (give disk.hidden)")


def main() -> int:
    spec = json.loads(sys.stdin.read())
    fmt = spec.get("format") or "bf16"
    if fmt not in BYTES:
        raise SystemExit(f"disk.format {fmt!r}: expected one of {', '.join(BYTES)}")
    layers = len([x for x in str(spec["layers"]).replace(",", " ").split() if x])
    hidden = int(spec["hidden"]) if spec.get("hidden") else hidden_of(spec["model"])
    samples, tokens = tokens_of(spec["prepared"], int(spec.get("max_samples") or 0))
    per_token = layers * hidden * BYTES[fmt] + (layers * SCALE_BYTES if fmt == "fp8" else 0)
    out = nearest(spec["out"])
    st = os.statvfs(out)
    answer = {
        "samples": samples, "tokens": tokens, "layers": layers, "hidden": hidden,
        "format": fmt, "per_token": per_token, "bytes": tokens * per_token,
        "free": st.f_bavail * st.f_frsize, "out": spec["out"], "fs": out,
    }  # fmt: skip
    if spec.get("staging"):
        staging = nearest(spec["staging"])
        answer["staging_other_fs"] = os.stat(staging).st_dev != os.stat(out).st_dev
        answer["staging"] = spec["staging"]
    print(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
