"""Benchmark: ``harness check speculators --against vllm`` beside mypy and pyright, one run.

All three read the same sources: speculators 0.3.0 + vllm 0.16.0 (and the vllm 0.11.0
control, where nothing should be reported), unpacked from the real wheels. For each tool we
print whole-process wall time and CPU time (user + system, children included: less bound to
the machine's load than the wall), how many of the known run-time errors it found (recall),
and how many errors it reported on the 0.11.0 control (false errors: that pair works).

harness runs as an install leaves it (its bytecode written). Cold: no probe result cached
(harness's own table of the modules each probe ships, made once per install, is kept); cold,
first use: an empty cache. Warm: the pair's probe results cached.

Usage: python bench/check_bench.py [--runs N] [--checker-runs N]
       (mypy/basedpyright: pip install -e '.[bench]'; without basedpyright: pip install pyright)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from harness.targets.pypi import PypiTarget  # noqa: E402

GEN = "speculators/data_generation/vllm_hidden_states_generator.py"
KNOWN = {
    (GEN, 136),
    (GEN, 148),
    (GEN, 194),
}  # kv_cache_specs, Scheduler block_size, SchedulerConfig


class Took(NamedTuple):
    wall: float  # seconds, whole process
    cpu: float  # user + system seconds of the process and its children (less load-bound)


def timed(
    argv: list[str], env: dict[str, str], cwd: Path | None = None
) -> tuple[Took, subprocess.CompletedProcess[str]]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    cp = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return Took(wall, cpu), cp


def median(took: list[Took]) -> Took:
    return Took(statistics.median(t.wall for t in took), statistics.median(t.cpu for t in took))


def roots(spec: str) -> list[str]:
    return PypiTarget(spec).probe_paths()


def harness_run(spec: str, env: dict[str, str]) -> tuple[Took, set[tuple[str, int]], int]:
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


def mypy_run(paths: list[str], tmp: Path) -> tuple[Took, set[tuple[str, int]], int] | None:
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
) -> tuple[Took, set[tuple[str, int]], int] | None:
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
    ap.add_argument("--checker-runs", type=int, default=3, help="runs of mypy and pyright")
    opts = ap.parse_args()
    new, old = "speculators==0.3.0,vllm==0.16.0", "speculators==0.3.0,vllm==0.11.0"
    paths_new, paths_old = roots(new), roots(old)  # downloads/unpacks once, outside timing
    roots("vllm==0.11.0")
    load = [os.getloadavg()[0]]
    # harness as installed: its modules' bytecode cached (pip compiles them at install); a
    # PYTHONDONTWRITEBYTECODE=1 environment would compile ~70 modules every run (~0.1 s)
    base_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory(prefix="harness-check-bench-") as tmpdir:
        tmp = Path(tmpdir)
        unpacked = sorted({Path(p) for p in paths_new + paths_old + roots("vllm==0.11.0")})

        def fresh_cache(i: int | str, table: bool = True) -> dict[str, str]:
            """A cache with no probe result over the already unpacked wheels: a cold run.
            ``table``: with harness's own table of the modules each probe ships (made once
            per harness install, kept among the results), as on any machine after a check."""
            cache = tmp / f"harness-cache-{i}"
            (cache / "pypi").mkdir(parents=True)
            for d in unpacked:
                (cache / "pypi" / d.name).symlink_to(d, target_is_directory=True)
            if table:
                (cache / "probe-modules").mkdir()
                first = tmp / "harness-cache-first" / "probe-modules"
                for f in first.glob("probe-modules-*"):
                    shutil.copy(f, cache / "probe-modules" / f.name)
            return {**base_env, "HARNESS_CACHE": str(cache)}

        # bytecode written, as an install leaves it; the probe-module table made
        harness_run(old, fresh_cache("first", table=False))
        # cold: the median of several runs, each with its own empty result cache (one run
        # on a shared 2-core machine can be off by a third)
        colds = [harness_run(new, fresh_cache(i)) for i in range(opts.runs)]
        cold = median([c[0] for c in colds])
        errs = colds[0][1]
        first = median(
            [harness_run(new, fresh_cache(f"{i}-first", False))[0] for i in range(opts.runs)]
        )
        env = fresh_cache(opts.runs)
        harness_run(new, env)
        warm = median([harness_run(new, env)[0] for _ in range(opts.runs)])
        _, _, ctrl_n = harness_run(old, env)
        rows = [
            (f"harness check (cold, median of {opts.runs})", cold, hits(errs), len(KNOWN), ctrl_n),
            (f"harness check (warm, median of {opts.runs})", warm, hits(errs), len(KNOWN), ctrl_n),
            ("harness check (cold, first use)", first, hits(errs), len(KNOWN), ctrl_n),
        ]
        # basedpyright (the bench extra), else pyright (pip install pyright)
        checker = "basedpyright" if pyright_exe("basedpyright") else "pyright"
        for name, fn in (
            ("mypy", mypy_run),
            (checker, lambda p, t: pyright_run(p, t, checker)),
        ):
            got = [fn(paths_new, tmp) for _ in range(opts.checker_runs)]
            if got[0] is None:
                print(f"{name}: not installed (pip install -e '.[bench]')")
                continue
            took = median([g[0] for g in got if g is not None])
            e = got[0][1]
            ctl = fn(paths_old, tmp)
            rows.append(
                (f"{name} (median of {len(got)})", took, hits(e), len(KNOWN), ctl[2] if ctl else -1)
            )
    load.append(os.getloadavg()[0])
    print("speculators 0.3.0 against vllm 0.16.0 (control: vllm 0.11.0), same sources")
    print(f"load average {load[0]:.2f} -> {load[1]:.2f} on {os.cpu_count()} CPUs")
    print(f"{'tool':32} {'wall s':>7} {'cpu s':>7} {'recall':>7} {'false errors on control':>24}")
    for name, t, h, n, fe in rows:
        print(f"{name:32} {t.wall:7.2f} {t.cpu:7.2f} {h:>4}/{n:<2} {fe:>24}")
    for name, t, *_ in rows[3:]:
        print(
            f"ratio {name.split()[0]} / harness cold: {t.wall / cold.wall:5.1f}x wall, "
            f"{t.cpu / cold.cpu:5.1f}x cpu   / harness warm: {t.wall / warm.wall:5.1f}x wall"
        )
    print(
        f"targets: cold <= 2 s ({'met' if cold.wall <= 2 else 'NOT met'}), "
        f"warm <= 0.5 s ({'met' if warm.wall <= 0.5 else 'NOT met'})"
    )


if __name__ == "__main__":
    main()
