"""The extraction check's cost at the pipeline's defaults, on 8B-shaped files (issue 41: the
check within 10 % of generate at the 8B size), on the CPU: where its time goes.

``make`` writes, under OUT, what an 8B extraction's output looks like to the check -- hidden
4096, 4 captured layers (speculators 0.9.0's ``hs_{i}.safetensors``, bf16 [n, 4, 4096]),
SAMPLES samples of ~830 tokens (600-1060), the prepared dataset -- from a random Llama as wide
as an 8B (hidden 4096) but whose blocks cost next to nothing (1 head of 32, MLP 64): the files
and every per-row statistic are 8B-sized, the reference forward is not (the GPU's to measure).
Layer ids [1, 2, 3, 4] of 4 layers (vLLM's meaning: 4 = the last block's output)::

    python bench/hs_cost.py make OUT [--samples 256]
    python bench/hs_cost.py time OUT [--runs 3] [-- CHECK-ARGS...]

``time`` runs ``probes/verifiers/hidden_states.py`` in this process at the defaults (every
sample at the lowest layer, every layer on 16 spread samples, the statistics of every layer
of every file, the population rule) and prints the wall seconds and the seconds inside each
part, per thread: the loader thread's reading (``Folder.load``) and statistics (``profile``),
the main thread's prepared ids, reference forward, identity tests, row errors, rule and
statistics' judgement; what the main thread waited on the loader is the rest.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

VERIFIERS = Path(__file__).resolve().parents[1] / "probes" / "verifiers"
HIDDEN, LAYERS, IDS = 4096, 4, "1,2,3,4"


def make(out: Path, samples: int) -> dict[str, Any]:
    import torch
    from datasets import Dataset
    from safetensors.torch import save_file
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=1024, hidden_size=HIDDEN, intermediate_size=64,
                      num_hidden_layers=LAYERS, num_attention_heads=1, num_key_value_heads=1,
                      head_dim=32, max_position_embeddings=2048)  # fmt: skip
    model = LlamaForCausalLM(cfg).eval()
    model.save_pretrained(out / "model")
    g = torch.Generator().manual_seed(1)
    lengths = [int(x) for x in torch.randint(600, 1061, (samples,), generator=g)]
    ids = [torch.randint(3, 1024, (n,), generator=g) for n in lengths]
    Dataset.from_dict({"input_ids": [s.tolist() for s in ids]}).save_to_disk(out / "prepared")
    (out / "hs").mkdir(parents=True, exist_ok=True)
    got: dict[int, Any] = {}  # block k's output: the stream entering layer k + 1 (vLLM's id)
    for k, block in enumerate(model.model.layers):
        block.register_forward_hook(
            lambda m, i, o, k=k: got.__setitem__(k, (o[0] if isinstance(o, tuple) else o)[0])
        )
    for i, s in enumerate(ids):
        with torch.no_grad():
            model(input_ids=s[None])
        states = torch.stack([got[k] for k in range(LAYERS)], dim=1).to(torch.bfloat16)
        save_file({"token_ids": s, "hidden_states": states.contiguous()},
                  str(out / "hs" / f"hs_{i}.safetensors"))  # fmt: skip
    size = sum(f.stat().st_size for f in (out / "hs").iterdir())
    return {
        "samples": samples,
        "tokens": sum(lengths),
        "mean": round(sum(lengths) / samples),
        "bytes": size,
    }


class Clock:
    """Seconds inside wrapped functions, per thread (the loader's overlap the main one's):
    wall, and the thread's own CPU time (``(cpu)``: less moved by a shared machine's load)."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = defaultdict(float)
        self.depth = threading.local()

    def wrap(self, owner: Any, name: str, label: str) -> None:
        fn: Callable[..., Any] = getattr(owner, name)

        def timed(*a: Any, **kw: Any) -> Any:
            t0, c0 = time.perf_counter(), time.thread_time()
            try:
                return fn(*a, **kw)
            finally:
                where = "loader" if threading.current_thread().name == "hs-prefetch" else "main"
                self.spent[f"{where}: {label}"] += time.perf_counter() - t0
                self.spent[f"{where}: {label} (cpu)"] += time.thread_time() - c0

        setattr(owner, name, timed)


def run(data: Path, argv: list[str]) -> tuple[float, dict[str, float], dict[str, Any]]:
    sys.path.insert(0, str(VERIFIERS))
    import _hs_read
    import hidden_states

    clock = Clock()
    clock.wrap(_hs_read.Folder, "load", "read files")
    clock.wrap(hidden_states, "profile", "statistics (profile)")
    clock.wrap(_hs_read.Prepared, "ids", "prepared ids")
    clock.wrap(hidden_states.Reference, "states", "reference forward")
    clock.wrap(hidden_states, "judge_layer", "identity tests + error")
    clock.wrap(hidden_states, "row_errors", "row errors")
    clock.wrap(hidden_states, "judge_rows", "population rule")
    clock.wrap(hidden_states, "judge_stats", "statistics' judgement")
    clock.wrap(hidden_states, "Reference", "reference model load")
    out, saved = io.StringIO(), sys.argv
    sys.argv = ["hidden_states.py", "--data", str(data / "hs"), "--model", str(data / "model"),
                "--prepared", str(data / "prepared"), "--layer-ids", IDS, "--capture", "input",
                "--device", "cpu", *argv]  # fmt: skip
    t0 = time.perf_counter()
    try:
        with contextlib.redirect_stdout(out):
            code = hidden_states.main()
    finally:
        sys.argv = saved
    wall = time.perf_counter() - t0
    lines = [x for x in out.getvalue().splitlines() if x.startswith(hidden_states.MARK)]
    report = json.loads(lines[-1].split(" ", 1)[1]) if lines else {}
    report["exit"] = code
    # a second run in this process would wrap the wrappers: one run per process
    return wall, dict(clock.spent), report


def main(argv: list[str]) -> int:
    if argv[:1] == ["make"]:
        opts = dict(zip(argv[2::2], argv[3::2], strict=False))
        print(json.dumps(make(Path(argv[1]), int(opts.get("--samples", 256)))))
        return 0
    if argv[:1] == ["time"]:
        rest = argv[argv.index("--") + 1 :] if "--" in argv else []
        wall, spent, report = run(Path(argv[1]), rest)
        values = {**report.get("checks", {}).get("values", {}), "exit": report["exit"]}
        got = {k: values.get(k) for k in ("exit", "compared", "layers", "every_layer_on")}
        got.update(wall=round(wall, 2), failed=len(report.get("failed") or ()),
                   seconds=report.get("metrics", {}).get("seconds"),
                   parts={k: round(v, 2) for k, v in sorted(spent.items())})  # fmt: skip
        print(json.dumps(got))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
