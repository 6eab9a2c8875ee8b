"""Benchmark: a cold ``harness probe`` on a ``pypi:`` pin, lazy wheel vs whole wheel, in one run.

Each run is ``harness probe MODULE -t pypi:PIN`` with its own empty ``HARNESS_CACHE`` and an
empty pip cache (``PIP_CACHE_DIR``), so nothing is reused: once as shipped (lazy: HTTP range
requests for the sources only) and once with ``HARNESS_PYPI_LAZY=0`` (``pip download`` of the
whole wheel, as before issue 26). The user's pip configuration applies to both. Runs alternate
lazy/whole so a change in the network's speed hits both.

Bytes fetched: the wheel bytes that crossed the wire (lazy: what ``.complete`` records;
whole: the wheel's size) and, as a cross-check that counts everything (index pages, TLS,
headers), the bytes received on this machine's non-loopback interfaces (``/proc/net/dev``;
machine-wide, so other traffic at the same time counts too). The network's speed, on which the
time ratio depends, is the whole download's: the bytes received while they arrive at more than
1 MB/s (sampled every 50 ms), over that time. Each run also says its CPU time (user/sys: the
sys part is mostly creating the layout's ~2,000 files, the same in either mode; see
:mod:`harness.targets.unpack`) and, for lazy runs, harness's own breakdown
(``HARNESS_PYPI_TRACE``: index lookup, tail + central directory, sources fetched and unpacked).

``--link MB/s`` measures both modes on a modelled link instead of this machine's own: the
real wheel (downloaded once, untimed) served by the tests' loopback index
(``tests/support/index.py``: a real HTTP server with byte ranges, as PyPI's CDN) at that many
MB/s shared by every connection, with ``--rtt`` ms of round trip per request and two more per
new connection; pip then uses that index only (no pip config), and the bytes are counted at the
server. A datacenter box pulls PyPI at ~200 MB/s; a laptop over a 100 Mbit/s line at ~12.

Usage: python bench/pypi_bench.py [--pin vllm==0.20.2] [--module vllm.v1.core.kv_cache_utils]
       [--runs 1] [--tmp DIR] [--link MB/s [--rtt MS]]
Prints each run, the medians and the ratios whole / lazy (goals: >= 10x fewer bytes, >= 4x
faster). ``--tmp`` puts the empty caches on another file system (default: the system's temp).
Each run's cache is removed at the end, not before the next run: there, the ~2,000 inodes just
freed would be skipped (ext4 without a journal does not reuse recently deleted inodes) by the
next run's file creation, a cost a user's cold run does not pay.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def _rx_bytes() -> int:
    """Bytes received on every interface but loopback, since boot."""
    total = 0
    for line in Path("/proc/net/dev").read_text().splitlines()[2:]:
        name, _, rest = line.partition(":")
        if name.strip() != "lo":
            total += int(rest.split()[0])
    return total


class _Rate:
    """The download rate seen on the interfaces while a run is receiving (> 1 MB/s)."""

    def __init__(self) -> None:
        self.busy_bytes, self.busy_s = 0, 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self, step: float = 0.05) -> None:
        last, at = _rx_bytes(), time.perf_counter()
        while not self._stop.wait(step):
            now, t = _rx_bytes(), time.perf_counter()
            if now - last > 1e6 * (t - at):
                self.busy_bytes += now - last
                self.busy_s += t - at
            last, at = now, t

    def __enter__(self) -> _Rate:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def mb_s(self) -> float:
        return self.busy_bytes / 1e6 / self.busy_s if self.busy_s else 0.0


def _wheel_bytes(cache: Path) -> tuple[int, int]:
    """(wheel bytes fetched, wheel size) from what the run left in ``cache``."""
    for done in (cache / "pypi").iterdir():
        lines = (done / ".complete").read_text().splitlines()
        for line in lines:
            if line.startswith("fetched lazily:"):
                words = line.split()
                return int(words[2]), int(words[4])
    wheels = list((cache / "wheels").glob("*.whl"))
    size = wheels[0].stat().st_size
    return size, size


def one(mode: str, pin: str, module: str, work: Path, link: Any = None) -> dict[str, float]:
    """One cold probe; ``link``: the loopback index modelling a link (else the real index)."""
    cache, pipcache = work / f"cache-{mode}", work / f"pip-{mode}"
    for p in (cache, pipcache):
        shutil.rmtree(p, ignore_errors=True)
    base = os.environ if link is None else link.pip_env(work)
    env = {**base, "HARNESS_CACHE": str(cache), "PIP_CACHE_DIR": str(pipcache)}
    env["HARNESS_PYPI_LAZY"] = "1" if mode == "lazy" else "0"
    env["HARNESS_PYPI_TRACE"] = "1"
    rx = _rx_bytes() if link is None else link.bytes_sent
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with _Rate() as rate:
        cp = subprocess.run(
            [sys.executable, "-m", "harness", "probe", module, "-t", f"pypi:{pin}"],
            capture_output=True, text=True, env=env, cwd=REPO, check=False,
        )  # fmt: skip
    wall = time.perf_counter() - t0
    rx = (_rx_bytes() if link is None else link.bytes_sent) - rx
    busy = rate.mb_s if link is None else link.rate / 1e6
    end = resource.getrusage(resource.RUSAGE_CHILDREN)
    if cp.returncode != 0:
        raise SystemExit(f"{mode}: harness probe failed ({cp.returncode}):\n{cp.stderr}")
    fetched, size = _wheel_bytes(cache)
    out = {"wall": wall, "fetched": fetched, "size": size, "rx": rx, "mb_s": busy}
    user, sys_ = end.ru_utime - cpu.ru_utime, end.ru_stime - cpu.ru_stime
    print(
        f"  {mode:5} {wall:6.2f} s  wheel bytes {fetched / 1e6:8.2f} MB of {size / 1e6:.1f} MB"
        f"  on the wire {rx / 1e6:8.2f} MB at {busy:5.1f} MB/s"
        f"  cpu user {user:.2f} s sys {sys_:.2f} s",
        flush=True,
    )
    for line in cp.stderr.splitlines():
        if "lazily:" in line:
            print(f"        {line}", flush=True)
    shutil.rmtree(pipcache, ignore_errors=True)
    return out


@contextlib.contextmanager
def _link(args: argparse.Namespace, tmp: Path) -> Iterator[Any]:
    """The loopback index modelling ``--link`` (None without it), serving the pin's wheel."""
    if args.link is None:
        yield None
        return
    sys.path.insert(0, str(REPO))
    from tests.support.index import serve

    wheels = tmp / "served"
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                    "--only-binary=:all:", "-d", str(wheels), args.pin], check=True)  # fmt: skip
    with serve(wheels) as idx:
        idx.ranges, idx.rate, idx.latency = True, args.link * 1e6, args.rtt / 1000
        for whl in wheels.glob("*.whl"):
            idx.digest(whl)  # once, before the clock runs (PyPI has it precomputed)
        yield idx


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pin", default="vllm==0.20.2")
    ap.add_argument("--module", default="vllm.v1.core.kv_cache_utils")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--tmp", type=Path, default=None, help="where the empty caches go")
    ap.add_argument("--link", type=float, default=None, help="MB/s of a modelled link")
    ap.add_argument("--rtt", type=float, default=20.0, help="its round trip, ms (with --link)")
    args = ap.parse_args()
    where = "" if args.link is None else f" over a {args.link:g} MB/s link, {args.rtt:g} ms RTT"
    print(f"cold `harness probe {args.module} -t pypi:{args.pin}`{where}, {args.runs} run(s) each")
    got: dict[str, list[dict[str, float]]] = {"lazy": [], "whole": []}
    with (
        tempfile.TemporaryDirectory(prefix="pypi-bench-", dir=args.tmp) as tmp,
        _link(args, Path(tmp)) as link,
    ):
        for i in range(args.runs):
            for mode in ("lazy", "whole"):
                got[mode].append(one(mode, args.pin, args.module, Path(tmp) / str(i), link))
    med = {
        m: {k: statistics.median(r[k] for r in runs) for k in runs[0]} for m, runs in got.items()
    }
    lazy, whole = med["lazy"], med["whole"]
    print("medians:")
    for m in ("lazy", "whole"):
        r = med[m]
        print(f"  {m:5} {r['wall']:6.2f} s  wheel bytes {r['fetched'] / 1e6:8.2f} MB"
              f"  on the wire {r['rx'] / 1e6:8.2f} MB")  # fmt: skip
    bytes_ratio = whole["fetched"] / lazy["fetched"]
    wire_ratio = whole["rx"] / max(lazy["rx"], 1)
    time_ratio = whole["wall"] / lazy["wall"]
    print(f"ratios whole/lazy: wheel bytes {bytes_ratio:.1f}x (goal >= 10x), "
          f"on the wire {wire_ratio:.1f}x, wall time {time_ratio:.1f}x (goal >= 4x), "
          f"with the whole wheel arriving at {whole['mb_s']:.0f} MB/s")  # fmt: skip
    # whole = the rest of its run + size / rate: the rate below which the time ratio is >= 4x
    rest = whole["wall"] - whole["size"] / 1e6 / max(whole["mb_s"], 1e-9)
    if 4 * lazy["wall"] > rest:
        print(f"the time ratio is >= 4x while the whole wheel arrives at <= "
              f"{whole['size'] / 1e6 / (4 * lazy['wall'] - rest):.0f} MB/s "
              f"(the whole run's {rest:.2f} s besides the download held)")  # fmt: skip


if __name__ == "__main__":
    main()
