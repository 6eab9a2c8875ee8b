#!/usr/bin/env python3
"""harness's own time per everyday command, before and after, measured in the same run.

``before`` is a git ref (default: the commit issue 35 was filed on), unpacked with ``git
archive`` into a temporary folder; ``after`` is this tree. Both run the same commands, in
turn, against the same ``local`` pipeline (a step that prints one line, so what is timed is
harness, not the step): ``harness run hello`` and ``harness report hello``, each a whole
process; median wall time of N, and the import time of the ``run`` command
(``python -X importtime``, the sum of every module's own time, the minimum of N). Printed:
each figure and the after/before ratio.

    python bench/overhead_bench.py [--before REF] [--runs N]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PIPELINE = '[steps.hello]\ncommand = ["{python}", "-c", "print(1)"]\n'


def unpack(ref: str, dest: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return dest


def env_for(code: Path, tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_")}
    return env | {
        "PYTHONPATH": str(code), "HOME": str(tmp / "home"), "HARNESS_CACHE": str(tmp / "cache"),
        "HARNESS_HOSTS": str(tmp / "hosts.toml"), "HARNESS_WORKDIR": str(tmp / "work"),
        "HARNESS_RUN_GPU_DEVICES": str(tmp / "no-gpu*"), "HARNESS_SSH_PERSIST": "0",
        "NO_COLOR": "1", "COLUMNS": "200",
    }  # fmt: skip


def wall(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    t0 = time.perf_counter()
    cp = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
    took = time.perf_counter() - t0
    if cp.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({cp.returncode}): {cp.stderr[-2000:]}")
    return took


def import_ms(env: dict[str, str], cwd: Path) -> float:
    cp = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "harness", "run", "hello", "-t", "local"],
        env=env, cwd=cwd, capture_output=True, text=True,
    )  # fmt: skip
    own = [int(m.group(1)) for m in re.finditer(r"import time:\s+(\d+) \|", cp.stderr)]
    return sum(own) / 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", default="c83ecbc")
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="harness-overhead-") as t:
        tmp = Path(t)
        for sub in ("home", "work", "cache", "before", "cwd-before", "cwd-after"):
            (tmp / sub).mkdir()
        (tmp / "hosts.toml").write_text("")
        code = {"before": unpack(args.before, tmp / "before"), "after": ROOT}
        figures: dict[str, dict[str, list[float]]] = {k: {} for k in code}
        commands = {"run hello": ["run", "hello", "-t", "local"],
                    "report hello": ["report", "hello", "-t", "local"]}  # fmt: skip
        for which in code:
            (tmp / f"cwd-{which}" / "pipeline.toml").write_text(PIPELINE)
        for _ in range(args.runs):  # in turn, so that a busy machine weighs on both alike
            for which, path in code.items():
                env, cwd = env_for(path, tmp), tmp / f"cwd-{which}"
                for name, argv in commands.items():
                    took = wall([sys.executable, "-m", "harness", *argv], env, cwd)
                    figures[which].setdefault(name, []).append(took)
                figures[which].setdefault("import (ms)", []).append(import_ms(env, cwd))
        print(
            f"harness's own time, {args.runs} runs each, before = {args.before}, after = this tree"
        )
        for name in [*commands, "import (ms)"]:
            pick = min if name.startswith("import") else statistics.median
            b, a = pick(figures["before"][name]), pick(figures["after"][name])
            unit = "" if name.startswith("import") else " s"
            print(
                f"  {name:14} before {b:8.3f}{unit}  after {a:8.3f}{unit}  after/before {a / b:.2f}"
            )


if __name__ == "__main__":
    main()
