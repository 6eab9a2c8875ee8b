"""Benchmark: harness's own connection keeper (the mux) against OpenSSH ControlMaster, one run.

The question (issue 14): replace ``harness.targets.mux`` with ``ssh -o ControlMaster=auto
-o ControlPersist=...`` driven through the system ``ssh`` client, as Ansible does? Both are
warmed up first, then each operation a harness command makes is timed over the same loopback
sshd, interpreter and files:

  * ``exec``   run ``true``                      mux: MuxClient.run   cm: ssh -S ctl host true
  * ``probe``  the ``facts`` probe (payload on stdin, envelope back)
               mux: MuxClient.run_python (a fork of the warm worker)
               cm:  ssh -S ctl host python -B -c BOOT (a fresh interpreter)
  * ``stat``   stat one file                     mux: SFTP over the kept link   cm: stat -c
  * ``read``   read a 300 KB file                mux: SFTP                      cm: cat
  * ``stream`` the run-log follower's first byte mux: the stream relay          cm: ssh ... cat

Client side alone, in this process (no interpreter start). Also: the whole ``harness probe``
through the mux, and what a ControlMaster-driven ``harness probe`` would cost at best (this
process's start-up without Paramiko, measured, plus the ControlMaster probe above).

Usage: python bench/keeper_bench.py [--runs 20]
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
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from harness.probe_files import boot_source  # noqa: E402
from harness.probe_runner import build_payload  # noqa: E402
from harness.targets import mux  # noqa: E402
from harness.targets.ssh import SshTarget  # noqa: E402
from harness.targets.ssh.entry import HostConfig  # noqa: E402
from tests.support.sshd import start_sshd, stop_sshd  # noqa: E402


def median_ms(fn: Callable[[], object], runs: int) -> float:
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    opts = ap.parse_args()
    ssh = shutil.which("ssh")
    if ssh is None:
        raise SystemExit("no ssh client: nothing to compare")
    with tempfile.TemporaryDirectory(prefix="hkb-", dir="/tmp") as tmp:
        root = Path(tmp)
        server, proc = start_sshd(root / "sshd")
        runtime = root / "rt"
        runtime.mkdir(mode=0o700)
        os.environ["XDG_RUNTIME_DIR"] = str(runtime)
        os.environ["HARNESS_SSH_PERSIST"] = "600"
        big = root / "big.py"
        big.write_text("x = 1\n" * 50_000)
        try:
            results = measure(server, ssh, root, big, opts.runs)
        finally:
            mux.stop_all(runtime / "harness-mux")
            stop_sshd(proc)
    print(f"connection keeping over loopback sshd, median of {opts.runs} (ms, client side)")
    print(f"  {'op':8} {'mux':>8} {'ControlMaster':>14}")
    for op, (m, c) in results.items():
        print(f"  {op:8} {m:8.1f} {c:14.1f}")


def measure(server: object, ssh: str, root: Path, big: Path, runs: int) -> dict[str, tuple]:
    s = server  # tests.support.sshd.SshServer
    host = HostConfig(
        "box",
        s.host,  # type: ignore[attr-defined]
        user=s.user,  # type: ignore[attr-defined]
        port=s.port,  # type: ignore[attr-defined]
        identity=str(s.client_key),  # type: ignore[attr-defined]
        known_hosts=str(s.known_hosts),  # type: ignore[attr-defined]
        python=sys.executable,
    )
    # -- the mux: a direct connection starts the server, then a client attaches
    with SshTarget(host) as first:
        first.run(["true"])
    path = mux.socket_path(host, None)
    assert path is not None
    deadline = time.monotonic() + 20
    client = None
    while client is None and time.monotonic() < deadline:
        client = mux.MuxClient.attach(path, 15.0, mux.identity_of(host, None).to_dict())
        time.sleep(0.05)
    assert client is not None, "no mux server"
    payload = build_payload("facts", {"dists": [], "gpus": False})
    boot = boot_source()

    def mux_stream() -> None:
        src = client.stream(["cat", str(big)], on_lost=lambda: None)
        try:
            while not src.read(1.0)[0]:
                pass
        finally:
            src.close()

    m = {
        "exec": median_ms(lambda: client.run(["true"]), runs),
        "probe": median_ms(lambda: client.run_python(boot, payload, 60, sys.executable), runs),
        "stat": median_ms(lambda: client.stat(str(big)), runs),
        "read": median_ms(lambda: client.read_bytes(str(big)), runs),
        "stream": median_ms(mux_stream, runs),
    }
    # -- ControlMaster: one master, then every operation is an ssh client process
    ctl = root / "cm.sock"
    base = [
        ssh, "-q", "-i", str(s.client_key), "-p", str(s.port),  # type: ignore[attr-defined]
        "-o", f"UserKnownHostsFile={s.known_hosts}", "-o", "BatchMode=yes",  # type: ignore[attr-defined]
        "-o", "StrictHostKeyChecking=yes", "-o", "ControlMaster=auto",
        "-o", f"ControlPath={ctl}", "-o", "ControlPersist=600",
        f"{s.user}@{s.host}",  # type: ignore[attr-defined]
    ]  # fmt: skip

    def cm(*argv: str, stdin: bytes = b"") -> bytes:
        cp = subprocess.run([*base, *argv], input=stdin, capture_output=True, check=True)
        return cp.stdout

    def cm_stream() -> None:
        p = subprocess.Popen([*base, "cat", str(big)], stdout=subprocess.PIPE)
        assert p.stdout is not None
        p.stdout.read(1)
        p.kill()
        p.wait()

    cm("true")  # the master

    def cm_probe() -> None:
        cm(sys.executable, "-B", "-c", _quote(boot), stdin=payload)

    c = {
        "exec": median_ms(lambda: cm("true"), runs),
        "probe": median_ms(cm_probe, runs),
        "stat": median_ms(lambda: cm("stat", "-c", "'%s %f %Y'", str(big)), runs),
        "read": median_ms(lambda: cm("cat", str(big)), runs),
        "stream": median_ms(cm_stream, runs),
    }
    subprocess.run([*base[:-1], "-O", "exit", base[-1]], capture_output=True, check=False)
    # -- whole commands: harness probe through the mux; start-up alone, for the CM estimate
    env = {**os.environ, "HARNESS_HOSTS": str(_hosts(root, host))}
    ref = "harness.targets.mux.wire:send_frame"  # a module the remote interpreter can read

    def cli_probe() -> None:
        subprocess.run(
            [sys.executable, "-m", "harness", "probe", ref, "-t", "box", "--json"],
            env=env, capture_output=True, check=True, cwd=REPO,
        )  # fmt: skip

    def startup() -> None:
        subprocess.run(
            [sys.executable, "-c", "import harness.cli, harness.reading.probe, "
             "harness.probe_runner, harness.targets.registry, harness.targets.local"],
            env=env, capture_output=True, check=True, cwd=REPO,
        )  # fmt: skip

    whole = median_ms(cli_probe, max(5, runs // 4))
    start = median_ms(startup, max(5, runs // 4))
    out: dict[str, tuple] = {op: (m[op], c[op]) for op in m}
    out["cli"] = (whole, start + c["probe"])
    print(json.dumps({"startup_ms": round(start, 1)}))
    return out


def _quote(code: str) -> str:
    import shlex

    return shlex.quote(code)


def _hosts(root: Path, host: HostConfig) -> Path:
    p = root / "hosts.toml"
    p.write_text(
        "[hosts.box]\n"
        f'address = "{host.address}"\nuser = "{host.user}"\nport = {host.port}\n'
        f'identity = "{host.identity}"\nknown_hosts = "{host.known_hosts}"\n'
        f'python = "{host.python}"\n'
    )
    return p


if __name__ == "__main__":
    main()
