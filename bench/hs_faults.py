"""Planted faults for the extraction check (issue 41): copies of a clean extracted folder, one
fault kind per copy, and the check's verdict on each -- on the CPU in CI, on the GPU bench later.

The kinds were split into two halves BEFORE the pass rule was tuned (``HALF``, below, written
first and not changed since): the rule's factors were chosen looking only at the ``tuning``
half and the controls; the ``held-out`` half was run once, after. ``round2`` (stop 48): eight
more kinds and two more controls, written after the rule was done and run once, untuned --
since the held-out half has been read, the measure of what the rule was not written from.
A kind plants into samples chosen by a seeded RNG over every sample (not only the ones a
spread compares at every layer), and a row fault into every captured layer of its rows (a
chunk slip writes whole rows).

Run by the check's own Python (torch; safetensors for speculators 0.9.0's files)::

    python bench/hs_faults.py plant CLEAN OUT --model M [--other OTHER] [--seed 0]
                                   [--layer-ids 2,4,5,8] [--half tuning|held-out|round2]
    python bench/hs_faults.py run OUT [HALF|KIND...] [--census FILE] -- CHECK-ARGS...

``plant`` writes ``OUT/<kind>/`` (and the controls ``untouched``, ``noise-2pct``, ``float32``)
and ``OUT/planted.json``; ``run`` runs ``probes/verifiers/hidden_states.py`` (CHECK-ARGS: its
argv less --data) in this process on each folder and prints one JSON line per folder: the kind,
its half, the planted samples, the exit, the failed samples and the words (the report's first
failures and ``rule``); ``--census FILE``: the untouched copy's rows above the bound per layer.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: kind -> half. Written before any tuning; the held-out half's results were not looked at
#: until the rule was done.
HALF = {
    "scale": "tuning",  # one sample's states x1.15 at every layer
    "neighbour-row": "tuning",  # one lone row holds its neighbour's (t+1) states
    "run-elsewhere": "tuning",  # 8 consecutive rows hold another sample's rows
    "layers-swapped": "tuning",  # one sample's two highest captured layers swapped
    "post-norm-final": "tuning",  # every file's final layer after the model's final norm
    "mixed-samples": "tuning",  # two samples of one length hold each other's states
    "truncated": "tuning",  # one file's ids and states cut together to 60 %
    "offset": "held-out",  # one sample + a constant vector (0.1 of the median row norm)
    "elsewhere-row": "held-out",  # one lone row holds a row half the sample away
    "neighbour-run": "held-out",  # 8 consecutive rows shifted by one (a chunk slip)
    "layer-replaced": "held-out",  # one sample's highest layer = the layer below it (+ noise)
    "missing-last": "held-out",  # the last file removed
    "other-model": "held-out",  # every file's states from another model (same ids)
    "scale-layer": "held-out",  # one sample's highest layer alone x0.85
    # round 2 (stop 48): written after the rule was done, run once, never tuned to
    "rows-reversed": "round2",  # one sample's rows in reverse order (its ids as they were)
    "zero-tail": "round2",  # one sample's last 30 % of rows zeros (a buffer written short)
    "layer-off-by-one": "round2",  # every file: each captured id but the final holds id + 1
    "whole-shift": "round2",  # one sample: row t holds row t-1's states (row 0 kept)
    "fp8-unscaled": "round2",  # every file's states through float8 e4m3 with no scale
    "noise-10pct-one": "round2",  # one sample: 10 % noise on every row of every layer
    "halves-swapped": "round2",  # one sample's first and second half of rows swapped
    "scale-1.05": "round2",  # one sample's states x1.05 at every layer
}
#: the first three since stop 41; ``noise-1pct`` and ``fp16-roundtrip`` added with round 2
CONTROLS = ("untouched", "noise-2pct", "float32", "noise-1pct", "fp16-roundtrip")


@dataclass
class File:
    """One extracted sample: ids [n], states [layers, n, hidden] (float32 in memory)."""

    path: Path
    ids: Any
    states: Any
    dtype: Any


@dataclass
class Folder:
    """A copy of the clean folder to plant into."""

    root: Path
    torch: Any
    files: dict[int, Path] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for f in self.root.iterdir():
            for prefix, ext in (("data_", ".pt"), ("hs_", ".safetensors")):
                tail = f.name[len(prefix) : -len(ext)] if f.name.startswith(prefix) else ""
                if f.name.endswith(ext) and tail.isdigit():
                    self.files[int(tail)] = f

    def read(self, i: int) -> File:
        path, torch = self.files[i], self.torch
        if path.suffix == ".pt":
            d = torch.load(path, weights_only=True)
            hs = list(d["hidden_states"])
            return File(path, d["input_ids"], torch.stack([h.float() for h in hs]), hs[0].dtype)
        from safetensors.torch import load_file

        t = load_file(str(path))
        hs = t["hidden_states"]
        return File(path, t["token_ids"], hs.float().transpose(0, 1).contiguous(), hs.dtype)

    def write(self, f: File, dtype: Any = None) -> None:
        dt = dtype or f.dtype
        if f.path.suffix == ".pt":
            hs = [h.to(dt).contiguous() for h in f.states]
            self.torch.save({"input_ids": f.ids, "hidden_states": hs}, f.path)
            return
        from safetensors.torch import save_file

        hs = f.states.transpose(0, 1).to(dt).contiguous()
        save_file({"token_ids": f.ids.contiguous(), "hidden_states": hs}, str(f.path))

    def edit(self, i: int, fn: Callable[[File], None]) -> None:
        f = self.read(i)
        fn(f)
        self.write(f)


@dataclass
class Ctx:
    folder: Folder
    rng: random.Random
    model: Path
    other: Path | None
    torch: Any
    layer_ids: list[int] = field(default_factory=list)  # --layer-ids (vLLM's meaning)

    def pick(self, n: int = 1, min_rows: int = 0) -> list[int]:
        ok = [i for i in sorted(self.folder.files) if self.rows(i) >= min_rows]
        return sorted(self.rng.sample(ok, n))

    def rows(self, i: int) -> int:
        return int(self.folder.read(i).ids.shape[0])


def _scale(c: Ctx) -> list[int]:
    (i,) = c.pick()
    c.folder.edit(i, lambda f: f.states.mul_(1.15))
    return [i]


def _neighbour_row(c: Ctx) -> list[int]:
    (i,) = c.pick(min_rows=8)
    t = c.rng.randrange(1, c.rows(i) - 2)

    def fn(f: File) -> None:
        f.states[:, t] = f.states[:, t + 1]

    c.folder.edit(i, fn)
    return [i]


def _run_elsewhere(c: Ctx) -> list[int]:
    i, j = c.pick(2, min_rows=12)
    n = min(c.rows(i), c.rows(j))
    t = c.rng.randrange(1, n - 8)
    src = c.folder.read(j).states

    def fn(f: File) -> None:
        f.states[:, t : t + 8] = src[:, t : t + 8]

    c.folder.edit(i, fn)
    return [i]


def _layers_swapped(c: Ctx) -> list[int]:
    (i,) = c.pick()

    def fn(f: File) -> None:
        f.states[[-1, -2]] = f.states[[-2, -1]]

    c.folder.edit(i, fn)
    return [i]


def _final_norm(c: Ctx) -> tuple[Any, float]:
    from safetensors import safe_open

    cfg = json.loads((c.model / "config.json").read_text())
    cfg = cfg.get("text_config") or cfg
    for f in sorted(c.model.glob("*.safetensors")):
        with safe_open(str(f), framework="pt") as h:
            for name in h.keys():  # noqa: SIM118 (safe_open has no __contains__)
                if name.endswith("model.norm.weight"):
                    return h.get_tensor(name).float(), float(cfg.get("rms_norm_eps", 1e-6))
    raise SystemExit(f"{c.model}: no model.norm.weight")


def _post_norm_final(c: Ctx) -> list[int]:
    w, eps = _final_norm(c)

    def fn(f: File) -> None:
        x = f.states[-1]
        f.states[-1] = x * c.torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w

    for i in sorted(c.folder.files):
        c.folder.edit(i, fn)
    return sorted(c.folder.files)


def _mixed_samples(c: Ctx) -> list[int]:
    by_len: dict[int, list[int]] = {}
    for i in sorted(c.folder.files):
        by_len.setdefault(c.rows(i), []).append(i)
    pairs = [v[:2] for v in by_len.values() if len(v) >= 2]
    if not pairs:
        return []
    a, b = c.rng.choice(pairs)
    fa, fb = c.folder.read(a), c.folder.read(b)
    fa.states, fb.states = fb.states, fa.states
    c.folder.write(fa)
    c.folder.write(fb)
    return [a, b]


def _truncated(c: Ctx) -> list[int]:
    (i,) = c.pick(min_rows=5)

    def fn(f: File) -> None:
        keep = max(1, int(f.ids.shape[0] * 0.6))
        f.ids, f.states = f.ids[:keep].clone(), f.states[:, :keep].clone()

    c.folder.edit(i, fn)
    return [i]


def _offset(c: Ctx) -> list[int]:
    (i,) = c.pick()
    g = c.torch.Generator().manual_seed(c.rng.randrange(1 << 30))

    def fn(f: File) -> None:
        for k in range(f.states.shape[0]):
            v = c.torch.randn(f.states.shape[-1], generator=g)
            size = 0.1 * float(f.states[k].norm(dim=-1).median())
            f.states[k] += v * (size / float(v.norm()))

    c.folder.edit(i, fn)
    return [i]


def _elsewhere_row(c: Ctx) -> list[int]:
    (i,) = c.pick(min_rows=8)
    n = c.rows(i)
    t = c.rng.randrange(1, n // 2)

    def fn(f: File) -> None:
        f.states[:, t] = f.states[:, t + n // 2]

    c.folder.edit(i, fn)
    return [i]


def _neighbour_run(c: Ctx) -> list[int]:
    (i,) = c.pick(min_rows=12)
    t = c.rng.randrange(1, c.rows(i) - 9)

    def fn(f: File) -> None:
        f.states[:, t : t + 8] = f.states[:, t + 1 : t + 9].clone()

    c.folder.edit(i, fn)
    return [i]


def _layer_replaced(c: Ctx) -> list[int]:
    (i,) = c.pick()
    g = c.torch.Generator().manual_seed(c.rng.randrange(1 << 30))

    def fn(f: File) -> None:
        below = f.states[-2]
        noise = c.torch.randn(below.shape, generator=g)
        f.states[-1] = below + noise * (0.004 * float(below.norm()) / float(noise.norm()))

    c.folder.edit(i, fn)
    return [i]


def _missing_last(c: Ctx) -> list[int]:
    last = max(c.folder.files)
    c.folder.files.pop(last).unlink()
    return [last]


def _other_model(c: Ctx) -> list[int]:
    if c.other is None:
        return []
    other = Folder(c.other, c.torch)
    for i in sorted(c.folder.files):
        f, o = c.folder.read(i), other.read(i)
        f.states = o.states
        c.folder.write(f)
    return sorted(c.folder.files)


def _scale_layer(c: Ctx) -> list[int]:
    (i,) = c.pick()
    c.folder.edit(i, lambda f: f.states[-1].mul_(0.85))
    return [i]


def _rows_reversed(c: Ctx) -> list[int]:
    (i,) = c.pick(min_rows=4)
    c.folder.edit(i, lambda f: setattr(f, "states", f.states.flip(1).contiguous()))
    return [i]


def _zero_tail(c: Ctx) -> list[int]:
    (i,) = c.pick(min_rows=4)

    def fn(f: File) -> None:
        f.states[:, int(f.states.shape[1] * 0.7) :] = 0.0

    c.folder.edit(i, fn)
    return [i]


def _layer_off_by_one(c: Ctx) -> list[int]:
    """Each captured id k but the final holds the stream entering layer k + 1 (vLLM's
    meaning), from a float32 forward of the same model: a capture slip by one layer."""
    from transformers import AutoModelForCausalLM

    if not c.layer_ids:
        return []
    model = AutoModelForCausalLM.from_pretrained(str(c.model), dtype=c.torch.float32)
    ids = c.layer_ids
    for i in sorted(c.folder.files):
        f = c.folder.read(i)
        with c.torch.no_grad():
            hs = model(f.ids[None], output_hidden_states=True).hidden_states
        for p, k in enumerate(ids[:-1]):
            f.states[p] = hs[k + 1][0].float()
        c.folder.write(f)
    return sorted(c.folder.files)


def _whole_shift(c: Ctx) -> list[int]:
    (i,) = c.pick(min_rows=4)

    def fn(f: File) -> None:
        f.states[:, 1:] = f.states[:, :-1].clone()

    c.folder.edit(i, fn)
    return [i]


def _fp8_unscaled(c: Ctx) -> list[int]:
    for i in sorted(c.folder.files):
        c.folder.edit(i, lambda f: setattr(f, "states", f.states.to(c.torch.float8_e4m3fn).float()))
    return sorted(c.folder.files)


def _noise_10pct_one(c: Ctx) -> list[int]:
    (i,) = c.pick()
    g = c.torch.Generator().manual_seed(c.rng.randrange(1 << 30))

    def fn(f: File) -> None:
        n = c.torch.randn(f.states.shape, generator=g)
        rows = f.states.norm(dim=-1, keepdim=True) / n.norm(dim=-1, keepdim=True)
        f.states = f.states + n * rows * 0.10

    c.folder.edit(i, fn)
    return [i]


def _halves_swapped(c: Ctx) -> list[int]:
    (i,) = c.pick(min_rows=4)

    def fn(f: File) -> None:
        h = f.states.shape[1] // 2
        f.states = c.torch.cat([f.states[:, h:], f.states[:, :h]], dim=1).contiguous()

    c.folder.edit(i, fn)
    return [i]


def _scale_105(c: Ctx) -> list[int]:
    (i,) = c.pick()
    c.folder.edit(i, lambda f: f.states.mul_(1.05))
    return [i]


PLANT: dict[str, Callable[[Ctx], list[int]]] = {
    "scale": _scale, "neighbour-row": _neighbour_row, "run-elsewhere": _run_elsewhere,
    "layers-swapped": _layers_swapped, "post-norm-final": _post_norm_final,
    "mixed-samples": _mixed_samples, "truncated": _truncated, "offset": _offset,
    "elsewhere-row": _elsewhere_row, "neighbour-run": _neighbour_run,
    "layer-replaced": _layer_replaced, "missing-last": _missing_last,
    "other-model": _other_model, "scale-layer": _scale_layer,
    "rows-reversed": _rows_reversed, "zero-tail": _zero_tail,
    "layer-off-by-one": _layer_off_by_one, "whole-shift": _whole_shift,
    "fp8-unscaled": _fp8_unscaled, "noise-10pct-one": _noise_10pct_one,
    "halves-swapped": _halves_swapped, "scale-1.05": _scale_105,
}  # fmt: skip


def control(name: str, folder: Folder, seed: int) -> None:
    """``noise-2pct``: every row of every layer of every file + Gaussian noise of relative size
    0.02; ``float32``: the same values stored as float32; ``untouched``: as it is."""
    torch = folder.torch
    g = torch.Generator().manual_seed(seed)
    for i in sorted(folder.files):
        f = folder.read(i)
        if name == "noise-2pct":
            n = torch.randn(f.states.shape, generator=g)
            rows = f.states.norm(dim=-1, keepdim=True) / n.norm(dim=-1, keepdim=True)
            f.states = f.states + n * rows * 0.02
            folder.write(f)
        elif name == "float32":
            folder.write(f, torch.float32)
        elif name == "noise-1pct":
            n = torch.randn(f.states.shape, generator=g)
            rows = f.states.norm(dim=-1, keepdim=True) / n.norm(dim=-1, keepdim=True)
            f.states = f.states + n * rows * 0.01
            folder.write(f)
        elif name == "fp16-roundtrip":  # the same values through float16 and back
            f.states = f.states.to(torch.float16).float()
            folder.write(f)


def plant(clean: Path, out: Path, model: Path, other: Path | None, seed: int,
          kinds: list[str], layer_ids: list[int] | None = None) -> dict[str, Any]:  # fmt: skip
    import torch

    planted: dict[str, Any] = {}
    for k, name in enumerate([*CONTROLS, *kinds]):
        dst = out / name
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(clean, dst)
        folder = Folder(dst, torch)
        if name in CONTROLS:
            control(name, folder, seed + k)
            planted[name] = {"half": "control", "samples": []}
            continue
        ctx = Ctx(folder, random.Random(f"{seed}:{name}"), model, other, torch, layer_ids or [])
        samples = PLANT[name](ctx)
        prefix = "hs_" if any(clean.glob("hs_*.safetensors")) else "data_"
        planted[name] = {"half": HALF[name], "samples": [f"{prefix}{i}" for i in samples]}
    (out / "planted.json").write_text(json.dumps(planted, indent=1))
    return planted


def run_check(verifiers: Path, data: Path, argv: list[str]) -> tuple[int, dict[str, Any]]:
    """The shipped check on ``data`` in this process: (exit code, its report)."""
    sys.path.insert(0, str(verifiers))
    import hidden_states

    out = io.StringIO()
    saved = sys.argv
    sys.argv = ["hidden_states.py", "--data", str(data), *argv]
    try:
        with contextlib.redirect_stdout(out):
            code = hidden_states.main()
    finally:
        sys.argv = saved
    lines = [x for x in out.getvalue().splitlines() if x.startswith(hidden_states.MARK)]
    return code, json.loads(lines[-1].split(" ", 1)[1]) if lines else {}


def verdict(name: str, info: dict[str, Any], code: int, report: dict[str, Any]) -> dict[str, Any]:
    """Caught: the check failed, named no sample but planted ones, and every planted one --
    or, for a fault planted in every file (the check compares every layer on a spread only),
    some of them. A control: it passed."""
    named = sorted({f["sample"] for f in report.get("failed") or ()})
    want = set(info["samples"])
    every = len(want) > 4
    caught = code == 1 and bool(named) and set(named) <= want and (every or want <= set(named))
    ok = code == 0 if info["half"] == "control" else caught
    first = [f"{f['sample']} {f['check']}: {f['why']}" for f in (report.get("failed") or ())[:2]]
    return {"kind": name, "half": info["half"], "planted": sorted(want), "exit": code,
            "named": named[:8], "named_count": len(named), "ok": ok, "first": first,
            "rule": report.get("checks", {}).get("values", {}).get("rule", ""),
            "drift": report.get("drift"),
            "seconds": report.get("metrics", {}).get("seconds")}  # fmt: skip


def main(argv: list[str]) -> int:
    if argv[:1] == ["plant"]:
        clean, out = Path(argv[1]), Path(argv[2])
        opts = dict(zip(argv[3::2], argv[4::2], strict=False))
        other = Path(opts["--other"]) if "--other" in opts else None
        kinds = [k for k in HALF if opts.get("--half", "all") in ("all", HALF[k])]
        ids = [int(x) for x in opts.get("--layer-ids", "").split(",") if x.strip()]
        got = plant(clean, out, Path(opts["--model"]), other, int(opts.get("--seed", 0)), kinds,
                    ids)  # fmt: skip
        print(json.dumps(got))
        return 0
    if argv[:1] == ["run"]:
        out = Path(argv[1])
        rest = argv[argv.index("--") + 1 :] if "--" in argv else []
        planted = json.loads((out / "planted.json").read_text())
        only = [x for x in argv[2 : argv.index("--")] if x != "--"] if "--" in argv else []
        at = only.index("--census") if "--census" in only else len(only)
        census, only = only[at : at + 2], only[:at] + only[at + 2 :]  # the untouched copy's
        verifiers = Path(__file__).resolve().parents[1] / "probes" / "verifiers"
        for name, info in planted.items():
            if only and info["half"] not in only and name not in only:
                continue
            code, report = run_check(verifiers, out / name, rest + census * (name == "untouched"))
            print(json.dumps(verdict(name, info, code, report)), flush=True)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
