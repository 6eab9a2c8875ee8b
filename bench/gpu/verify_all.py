#!/usr/bin/env python3
"""GPU bench of issue 31: "verified" means every sample, and the words say what was compared.

Run on the GPU machine after ``bash bench/gpu/stage.sh --install``, one phase per device call:

    python3 bench/gpu/verify_all.py llama   # the e2e bench's 8-layer Llama, 256 samples: prepare ->
                                            # extract with the pipeline's DEFAULT check (every
                                            # sample, lowest captured layer); the check's share of
                                            # the step's wall time; then the planted-fault table
                                            # on a copy of its output, at the default settings
    python3 bench/gpu/verify_all.py dsv3    # a 24-layer DeepSeek-V3 shape (MLA, 16 routed + 1
                                            # shared experts, bf16): extract checked at EVERY
                                            # captured layer of every sample; the same faults

Everything the user would do goes through harness (``harness run prepare|extract`` on the
``local`` target with the shipped pipeline.toml and series); the fault table runs the shipped
check itself (``probes/verifiers/hidden_states.py``, the argv the pipeline gives it) on a copy
of the extracted folder with one fault planted per sample, and reads its report. A fault
counts as caught when the planted sample is named with the check the fault belongs to.
Results: ``$OUT/verify-all.txt`` (accumulated in ``/root/va/results.txt``).
"""

# ruff: noqa: E501 -- result lines are built in place, as they are printed

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("E2E_WORK", "/root/va")
os.environ.setdefault("E2E_LOGS", "/root/va-logs")
os.environ.setdefault("E2E_BUDGET_S", "560")
sys.path.insert(0, str(Path(__file__).resolve().parent))
import e2e
import verify_bench as vb

WORK, REPO, OUT = e2e.WORK, e2e.REPO, e2e.OUT
RESULTS = WORK / "results.txt"
CHECK = REPO / "probes" / "verifiers" / "hidden_states.py"
vb.RESULTS = RESULTS
vb.WORK = WORK

#: fault -> the check that must name its sample (the words of probes/verifiers/_hs_judge.py)
FAULTS: dict[str, tuple[str, ...]] = {
    "one row shifted": ("position",),
    "two samples swapped": ("ids",),
    "file truncated": ("lengths",),
    "layer dropped": ("layers",),
    "layer taken from another layer": ("layers", "layer"),
    "zeros": ("zeros",),
    "NaN": ("non-finite",),
}


def say(line: str) -> None:
    vb.say(line)
    shutil.copy(RESULTS, OUT / "verify-all.txt")


def timing(info: dict[str, Any]) -> tuple[float | None, float | None]:
    """(the step's own seconds, its check's seconds) from ``harness runs --json``."""
    sup, v = info.get("supervisor") or {}, info.get("verification") or {}
    step = check = None
    if sup.get("started_at") and v.get("started_at"):
        step = v["started_at"] - sup["started_at"]
    if v.get("started_at") and v.get("ended_at"):
        check = v["ended_at"] - v["started_at"]
    return step, check


def run_step(step: str, sets: list[str], label: str, timeout: float = 420) -> dict[str, Any] | None:
    args = ["run", step, "-t", "local", *e2e.PIPE]
    for s in sets:
        args += ["--set", s]
    r = vb.harness(*args, name=label, timeout=timeout)
    e2e.keep_log(step, label.replace(" ", "-"))
    info = vb.newest(step)
    if info is None:
        say(f"  BAD {label}: no run recorded -- {(r.err or r.out).strip()[-300:]}")
        return None
    ok = (
        info.get("state") == "succeeded"
        and (info.get("verification") or {}).get("outcome") == "passed"
    )
    say(f"  {'OK' if ok else 'BAD'} {label}: {info.get('label')} -- harness exit {r.code}")
    return info


# -- faults ------------------------------------------------------------------------------------


