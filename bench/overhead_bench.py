#!/usr/bin/env python3
"""harness's own time per everyday command, before and after, measured in the same run.

``before`` is a git ref (default: the commit issue 35 was filed on), unpacked with ``git
archive`` into a temporary folder; ``after`` is this tree (or ``--after REF``). Both run
the same commands, in turn, against the same ``local`` pipeline (a step that prints one
line, so what is timed is harness, not the step): ``harness run hello`` and ``harness
report hello``, each a whole process; median wall time of N, and the import time of the
``run`` command (``python -X importtime``, the sum of every module's own time, the minimum
of N). Printed: each figure and the after/before ratio.

``--ssh``: the same over SSH instead, against the tests' real sshd on loopback (started here,
``tests/support/sshd.py``) with the host's ``python`` this interpreter: ``run hello -t box``
over the kept connection (warmed by one run first: what every run after the first costs),
and ``hosts --check -t box`` on a first connect (``hosts --disconnect`` before each), plus
its import time. Before and after each get their own HOME and cache, so each talks to a kept
connection of its own code. A run's own time is also split at the step (the run directory's
``supervisor.json`` and ``status.json``, on the same clock over loopback): from the command's
start to the step's start ("to step"), and from the step's end to the command's exit ("after
step") -- what a long GPU step pays; the time in between is the step's (and, for a step this
short, the log follower still starting).

Bytecode: by default both sides write and read ``__pycache__`` as a pip install does (an
inherited ``PYTHONDONTWRITEBYTECODE=1`` is dropped); ``--no-bytecode`` keeps it, so every
module compiles from source at every start (what this project's dev box measures when it
sets that variable). The machine's load average is printed with the figures.

    python bench/overhead_bench.py [--before REF] [--after REF] [--runs N] [--ssh] [--no-bytecode]
"""

from __future__ import annotations

import argparse
import json
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


BYTECODE = [True]  # --no-bytecode sets it False


def env_for(code: Path, tmp: Path) -> dict[str, str]:
    """Both sides write and use bytecode, as a pip install has it (an inherited
    ``PYTHONDONTWRITEBYTECODE=1`` would time compiling every module at every start), unless
    ``--no-bytecode``: then neither does."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if not BYTECODE[0]:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
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
        sys.exit(f"{' '.join(argv)} failed ({cp.returncode}) with the code at "
                 f"{env.get('PYTHONPATH')}: {cp.stderr[-2000:]}")  # fmt: skip
    return took


def import_ms(env: dict[str, str], cwd: Path, target: str = "local") -> float:
    cp = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "harness", "run", "hello", "-t", target],
        env=env, cwd=cwd, capture_output=True, text=True,
    )  # fmt: skip
    own = [int(m.group(1)) for m in re.finditer(r"import time:\s+(\d+) \|", cp.stderr)]
    return sum(own) / 1000


def split_at_step(argv: list[str], env: dict[str, str], cwd: Path, runs: Path) -> tuple[float, ...]:
    """``(wall, to step, after step)`` of one ``run``: see the module's docstring."""
    t0 = time.time()
    took = wall(argv, env, cwd)
    t1 = time.time()
    newest = max(runs.iterdir(), key=lambda p: p.stat().st_mtime)
    started = json.loads((newest / "supervisor.json").read_text())["started_at"]
    ended = json.loads((newest / "status.json").read_text())["ended_at"]
    return took, started - t0, t1 - ended


def code_of(ref: str | None, tmp: Path) -> Path:
    return ROOT if ref is None else unpack(ref, _mk(tmp))


