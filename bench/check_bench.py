"""Benchmark: ``harness check speculators --against vllm`` beside mypy and pyright, one run.

All three read the same sources: speculators 0.3.0 + vllm 0.16.0 (and the vllm 0.11.0
control, where nothing should be reported), unpacked from the real wheels. For each tool we
print whole-process wall time, how many of the known run-time errors it found (recall), and
how many errors it reported on the 0.11.0 control (false errors: that pair works).

Usage: python bench/check_bench.py [--runs N]     (mypy/basedpyright: pip install -e '.[bench]')
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from harness.targets.pypi import PypiTarget  # noqa: E402

GEN = "speculators/data_generation/vllm_hidden_states_generator.py"
KNOWN = {
    (GEN, 136),
    (GEN, 148),
    (GEN, 194),
}  # kv_cache_specs, Scheduler block_size, SchedulerConfig


def timed(
    argv: list[str], env: dict[str, str], cwd: Path | None = None
) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    cp = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, check=False)
    return time.perf_counter() - start, cp


def roots(spec: str) -> list[str]:
    return PypiTarget(spec).probe_paths()


def harness_run(spec: str, env: dict[str, str]) -> tuple[float, set[tuple[str, int]], int]:
    t, cp = timed(
        [
            sys.executable,
            "-m",
            "harness",
            "check",
            "speculators",
            "--against",
            "vllm",
            "-t",
            f"pypi:{spec}",
            "--json",
        ],
        env,
    )
    data = json.loads(cp.stdout)
    errs = {(f["file"], f["line"]) for f in data["findings"] if f["severity"] == "error"}
    return t, errs, len(errs)


def mypy_run(paths: list[str], tmp: Path) -> tuple[float, set[tuple[str, int]], int] | None:
    exe = shutil.which("mypy") or str(Path(sys.executable).parent / "mypy")
    if not Path(exe).exists():
        return None
    spec_root = paths[0]
    env = {**os.environ, "MYPYPATH": os.pathsep.join(paths)}
    t, cp = timed(
        [
            exe,
            "--ignore-missing-imports",
            "--follow-imports=silent",
            "--no-incremental",
            "--cache-dir",
            str(tmp / "mypy-cache"),
            "--python-version",
            "3.11",
            "-p",
            "speculators",
            "--no-error-summary",
            "--show-absolute-path",
        ],
        env,
        cwd=tmp,
    )
    errs = set()
    n = 0
    for line in cp.stdout.splitlines():
        parts = line.split(":")
        if len(parts) > 3 and " error" in parts[2] and parts[0].startswith(spec_root):
            n += 1
            errs.add((os.path.relpath(parts[0], spec_root), int(parts[1])))
    return t, errs, n


def pyright_exe(name: str) -> str | None:
    exe = shutil.which(name) or str(Path(sys.executable).parent / name)
    return exe if Path(exe).exists() else None


def pyright_run(
    paths: list[str], tmp: Path, name: str = "basedpyright"
) -> tuple[float, set[tuple[str, int]], int] | None:
    exe = pyright_exe(name)
    if exe is None:
        return None
    spec_root = paths[0]
    cfg = tmp / "pyrightconfig.json"
    config = {
        # pyright ignores an absolute include, and auto-excludes **/.* (~/.cache) unless told
        "include": [os.path.relpath(Path(spec_root, "speculators"), tmp)],
        "exclude": ["**/__pycache__"],
        "extraPaths": paths,
        "typeCheckingMode": "basic",
        "pythonVersion": "3.11",
    }
    cfg.write_text(json.dumps(config))
    t, cp = timed([exe, "--outputjson", "-p", str(cfg)], dict(os.environ), cwd=tmp)
    try:
        diags = json.loads(cp.stdout).get("generalDiagnostics", [])
    except ValueError:
        return t, set(), -1
    errs = {
        (os.path.relpath(d["file"], spec_root), d["range"]["start"]["line"] + 1)
        for d in diags
        if d.get("severity") == "error" and d["file"].startswith(spec_root)
    }
    n = sum(1 for d in diags if d.get("severity") == "error" and d["file"].startswith(spec_root))
    return t, errs, n


def hits(errs: set[tuple[str, int]]) -> int:
    """Known errors found; a multi-line call may be reported on any of its first 8 lines."""
    return sum(1 for f, ln in KNOWN if any(e[0] == f and ln <= e[1] < ln + 8 for e in errs))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    opts = ap.parse_args()
    new, old = "speculators==0.3.0,vllm==0.16.0", "speculators==0.3.0,vllm==0.11.0"
    paths_new, paths_old = roots(new), roots(old)  # downloads/unpacks once, outside timing
    roots("vllm==0.11.0")
    with tempfile.TemporaryDirectory(prefix="harness-check-bench-") as tmpdir:
        tmp = Path(tmpdir)
        unpacked = sorted({Path(p) for p in paths_new + paths_old + roots("vllm==0.11.0")})

        def fresh_cache(i: int) -> dict[str, str]:
            """An empty result cache over the already unpacked wheels: a cold run."""
            cache = tmp / f"harness-cache-{i}"
            (cache / "pypi").mkdir(parents=True)
            for d in unpacked:
                (cache / "pypi" / d.name).symlink_to(d, target_is_directory=True)
            return {**os.environ, "HARNESS_CACHE": str(cache)}

        # cold: the median of several runs, each with its own empty result cache (one run
        # on a shared 2-core machine can be off by a third)
        colds = [harness_run(new, fresh_cache(i)) for i in range(opts.runs)]
        cold = statistics.median(c[0] for c in colds)
        errs = colds[0][1]
        env = fresh_cache(opts.runs)
        harness_run(new, env)
        warm = statistics.median(harness_run(new, env)[0] for _ in range(opts.runs))
        _, _, ctrl_n = harness_run(old, env)
        rows = [
            (f"harness check (cold, median of {opts.runs})", cold, hits(errs), len(KNOWN), ctrl_n),
            ("harness check (warm, cached)", warm, hits(errs), len(KNOWN), ctrl_n),
        ]
        # basedpyright (the bench extra), else pyright (pip install pyright)
        checker = "basedpyright" if pyright_exe("basedpyright") else "pyright"
        for name, fn in (
            ("mypy", mypy_run),
            (checker, lambda p, t: pyright_run(p, t, checker)),
        ):
            got = fn(paths_new, tmp)
            if got is None:
                print(f"{name}: not installed (pip install -e '.[bench]')")
                continue
            t, e, _ = got
            ctl = fn(paths_old, tmp)
            rows.append((name, t, hits(e), len(KNOWN), ctl[2] if ctl else -1))
    print("speculators 0.3.0 against vllm 0.16.0 (control: vllm 0.11.0), same sources")
    print(f"{'tool':32} {'wall s':>7} {'recall':>7} {'false errors on control':>24}")
    for name, t, h, n, fe in rows:
        print(f"{name:32} {t:7.2f} {h:>4}/{n:<2} {fe:>24}")
    base = {r[0]: r[1] for r in rows}
    for tool in ("mypy", "basedpyright", "pyright"):
        if tool in base:
            print(
                f"ratio {tool} / harness cold: {base[tool] / cold:5.1f}x   "
                f"/ harness warm: {base[tool] / warm:5.1f}x"
            )
    print(
        f"targets: cold <= 2 s ({'met' if cold <= 2 else 'NOT met'}), "
        f"warm <= 0.5 s ({'met' if warm <= 0.5 else 'NOT met'})"
    )


if __name__ == "__main__":
    main()