def plant(src: Path, dst: Path) -> dict[str, str]:
    """Copy ``src`` to ``dst`` and plant one fault per sample; fault -> the sample it is in."""
    import torch

    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    files = sorted(dst.glob("data_*.pt"), key=lambda p: int(p.stem[5:]))
    n = len(files)
    pick = [max(1, round(n * f)) for f in (0.02, 0.13, 0.27, 0.41, 0.55, 0.69, 0.83)]
    where: dict[str, str] = {}

    def load(i: int) -> dict[str, Any]:
        return torch.load(files[i], map_location="cpu", weights_only=True)

    def save(i: int, d: dict[str, Any]) -> None:
        torch.save(d, files[i])

    i = pick[0]  # one row shifted: every captured layer's rows move down by one
    d = load(i)
    d["hidden_states"] = [torch.cat([h[:1], h[:-1]]) for h in d["hidden_states"]]
    save(i, d)
    where["one row shifted"] = files[i].stem
    i, j = pick[1], pick[1] + 1  # two samples swapped: each file under the other's name
    a, b = load(i), load(j)
    save(i, b)
    save(j, a)
    where["two samples swapped"] = f"{files[i].stem}+{files[j].stem}"
    i = pick[2]  # truncated: the states lose their last 5 rows
    d = load(i)
    d["hidden_states"] = [h[:-5] for h in d["hidden_states"]]
    save(i, d)
    where["file truncated"] = files[i].stem
    i = pick[3]  # a layer dropped: the last captured layer is missing (vLLM's DeepSeek fault)
    d = load(i)
    d["hidden_states"] = d["hidden_states"][:-1]
    save(i, d)
    where["layer dropped"] = files[i].stem
    i = pick[4]  # the second captured layer holds the first's states
    d = load(i)
    d["hidden_states"][1] = d["hidden_states"][0].clone()
    save(i, d)
    where["layer taken from another layer"] = files[i].stem
    i = pick[5]
    d = load(i)
    d["hidden_states"] = [torch.zeros_like(h) for h in d["hidden_states"]]
    save(i, d)
    where["zeros"] = files[i].stem
    i = pick[6]
    d = load(i)
    d["hidden_states"][0][3] = float("nan")
    save(i, d)
    where["NaN"] = files[i].stem
    return where


def check(
    data: Path, model: Path, prepared: Path, extra: list[str], name: str
) -> tuple[dict[str, Any], float, str]:
    argv = [sys.executable, str(CHECK), "--data", str(data), "--model", str(model),
            "--prepared", str(prepared), *extra]  # fmt: skip
    t0 = time.perf_counter()
    cp = subprocess.run(argv, capture_output=True, text=True, env=e2e.ENV, timeout=420)
    secs = time.perf_counter() - t0
    (e2e.LOGS / f"{name}.txt").write_text(
        f"$ {' '.join(argv)}\nexit {cp.returncode}\n{cp.stdout}\n{cp.stderr}"
    )
    report: dict[str, Any] = {}
    for line in cp.stdout.splitlines():
        if line.startswith("HARNESS_VERIFY "):
            report = json.loads(line[len("HARNESS_VERIFY ") :])
    return report, secs, cp.stdout + cp.stderr


def fault_table(gen: Path, model: Path, prepared: Path, extra: list[str], tag: str) -> int:
    bad = WORK / f"faults-{tag}"
    where = plant(gen, bad)
    report, secs, _text = check(bad, model, prepared, extra, f"faults-{tag}")
    failed = report.get("failed") or []
    say(
        f"planted faults ({tag}; check {' '.join(extra) or 'defaults'}; {secs:.1f} s): exit verdict "
        f"{'failed' if failed else 'PASSED (!)'}, {len(failed)} failure line(s)"
    )
    missed = 0
    for fault, sample in where.items():
        names = sample.split("+")
        hits = [f for f in failed if isinstance(f, dict) and f.get("sample") in names]
        words = "; ".join(f"{h.get('sample')}: {h.get('check')}: {h.get('why')}" for h in hits)
        own = any(any(w in str(h.get("check", "")).lower() for w in FAULTS[fault]) for h in hits)
        missed += not own
        say(f"  {'OK ' if own else 'BAD'} {fault:32s} in {sample:20s} -> {words or 'NOT FOUND'}")
    extra_names = {f.get("sample") for f in failed if isinstance(f, dict)} - {
        n for s in where.values() for n in s.split("+")
    }
    if extra_names:
        say(f"  BAD false failures on unplanted samples: {sorted(extra_names)[:10]}")
    return missed + len(extra_names)