def load() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def ssh_bench(before: str, runs: int, after: str | None = None) -> None:
    """``--ssh``: see the module's docstring."""
    sys.path.insert(0, str(ROOT))
    from tests.support.sshd import start_sshd

    with tempfile.TemporaryDirectory(prefix="harness-overhead-ssh-") as t:
        tmp = Path(t)
        server, proc = start_sshd(tmp / "sshd")
        loads = [load()]
        try:
            code = {"before": unpack(before, _mk(tmp / "before")),
                    "after": code_of(after, tmp / "after-code")}  # fmt: skip
            figures: dict[str, dict[str, list[float]]] = {k: {} for k in code}
            envs = {}
            for which, path in code.items():
                own = _mk(tmp / which / "x")
                for sub in ("home", "work", "cache"):
                    _mk(own / sub)
                hosts = own / "hosts.toml"
                hosts.write_text(server.host_entry("box", python=sys.executable,
                                                   workdir=str(own / "work")))  # fmt: skip
                (own / "pipeline.toml").write_text(PIPELINE)
                env = env_for(path, own) | {"HARNESS_HOSTS": str(hosts)}
                env.pop("HARNESS_SSH_PERSIST")  # the kept connection, as a user has it
                envs[which] = (env, own)
                wall([sys.executable, "-m", "harness", "run", "hello", "-t", "box"], env, own)
            run_argv = [sys.executable, "-m", "harness", "run", "hello", "-t", "box"]
            check = [sys.executable, "-m", "harness", "hosts", "--check", "-t", "box"]
            drop = [sys.executable, "-m", "harness", "hosts", "--disconnect", "-t", "box"]
            for _ in range(runs):  # in turn, so that a busy machine weighs on both alike
                for which in code:
                    env, cwd = envs[which]
                    took, to_step, after_step = split_at_step(
                        run_argv, env, cwd, cwd / "work" / ".harness" / "runs"
                    )
                    figures[which].setdefault("run (kept)", []).append(took)
                    figures[which].setdefault("  to step", []).append(to_step)
                    figures[which].setdefault("  after step", []).append(after_step)
                    wall(drop, env, cwd)
                    figures[which].setdefault("check (first)", []).append(wall(check, env, cwd))
                    figures[which].setdefault("import (ms)", []).append(import_ms(env, cwd, "box"))
            for which in code:
                env, cwd = envs[which]
                subprocess.run(drop, env=env, cwd=cwd, capture_output=True)
            loads.append(load())
        finally:
            proc.terminate()
            proc.wait()
        print(f"harness over SSH (loopback sshd), {runs} runs each, before = {before}, after = "
              f"{after or 'this tree'}, bytecode {'on' if BYTECODE[0] else 'off'}; "
              f"{loads[0]} at the start, {loads[-1]} at the end")  # fmt: skip
        _table(figures, ["run (kept)", "  to step", "  after step", "check (first)", "import (ms)"])


def _mk(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _table(figures: dict[str, dict[str, list[float]]], names: list[str]) -> None:
    for name in names:
        pick = min if name.startswith("import") else statistics.median
        b, a = pick(figures["before"][name]), pick(figures["after"][name])
        unit = "" if name.startswith("import") else " s"
        print(f"  {name:14} before {b:8.3f}{unit}  after {a:8.3f}{unit}  after/before {a / b:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", default="c83ecbc")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--after", default=None, help="a git ref (default: this tree)")
    ap.add_argument("--ssh", action="store_true", help="over the tests' loopback sshd")
    ap.add_argument("--no-bytecode", action="store_true", help="PYTHONDONTWRITEBYTECODE=1")
    args = ap.parse_args()
    BYTECODE[0] = not args.no_bytecode
    if args.ssh:
        ssh_bench(args.before, args.runs, args.after)
        return
    with tempfile.TemporaryDirectory(prefix="harness-overhead-") as t:
        tmp = Path(t)
        for sub in ("home", "work", "cache", "before", "cwd-before", "cwd-after"):
            (tmp / sub).mkdir()
        (tmp / "hosts.toml").write_text("")
        code = {"before": unpack(args.before, tmp / "before"),
                "after": code_of(args.after, tmp / "after-code")}  # fmt: skip
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
            f"harness's own time, {args.runs} runs each, before = {args.before}, after = "
            f"{args.after or 'this tree'}, bytecode {'on' if BYTECODE[0] else 'off'}; {load()}"
        )
        _table(figures, [*commands, "import (ms)"])


if __name__ == "__main__":
    main()
