"""Benchmark: ``harness logs RUN --follow`` against ``ssh host tail -f LOG``, in one run.

Both follow the same kind of step over the same loopback sshd: a writer that waits until the
follower is attached, then prints 20 time-stamped lines 100 ms apart (latency: line written
there -> line read here, same clock), then BULK MB of 100-byte lines as fast as it can
(throughput: bytes / time from the bulk's first write to its last byte read here).

Usage: python bench/logs_bench.py [--mb 200] [--runs 1]
Prints medians, the ratios harness / tail, and the targets (<= 0.5 s, >= 50 MB/s).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.sshd import SshServer, start_sshd, stop_sshd  # noqa: E402

WRITER = r"""
import os, sys, time
go, mb = sys.argv[1], int(sys.argv[2])
while not os.path.exists(go):
    time.sleep(0.005)
out = sys.stdout.buffer
for i in range(20):
    out.write(b"lat %d %.6f\n" % (i, time.time()))
    out.flush()
    time.sleep(0.1)
block = b"".join(b"%099d\n" % i for i in range(10486))  # ~1 MiB of 100-byte lines
out.write(b"bulk-start %.6f\n" % time.time())
for _ in range(mb):
    out.write(block)
out.write(b"bulk-end\n")
out.flush()
"""


@dataclass
class Reading:
    """What one follower delivered: when each latency line and the bulk's end arrived."""

    latencies: list[float] = field(default_factory=list)
    bulk_start: float | None = None
    bulk_end_seen: float | None = None
    bulk_bytes: int = 0

    @property
    def throughput(self) -> float:
        if self.bulk_start is None or self.bulk_end_seen is None:
            return 0.0
        return self.bulk_bytes / (self.bulk_end_seen - self.bulk_start) / 1e6


def consume(stream: object, reading: Reading, done: threading.Event) -> None:
    """Read a follower's stdout: parse the latency lines, then just count the bulk."""
    fd = stream.fileno()  # type: ignore[attr-defined]
    pending = b""
    in_bulk = False
    while True:
        chunk = os.read(fd, 1 << 20)
        now = time.time()
        if not chunk:
            break
        if not in_bulk:
            pending += chunk
            while b"\n" in pending and not in_bulk:
                line, pending = pending.split(b"\n", 1)
                if line.startswith(b"lat "):
                    reading.latencies.append(now - float(line.split()[2]))
                elif line.startswith(b"bulk-start "):
                    reading.bulk_start = float(line.split()[1])
                    in_bulk = True
            if not in_bulk:
                continue
            chunk, pending = pending, b""
        reading.bulk_bytes += len(chunk)
        tail = pending + chunk[-16:]
        pending = chunk[-16:]
        if b"bulk-end\n" in tail or b"bulk-end\n" in chunk:
            reading.bulk_end_seen = now
            done.set()
            return
    done.set()


class Bench:
    def __init__(self, root: Path, server: SshServer, mb: int) -> None:
        self.root, self.server, self.mb = root, server, mb
        self.workdir = root / "work"
        self.workdir.mkdir()
        hosts = root / "hosts.toml"
        hosts.write_text(server.host_entry("box", python=sys.executable, workdir=str(self.workdir)))
        (root / "pipeline.toml").write_text(
            '[steps.writer]\ncommand = ["{python}", "-c", '
            + json.dumps(WRITER.replace("{", "{{").replace("}", "}}"))
            + f', "{{run_dir}}/go", "{mb}"]\n'
        )
        home = root / "home"
        (home / ".ssh").mkdir(parents=True)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_")}
        self.env |= {
            "HARNESS_HOSTS": str(hosts),
            "HOME": str(home),
            "HARNESS_CACHE": str(root / "cache"),
            "HARNESS_SSH_PERSIST": "0",
        }

    def harness(self, *args: str, **kw: object) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-m", "harness", *args],
            cwd=self.root,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            **kw,  # type: ignore[arg-type]
        )

    def launch(self) -> Path:
        proc = self.harness("run", "writer", "-t", "box", "--detach", "--json")
        out, _ = proc.communicate(timeout=60)
        run_id = json.loads(out)["record"]["id"]
        return self.workdir / ".harness" / "runs" / run_id

    def follow(self, argv_for: object) -> Reading:
        run_dir = self.launch()
        proc = argv_for(run_dir)  # type: ignore[operator]
        reading, done = Reading(), threading.Event()
        thread = threading.Thread(target=consume, args=(proc.stdout, reading, done), daemon=True)
        thread.start()
        time.sleep(2.0)  # let the follower connect and reach the end of the (empty) log
        (run_dir / "go").write_text("")
        done.wait(timeout=120)
        proc.kill()
        proc.wait()
        return reading

    def with_harness(self) -> Reading:
        return self.follow(lambda d: self.harness("logs", d.name, "-t", "box", "--follow"))

    def with_tail(self) -> Reading:
        s = self.server
        ssh = [
            "ssh", "-q", "-i", str(s.client_key), "-p", str(s.port),
            "-o", f"UserKnownHostsFile={s.known_hosts}", "-o", "BatchMode=yes",
            "-o", "StrictHostKeyChecking=yes", f"{s.user}@{s.host}",
        ]  # fmt: skip
        return self.follow(
            lambda d: subprocess.Popen(
                [*ssh, "tail", "-c", "+1", "-f", str(d / "log")],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=200, help="bulk size in MiB")
    ap.add_argument("--runs", type=int, default=1)
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="harness-logs-bench-") as tmp:
        root = Path(tmp)
        server, proc = start_sshd(root / "sshd")
        try:
            bench = Bench(root, server, opts.mb)
            h = [bench.with_harness() for _ in range(opts.runs)]
            t = [bench.with_tail() for _ in range(opts.runs)]
        finally:
            stop_sshd(proc)

    def lat(rs: list[Reading]) -> tuple[float, float]:
        all_ = [x for r in rs for x in r.latencies]
        return statistics.median(all_), max(all_)

    (h_med, h_max), (t_med, t_max) = lat(h), lat(t)
    h_tp = statistics.median(r.throughput for r in h)
    t_tp = statistics.median(r.throughput for r in t)
    print(f"log following over loopback sshd, {opts.mb} MiB bulk, {opts.runs} run(s) each")
    print(f"  latency  harness logs --follow   median {h_med:.3f} s   max {h_max:.3f} s")
    print(f"  latency  ssh host tail -f        median {t_med:.3f} s   max {t_max:.3f} s")
    print(f"  throughput harness logs --follow  {h_tp:7.1f} MB/s")
    print(f"  throughput ssh host tail -f       {t_tp:7.1f} MB/s")
    print(f"ratio latency harness / tail:       {h_med / t_med:5.2f}x")
    print(f"ratio throughput harness / tail:    {h_tp / t_tp:5.2f}x")
    print(f"target latency <= 0.5 s:            {'met' if h_max <= 0.5 else 'NOT met'}")
    print(f"target throughput >= 50 MB/s:       {'met' if h_tp >= 50 else 'NOT met'}")


if __name__ == "__main__":
    main()
