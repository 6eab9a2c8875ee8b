"""Benchmark: what ``harness check CALLER --fix --dry-run`` costs on top of ``check``.

For each real pair, whole-process wall time of ``check --with-patches`` (what --fix starts
from) and of ``check --fix --dry-run``, cold (an empty probe-result cache; the unpacked wheels
are reused, a download is not what is measured) and warm (the second and later runs), and
how many errors were fixed mechanically vs left to a person.

Usage: python bench/fix_bench.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from harness.cache import cache_root  # noqa: E402

PAIRS = [
    ("speculators", "pypi:speculators==0.3.0,vllm==0.33.0", []),
    (
        "imbalanced-learn",
        "pypi:imbalanced-learn==0.9.1,scikit-learn==1.5.2",
        ["--baseline", "scikit-learn==1.1.3"],
    ),
]


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    start = time.perf_counter()
    cp = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, check=False)
    if cp.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)}: exit {cp.returncode}\n{cp.stderr}")
    return time.perf_counter() - start, cp.stdout


def fresh_cache(tmp: Path) -> Path:
    """A harness cache sharing the real one's wheels and unpacked pins, with no results."""
    root = tmp / f"cache-{time.monotonic_ns()}"
    root.mkdir()
    for sub in ("wheels", "pypi"):
        (root / sub).symlink_to(cache_root() / sub, target_is_directory=True)
    return root


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        (tmp / "patches").symlink_to(REPO / "patches", target_is_directory=True)
        for caller, spec, extra in PAIRS:
            harness = [sys.executable, "-m", "harness", "check", caller, "-t", spec, *extra]
            check = [*harness, "--with-patches"]
            fix = [*harness, "--fix", "--dry-run", "--json"]
            cold_check, cold_fix = [], []
            for _ in range(max(1, args.runs // 2)):  # each in its own empty result cache
                env = {**os.environ, "HARNESS_CACHE": str(fresh_cache(tmp))}
                cold_check.append(timed(check, env, tmp)[0])
                env = {**os.environ, "HARNESS_CACHE": str(fresh_cache(tmp))}
                cold_fix.append(timed(fix, env, tmp)[0])
            env = dict(os.environ)
            timed(fix, env, tmp)  # warm up
            warm_check = [timed(check, env, tmp)[0] for _ in range(args.runs)]
            warm_fix, out = [], ""
            for _ in range(args.runs):
                s, out = timed(fix, env, tmp)
                warm_fix.append(s)
            data = json.loads(out)
            med = statistics.median
            print(f"{caller} on {spec.split(',', 1)[1]}:")
            print(
                f"  fixed {len(data['fixed'])}, left to a person {len(data['manual'])} "
                f"({', '.join(sorted({f['kind'] for f in data['fixed']}))})"
            )
            print(
                f"  cold: check {med(cold_check):.2f} s, check --fix {med(cold_fix):.2f} s "
                f"(+{med(cold_fix) - med(cold_check):.2f} s)"
            )
            print(
                f"  warm: check {med(warm_check):.2f} s, check --fix {med(warm_fix):.2f} s "
                f"(+{med(warm_fix) - med(warm_check):.2f} s; in-process fix part "
                f"{data['stats']['fix_seconds']:.2f} s)"
            )


if __name__ == "__main__":
    main()
