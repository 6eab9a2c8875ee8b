#!/usr/bin/env python3
"""GPU bench of issue 42 item 5: the served pipeline's ``--smoke`` beside the full server.

Run after ``faults41.py dsv3 --local`` in the same machine session (it leaves the DeepSeek-V3
shape, its chats, the real prepared data and the full server's prepare time in
``$E2E_WORK``): ``python3 bench/gpu/smoke42.py --local``. Through ``harness run``, as a user:

- ``generate --smoke`` over the real prepared data: a smoke service of its own (vLLM's
  ``--load-format dummy`` and ``--hf-overrides`` cutting the 24 layers to the smoke cut, the
  captured ids mapped so the final layer stays the final one), K samples, the structural check,
  the service stopped;
- ``prepare --smoke``: the same server kind, K chats rendered;
- the full server's start for the same model, from faults41's ``prepare (serve kept)`` line.

Each step's own time (its supervisor's clock) and wall time go to ``$OUT/smoke42.txt``.
"""

# ruff: noqa: E501 -- result lines are built in place, as they are printed

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("E2E_WORK", "/root/f41")
os.environ.setdefault("E2E_LOGS", "/root/f41-logs")
os.environ.setdefault("E2E_BUDGET_S", "560")
os.environ.setdefault("VB_BUDGET_S", "570")
sys.path.insert(0, str(Path(__file__).resolve().parent))
import e2e
import serve09 as s9

WORK, OUT = e2e.WORK, e2e.OUT
IDS = "2, 12, 21, 24"


def say(line: str) -> None:
    s9.say(line)
    (OUT / "smoke42.txt").write_text(s9.RESULTS.read_text())


def model() -> Path:
    text = s9.DSV3_OUT / "text"
    return text if (text / "config.json").is_file() else s9.dsv3_model()


def services_alive() -> list[str]:
    """Runs of the serve step still running (a smoke service must not outlive its run)."""
    return [
        str(x["record"].get("run_id"))
        for x in s9.runs_json()
        if x.get("record", {}).get("step") == "serve" and x.get("state") == "running"
    ]


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    if not s9.open_phase(
        f"# issue 42 item 5: --smoke of the served pipeline on the DeepSeek-V3 shape (24 layers, ids {IDS}), vLLM 0.26.0, over {s9.TARGET}"
    ):
        return 1
    m = model()
    prepared = WORK / "data" / "chat-dsv3" / "prepared"
    if not prepared.is_dir():
        say(f"  BAD no prepared data at {prepared}: run faults41.py dsv3 first")
        return 1
    base = s9.sets(m, "chat-dsv3", IDS)
    alive = services_alive()
    say(f"  serve runs alive before: {alive or 'none'}")
    t0 = time.perf_counter()
    info = s9.step("generate", "dsv3 generate --smoke (4 samples)", [*base, "--smoke"], timeout=500)
    say(f"    generate --smoke wall {time.perf_counter() - t0:.1f} s")
    if info:
        v = info.get("verification") or {}
        say(
            f"    verdict: {v.get('outcome')} {v.get('checked')}/{v.get('total')} -- {json.dumps(v.get('checks') or {})[:500]}"
        )
        say(f"    record smoke: {json.dumps(info.get('record', {}).get('smoke'))[:300]}")
    say(f"  serve runs alive after generate --smoke: {services_alive() or 'none'}")
    t0 = time.perf_counter()
    s9.step(
        "prepare", "dsv3 prepare --smoke (4 chats)",
        [*base, "--smoke", "--smoke-samples", "4"], timeout=500,
    )  # fmt: skip
    say(f"    prepare --smoke wall {time.perf_counter() - t0:.1f} s")
    say(f"  serve runs alive after prepare --smoke: {services_alive() or 'none'}")
    for label, wall, own in s9.OWN:
        say(f"    {label}: harness wall {wall:.1f} s, step {own:.1f} s")
    full = [
        ln for ln in s9.RESULTS.read_text().splitlines() if "dsv3 prepare (serve kept): exit" in ln
    ]
    say(
        f"  the full server (faults41, same model, same session): {full[-1].strip() if full else 'not run'}"
    )
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        e2e.pack()