# -- phases ------------------------------------------------------------------------------------


def phase_llama() -> int:
    e2e.fresh_dirs()
    RESULTS.write_text("")
    say(f"issue 31 / llama on {os.uname().nodename}; repo {REPO}")
    t0 = time.perf_counter()
    e2e.build_model()
    say(
        f"built the e2e bench's 8-layer Llama + 256 conversations: {time.perf_counter() - t0:.1f} s"
    )
    vb.series(REPO / "patches")
    sets = [s for s in e2e.SETS]
    if run_step("prepare", sets, "prepare") is None:
        return 1
    info = run_step("extract", sets, "extract (defaults)", timeout=500)
    if info is None:
        return 1
    step, chk = timing(info)
    v = info.get("verification") or {}
    say(f"  words: {info.get('label')}")
    say(
        f"  checks: {json.dumps((v.get('metrics') or {}).get('checks') or v.get('checks') or {})[:600]}"
    )
    if step and chk:
        say(
            f"  extract step {step:.1f} s, its check {chk:.1f} s = {100 * chk / step:.1f} % of the step (budget 10 %)"
        )
    gen = WORK / "data" / "gen"
    model = e2e.MODEL
    prepared = WORK / "data" / "prepared"
    return fault_table(gen, model, prepared, [], "llama-default")


def phase_dsv3() -> int:
    import kimi

    WORK.mkdir(parents=True, exist_ok=True)
    say(f"issue 31 / dsv3 on {os.uname().nodename}")
    t0 = time.perf_counter()
    out = WORK / "dsv3"
    built = kimi.build(out, text_over=dict(num_hidden_layers=24, n_routed_experts=16))
    model = Path(built["text_dir"])
    vb.build_chat(WORK / "dsv3-chat.jsonl", 64, 40, 200, seed=3)
    say(
        f"built a 24-layer DeepSeek-V3 (MLA, 16 routed + 1 shared experts, first layer dense; {built['params_text'] / 1e6:.1f} M params) + 64 conversations: {time.perf_counter() - t0:.1f} s"
    )
    sets = [f"model={model}", f"dataset={WORK / 'dsv3-chat.jsonl'}", f"data={WORK / 'data-dsv3'}",
            f"speculators={e2e.PACK / 'speculators'}", "max_samples=64", "seq_length=1024",
            "batch_size=16", "num_proc=4", "tp=1", "gpu_memory_utilization=0.5",
            "verify_layers=all"]  # fmt: skip
    if run_step("prepare", sets, "prepare dsv3") is None:
        return 1
    info = run_step("extract", sets, "extract dsv3 (every layer of every sample)", timeout=500)
    if info is None:
        return 1
    say(f"  words: {info.get('label')}")
    step, chk = timing(info)
    if step and chk:
        say(f"  extract step {step:.1f} s, its check at every layer {chk:.1f} s")
    gen = WORK / "data-dsv3" / "gen"
    return fault_table(
        gen, model, WORK / "data-dsv3" / "prepared", ["--layers", "all"], "dsv3-all-layers"
    )


def main() -> int:
    phase = sys.argv[1] if len(sys.argv) > 1 else "llama"
    OUT.mkdir(parents=True, exist_ok=True)
    try:
        return {"llama": phase_llama, "dsv3": phase_dsv3}[phase]()
    finally:
        e2e.pack()


if __name__ == "__main__":
    sys.exit(main())
