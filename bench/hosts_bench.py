#!/usr/bin/env python3
"""``harness hosts --check`` on 1 host vs 3 hosts at once, and a Ray cluster's start/stop.

Three network namespaces on a private bridge, each with its own sshd (tests/support/netns.py;
needs root). Each command is a whole ``harness`` process, cold (no kept connection), median of
5. The target: three hosts take at most 1.3x one host -- the hosts are asked at once, so the
wall time is the slowest host's, not the sum. With ``--ray VENV_PYTHON``, also a two-node Ray
run through ``harness run -t nodes`` (its own "cluster up in" / "stopped in" lines).

    sudo python3 bench/hosts_bench.py [--ray /path/to/venv/bin/python]
"""

# ruff: noqa: E501 -- result lines are built in place, as they are printed

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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.support.netns import available, nodes


def timed(argv: list[str], env: dict[str, str], runs: int = 5) -> tuple[float, str]:
    times, out = [], ""
    for _ in range(runs):
        t0 = time.perf_counter()
        cp = subprocess.run(argv, capture_output=True, text=True, env=env)
        times.append(time.perf_counter() - t0)
        out = cp.stdout + cp.stderr
    return statistics.median(times), out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ray", help="a Python with ray installed, for the cluster timings")
    args = ap.parse_args()
    why = available()
    if why:
        print(f"cannot run: {why}")
        return 2
    root = Path(tempfile.mkdtemp(prefix="hosts-bench-"))
    with nodes(root, 3) as ns:
        py = args.ray or sys.executable
        hosts = root / "hosts.toml"
        text = "".join(n.ssh.host_entry(n.name, python=py, workdir=str(root)) + "\n" for n in ns)
        hosts.write_text(
            text + '[groups]\nnodes = ["hxn1", "hxn2", "hxn3"]\ntwo = ["hxn1", "hxn2"]\n'
        )
        env = {**os.environ, "HARNESS_HOSTS": str(hosts), "HOME": str(root),
               "HARNESS_SSH_PERSIST": "0", "NO_COLOR": "1"}  # fmt: skip
        harness = [sys.executable, "-m", "harness"]
        one, _ = timed([*harness, "hosts", "--check", "-t", "hxn1"], env)
        three, _ = timed([*harness, "hosts", "--check", "-t", "nodes"], env)
        print(
            f"harness hosts --check, cold, median of 5: 1 host {one:.2f} s, 3 hosts {three:.2f} s"
            f" = {three / one:.2f}x (target <= 1.3x)"
        )
        warm = {**env, "HARNESS_SSH_PERSIST": "120"}  # kept connections, as users have them
        subprocess.run([*harness, "hosts", "--check", "-t", "nodes"], capture_output=True, env=warm)
        one_w, _ = timed([*harness, "hosts", "--check", "-t", "hxn1"], warm)
        three_w, _ = timed([*harness, "hosts", "--check", "-t", "nodes"], warm)
        print(
            f"harness hosts --check, warm (kept connections), median of 5: 1 host {one_w:.2f} s,"
            f" 3 hosts {three_w:.2f} s = {three_w / one_w:.2f}x"
        )
        subprocess.run([*harness, "hosts", "--disconnect"], capture_output=True, env=warm)
        if args.ray:
            (root / "where.py").write_text(
                "import ray; ray.init(); print(len([n for n in ray.nodes() if n['Alive']]), 'nodes')\n"
            )
            (root / "pipeline.toml").write_text(
                '[steps.where]\ncommand = ["{python}", "' + str(root / "where.py") + '"]\n'
                'spread = "ray"\nport = 6392\n'
            )
            t0 = time.perf_counter()
            cp = subprocess.run([*harness, "run", "where", "-t", "two", "--pipeline",
                                 str(root / "pipeline.toml"), "--patches", str(root / "x")],
                                capture_output=True, text=True, env=env, cwd=root)  # fmt: skip
            total = time.perf_counter() - t0
            up = re.search(r"Ray cluster up in ([\d.]+) s", cp.stderr)
            down = re.search(r"Ray cluster stopped in ([\d.]+) s", cp.stderr)
            print(
                f"Ray over 2 nodes through harness: exit {cp.returncode}; cluster up in "
                f"{up[1] if up else '?'} s, stopped in {down[1] if down else '?'} s; "
                f"whole run {total:.1f} s"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
