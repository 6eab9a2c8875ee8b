"""Benchmark: ``harness probe MOD:SYM`` over loopback sshd against the manual ways, one run.

Manual ways, measured in the same run on the same sshd and venv:
  * ``ssh host grep -n 'def SYM' FILE``  -- what the engineer typed in the story;
  * ``ssh host python -c 'import MOD; inspect.signature(...)'`` -- if vLLM imports there
    (in the test venv it cannot: torch is not installed; that is reported, not hidden).

"Warm" runs go through the harness mux server (connection sharing, like ControlPersist) that
the cold run starts; the bench waits until it answers, says whether the warm runs really used
it (no Paramiko import), and also times the direct path (HARNESS_SSH_PERSIST=0).

Usage: python bench/probe_bench.py [--runs N]
Prints medians and ratios (harness / manual). Needs /usr/sbin/sshd and the cached wheels.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from harness.targets import mux  # noqa: E402
from tests.support.sshd import start_sshd, stop_sshd  # noqa: E402
from tests.support.wheels import SEED_REQUIREMENTS, ensure_cached_venv, ensure_wheels  # noqa: E402

MODULE = "vllm.v1.core.kv_cache_utils"
SYMBOL = "get_kv_cache_config_from_groups"


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    cp = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    return time.perf_counter() - start, cp


def median_of(argv: list[str], env: dict[str, str], runs: int) -> tuple[float, str]:
    times, last = [], None
    for _ in range(runs):
        t, last = timed(argv, env)
        times.append(t)
    assert last is not None
    status = (
        "ok"
        if last.returncode == 0
        else f"exit {last.returncode}: " + (last.stderr.strip().splitlines() or ["?"])[-1][:100]
    )
    return statistics.median(times), status


def wait_for_mux(folder: Path, timeout: float = 15.0) -> bool:
    """Wait until the mux server the cold run started answers ("warm" = connection kept)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        socks = sorted(folder.glob("*.sock")) if folder.is_dir() else []
        if socks and mux.ping(str(socks[0]), wait=timeout) is not None:
            return True
        time.sleep(0.05)
    return False


def used_mux(argv: list[str], env: dict[str, str]) -> str:
    """One more run with -X importtime: did it go through the mux, without Paramiko?"""
    cp = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        check=False,
        env={**env, "PYTHONPROFILEIMPORTTIME": "1", "HARNESS_MUX_DEBUG": "1"},
    )
    heavy = sorted(
        {
            line.split("|")[-1].strip().split(".")[0]
            for line in cp.stderr.splitlines()
            if "|" in line
        }
        & {"paramiko", "fabric", "invoke", "cryptography"}
    )
    if "via mux" not in cp.stderr:
        return "NO (connected directly)"
    return "yes, importing " + ", ".join(heavy) if heavy else "yes (no paramiko/fabric imported)"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    opts = ap.parse_args()

    wheels = ensure_wheels()
    venv = ensure_cached_venv([wheels[r] for r in SEED_REQUIREMENTS])
    with tempfile.TemporaryDirectory(prefix="harness-bench-") as tmp:
        root = Path(tmp)
        server, proc = start_sshd(root / "sshd")
        try:
            hosts = root / "hosts.toml"
            entry = server.host_entry("box", python=str(venv.python))
            hosts.write_text('default = "box"\n' + entry)
            home = root / "home"
            (home / ".ssh").mkdir(parents=True)
            runtime = root / "rt"  # private mux socket folder, removed with the temp dir
            runtime.mkdir(mode=0o700)
            env = {
                **os.environ,
                "HARNESS_HOSTS": str(hosts),
                "HOME": str(home),
                "NO_COLOR": "1",
                "COLUMNS": "200",
                "XDG_RUNTIME_DIR": str(runtime),
            }
            env.pop("HARNESS_SSH_PERSIST", None)
            ssh = [
                "ssh",
                "-q",
                "-i",
                str(server.client_key),
                "-p",
                str(server.port),
                "-o",
                f"UserKnownHostsFile={server.known_hosts}",
                "-o",
                "BatchMode=yes",
                "-o",
                "StrictHostKeyChecking=yes",
                f"{server.user}@{server.host}",
            ]
            target_file = venv.site_packages / "vllm" / "v1" / "core" / "kv_cache_utils.py"
            harness = [sys.executable, "-m", "harness", "probe", f"{MODULE}:{SYMBOL}"]

            cold, cp = timed(harness, env)
            if cp.returncode != 0:
                sys.exit(f"harness failed: {cp.stderr}")
            mux_ready = wait_for_mux(runtime / "harness-mux")
            warm, st_h = median_of(harness, env, opts.runs)
            via_mux = used_mux(harness, env)
            direct, st_d = median_of(harness, {**env, "HARNESS_SSH_PERSIST": "0"}, opts.runs)
            grep_argv = [*ssh, "grep", "-n", repr(f"def {SYMBOL}"), str(target_file)]
            grep, st_g = median_of(grep_argv, env, opts.runs)
            code = f"import inspect, {MODULE} as m; print(inspect.signature(m.{SYMBOL}))"
            imp, st_i = median_of(
                [*ssh, str(venv.python), "-c", repr(code)], env, max(1, opts.runs // 2)
            )
            true_, _ = median_of([*ssh, "true"], env, opts.runs)
        finally:
            mux.stop_all(runtime / "harness-mux")
            stop_sshd(proc)

    print(f"probe {MODULE}:{SYMBOL} over loopback sshd, median of {opts.runs} runs")
    print(f"  harness probe (cold, first run)    {cold:6.3f} s")
    print(f"  harness probe (warm, shared conn)  {warm:6.3f} s   [{st_h}]")
    print(f"  harness probe (direct, PERSIST=0)  {direct:6.3f} s   [{st_d}]")
    print(f"  ssh host grep -n 'def ...' FILE    {grep:6.3f} s   [{st_g}]")
    print(f"  ssh host python -c 'import; inspect' {imp:6.3f} s   [{st_i}]")
    print(f"  ssh host true (floor)              {true_:6.3f} s")
    print(
        f"warm runs went through the mux:       {via_mux}"
        + ("" if mux_ready else "  (the server was not ready after the cold run)")
    )
    print(f"ratio harness warm / ssh grep:        {warm / grep:5.2f}x  (target <= 2x)")
    print(f"ratio harness direct / ssh grep:      {direct / grep:5.2f}x")
    if st_i == "ok":
        print(f"ratio harness warm / import+inspect:  {warm / imp:5.2f}x")
    else:
        print(
            "import+inspect: vLLM does not import on this target (no torch): "
            f"the manual way fails after {imp:.3f} s"
        )
    print(f"warm target <= 0.6 s: {'met' if warm <= 0.6 else 'NOT met'}")


if __name__ == "__main__":
    main()
