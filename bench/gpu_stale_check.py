"""GPU acceptance for ``harness run``: stale GPU holders and ``stop`` on a real GPU.

Run on a machine with an NVIDIA GPU, torch with CUDA, and harness installed, with the
``local`` target (no SSH involved):

    python bench/gpu_stale_check.py [--gib 2]

What it does, printing PASS/FAIL for each:

1. Baseline: ``nvidia-smi`` used memory per GPU.
2. Stale holder: a parent starts a torch child that allocates GIB on cuda:0; the parent is
   SIGKILLed, so the child is re-parented to init. ``harness run hello -t local`` must refuse,
   naming the child's pid as a stale holder (inside containers nvidia-smi lists no pids: the
   preflight scans /proc/*/fd for /dev/nvidia*).
3. ``--kill-stale`` ends it, the step runs, and used memory returns to the baseline.
4. ``harness stop``: a detached step whose process and a ``setsid`` worker both hold GIB;
   stop must end both, report no GPU holders left, and used memory returns to the baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOLERANCE_MIB = 256

HOLDER = """
import sys, time, torch
x = torch.empty(int(float(sys.argv[1]) * 2**30), dtype=torch.uint8, device="cuda:0")
torch.cuda.synchronize()
open(sys.argv[2], "w").write("ready")
time.sleep(3600)
"""
PARENT = """
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", sys.argv[1], sys.argv[2], sys.argv[3]])
time.sleep(3600)
"""
TREE = """
import subprocess, sys, time
holder, gib, run_dir = sys.argv[1:4]
subprocess.Popen([sys.executable, "-c", holder, gib, run_dir + "/worker.ready"],
                 start_new_session=True)  # a setsid worker, as vLLM's may be
subprocess.Popen([sys.executable, "-c", holder, gib, run_dir + "/main.ready"])
time.sleep(3600)
"""


def used_mib() -> list[int]:
    out = subprocess.run(
        ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return [int(float(x)) for x in out.split()]


def back_to(baseline: list[int], timeout: float = 60.0) -> tuple[bool, list[int]]:
    deadline = time.monotonic() + timeout
    while True:
        now = used_mib()
        if all(n <= b + TOLERANCE_MIB for n, b in zip(now, baseline, strict=True)):
            return True, now
        if time.monotonic() > deadline:
            return False, now
        time.sleep(0.5)


def wait_file(path: Path, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {path}")
        time.sleep(0.1)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gib", type=float, default=2.0, help="GPU memory each holder allocates")
    opts = ap.parse_args()
    if shutil.which("nvidia-smi") is None:
        print("SKIP: nvidia-smi not found: this check needs a GPU machine")
        return 2
    try:
        import torch  # noqa: F401
    except ImportError:
        print("SKIP: torch is not importable with", sys.executable)
        return 2

    results: list[tuple[str, bool, str]] = []
    with tempfile.TemporaryDirectory(prefix="harness-gpu-") as tmp:
        root = Path(tmp)
        work = root / "work"
        work.mkdir()
        (root / "hosts.toml").write_text("")
        (root / "pipeline.toml").write_text(
            '[steps.hello]\ncommand = ["{python}", "-c", "print(\'hello\')"]\n\n'
            '[steps.hold]\ncommand = ["{python}", "-c", '
            + json.dumps(TREE.replace("{", "{{").replace("}", "}}"))
            + ", "
            + json.dumps(HOLDER.replace("{", "{{").replace("}", "}}"))
            + f', "{opts.gib}", "{{run_dir}}"]\n'
        )
        # HARNESS_RUN_GPU_DEVICES passes through: a dry run without a GPU can point it (and a
        # fake nvidia-smi and torch) at an ordinary file.
        keep = ("HARNESS_RUN_GPU_DEVICES",)
        env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_") or k in keep}
        env |= {
            "HARNESS_HOSTS": str(root / "hosts.toml"),
            "HARNESS_WORKDIR": str(work),
            "HARNESS_CACHE": str(root / "cache"),
            "COLUMNS": "200",
        }

        def harness(*args: str) -> subprocess.CompletedProcess[str]:
            cp = subprocess.run(
                [sys.executable, "-m", "harness", *args],
                cwd=root, env=env, capture_output=True, text=True, timeout=600, check=False,
            )  # fmt: skip
            print(f"$ harness {' '.join(args)}  -> exit {cp.returncode}")
            print("  " + (cp.stdout + cp.stderr).strip().replace("\n", "\n  "))
            return cp

        baseline = used_mib()
        print(f"baseline used MiB per GPU: {baseline}")

        # -- a stale holder: its parent was SIGKILLed ------------------------------------
        ready = root / "orphan.ready"
        parent = subprocess.Popen(
            [sys.executable, "-c", PARENT, HOLDER, str(opts.gib), str(ready)],
            start_new_session=True,
        )
        wait_file(ready)
        loaded = used_mib()
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        time.sleep(0.5)
        child = [
            int(p) for p in os.listdir("/proc") if p.isdigit() and str(ready).encode()
            in Path(f"/proc/{p}/cmdline").read_bytes()
        ]  # fmt: skip
        print(f"holder pid(s) {child}, used MiB {loaded} (parent {parent.pid} SIGKILLed)")
        refused = harness("run", "hello", "-t", "local")
        named = bool(child) and all(f"{pid} " in refused.stderr for pid in child)
        results.append((
            "preflight reports the orphan as a stale GPU holder and refuses",
            refused.returncode == 2 and "stale GPU" in refused.stderr and named,
            f"exit {refused.returncode}",
        ))  # fmt: skip
        killed = harness("run", "hello", "-t", "local", "--kill-stale")
        ok, now = back_to(baseline)
        results.append((
            "--kill-stale ends it, runs the step, GPU memory back to baseline",
            killed.returncode == 0 and "hello" in killed.stdout and ok,
            f"used MiB {now} vs baseline {baseline}",
        ))  # fmt: skip

        # -- harness stop on a step with a setsid worker -----------------------------------
        started = harness("run", "hold", "-t", "local", "--detach", "--json")
        run_id = json.loads(started.stdout)["record"]["id"]
        run_dir = work / ".harness" / "runs" / run_id
        wait_file(run_dir / "main.ready")
        wait_file(run_dir / "worker.ready")
        print(f"two holders up, used MiB {used_mib()}")
        stopped = harness("stop", run_id, "-t", "local", "--grace", "5")
        ok, now = back_to(baseline)
        results.append((
            "stop ends the step and its setsid worker; no GPU holder left; memory at baseline",
            stopped.returncode == 0 and "GPU holders remaining: none" in stopped.stdout and ok,
            f"used MiB {now} vs baseline {baseline}",
        ))  # fmt: skip
        runs = harness("runs", "-t", "local")
        results.append(("the run reads killed", "killed" in runs.stdout, ""))

    print()
    for what, passed, detail in results:
        print(f"{'PASS' if passed else 'FAIL'}  {what}  {detail}")
    return 0 if all(p for _, p, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
