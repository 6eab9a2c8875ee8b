"""Benchmark: ``harness logs RUN`` of a finished run over a kept SSH connection, in one run.

What it measures: the wall time of one ``harness logs RUN -t box`` process (start-up, finding
the run, streaming its log, the end summary) over a loopback sshd, once a kept connection
exists (a first ``harness runs`` made it), and whether that process imported Paramiko
(``python -X importtime``). For reference, the same with ``HARNESS_SSH_PERSIST=0`` (a direct
connection every time).

Usage: python bench/logs_warm_bench.py [--runs 10] [--kb 64]
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

from tests.support.sshd import start_sshd, stop_sshd  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--kb", type=int, default=64, help="log size in KiB")
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="harness-logs-warm-") as tmp:
        root = Path(tmp)
        server, proc = start_sshd(root / "sshd")
        try:
            workdir = root / "work"
            workdir.mkdir()
            hosts = root / "hosts.toml"
            hosts.write_text(server.host_entry("box", python=sys.executable, workdir=str(workdir)))
            lines = opts.kb * 1024 // 100
            (root / "pipeline.toml").write_text(
                '[steps.writer]\ncommand = ["{python}", "-c", '
                + json.dumps(f"for i in range({lines}): print('%099d' % i)")
                + "]\n"
            )
            home = root / "home"
            (home / ".ssh").mkdir(parents=True)
            env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_")}
            env |= {
                "HARNESS_HOSTS": str(hosts),
                "HOME": str(home),
                "HARNESS_CACHE": str(root / "cache"),
                "XDG_RUNTIME_DIR": "",
            }

            def harness(*args: str, extra: dict[str, str] | None = None) -> tuple[float, str, str]:
                start = time.perf_counter()
                cp = subprocess.run(
                    [sys.executable, "-X", "importtime", "-m", "harness", *args],
                    cwd=root,
                    env={**env, **(extra or {})},
                    capture_output=True,
                    check=False,
                )
                took = time.perf_counter() - start
                if cp.returncode != 0:
                    raise SystemExit(f"harness {' '.join(args)}: {cp.stderr.decode()[-2000:]}")
                return took, cp.stdout.decode(), cp.stderr.decode()

            harness("run", "writer", "-t", "box", "--force")
            _, out, _ = harness("runs", "-t", "box", "--json")
            data = json.loads(out)
            run_id = (data["runs"] if isinstance(data, dict) else data)[0]["record"]["id"]
            results = {}
            for mode, extra in (("kept", {}), ("direct", {"HARNESS_SSH_PERSIST": "0"})):
                harness("logs", run_id, "-t", "box", extra=extra)  # warm: connection, copy
                times, paramiko = [], 0
                for _ in range(opts.runs):
                    took, _, err = harness("logs", run_id, "-t", "box", extra=extra)
                    times.append(took)
                    paramiko += "| paramiko" in err
                results[mode] = (statistics.median(times), min(times), paramiko)
            harness("hosts", "--disconnect")
        finally:
            stop_sshd(proc)
    print(f"harness logs RUN over loopback sshd, {opts.kb} KiB log, {opts.runs} runs each")
    for mode, (med, best, paramiko) in results.items():
        print(
            f"  {mode:7s} median {med:.3f} s  min {best:.3f} s  "
            f"imported paramiko in {paramiko}/{opts.runs}"
        )


if __name__ == "__main__":
    main()
