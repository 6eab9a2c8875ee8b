#!/usr/bin/env python3
"""Issue 22, parts 1 and 2: the GPU bench driven over SSH, and two faults on real hardware.

Here, once: ``bash bench/gpu/ssh/fetch.sh`` (-> ``.ssh-debs/``, git-ignored, 27 debs, 6.5 MB).
On the GPU machine, in the device call that carries ``.ssh-debs`` (and the last payload piece,
if the staging ends there)::

    bash bench/gpu/stage.sh --install && E2E_BUDGET_S=500 python3 bench/gpu/ssh_bench.py

Results: ``$OUT/results.txt`` and ``$OUT/logs.tar.gz`` (every command's output, the runs'
logs, sshd's log and config, the SSH session's environment). The ``-t local`` twins of the
four steps come last, each only if the budget left holds its ``-t gpu`` twin's time again
(``--no-local-steps``: none); the cheap commands are timed on both targets first.

Here (no GPU), the same SSH flow against a CPU pipeline that prints vLLM-like lines::

    python3 bench/gpu/ssh_bench.py --dry

In one process: ``bench/gpu/ssh/up.sh`` (OpenSSH's sshd unpacked from the debs, on
127.0.0.1, keys for this run, ``STATE/hosts.toml`` with host ``gpu``); the e2e's harness
commands over ``-t gpu`` through the kept connection as a user meets it (``hosts --check``,
``check``, ``apply-patches``/``revert-patches``, ``report extract``, ``run
prepare|extract|vocab|train``, ``runs``, ``logs --follow`` live while extract runs), each
also with ``-t local`` in the same run, then the SSH-vs-local ratios (for a ``run``: of
harness's own time, its wall time less the step's); FAULT 1: during a second ``run extract
-t gpu`` (at the first model-load/extraction line of its log), SIGKILL the sshd processes
serving the connections (the listener's children, never the listener), then ``harness logs
-t gpu --follow`` reattaches and its stdout is compared byte for byte with the run's log on
disk; the run must end ``succeeded · verified``; FAULT 2: a third extract, once vLLM's
processes hold GPU memory, ``harness stop``: every process of the run's tree gone (found by
its ``HARNESS_RUN_ID`` marker), GPU memory back to the baseline, and ``harness report extract
-t gpu`` finds no stale GPU holder.

Model, data, the ``harness`` runner and the result lines are e2e.py's (imported). Every
result line is written to ``$OUT/results.txt`` as it is made. Env as e2e.py (``OUT``,
``E2E_WORK``, ``E2E_PACK``, ``E2E_BUDGET_S``, ``E2E_LOGS``) plus ``SSH_DEBS`` (default
``.ssh-debs`` in the repo) and ``SSH_STATE`` (default ``/root/ssh-state``).
"""

# ruff: noqa: E501 -- result lines are built in place, as they are printed

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
ARGS = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ARGS.add_argument("--dry", action="store_true", help="no GPU: a CPU pipeline, here")
ARGS.add_argument(
    "--no-local-steps", action="store_true", help="skip the -t local runs of the four steps"
)
ARGS.add_argument(
    "--kill-at",
    default=r"Loading safetensors|Loading weights|Model loading took|Generating hidden states",
    help="FAULT 1 drops the link at the first log line matching this",
)
OPTS = ARGS.parse_args()
if OPTS.dry:
    _dry = Path(os.environ.get("SSH_BENCH_DRY", "/tmp/ssh-bench-dry"))
    os.environ.setdefault("OUT", str(_dry / "out"))
    os.environ.setdefault("E2E_WORK", str(_dry / "work"))
    os.environ.setdefault("E2E_LOGS", str(_dry / "logs"))
    os.environ.setdefault("SSH_STATE", str(_dry / "state"))
    os.environ.setdefault("E2E_PACK", str(_dry / "pack"))
    # harness from the interpreter running this (a venv here)
    os.environ["PATH"] = f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"
else:
    os.environ.setdefault("E2E_LOGS", "/root/ssh-bench-logs")

sys.path.insert(0, str(Path(__file__).resolve().parent))
import e2e  # noqa: E402 -- its paths come from the environment set just above
from e2e import LOGS, WORK, Cmd, harness, left, pack, say  # noqa: E402

STATE = Path(os.environ.get("SSH_STATE", "/root/ssh-state"))
DEBS = Path(os.environ.get("SSH_DEBS", str(REPO / ".ssh-debs")))
HOSTS = STATE / "hosts.toml"
RUNS = WORK / ".harness" / "runs"
CACHE = Path(os.environ.get("HARNESS_CACHE") or Path.home() / ".cache" / "harness")
GPU = shutil.which("nvidia-smi") is not None and not OPTS.dry
#: what the container's own environment gives its processes, which an SSH session does not
#: inherit (sshd builds a fresh one): passed on through the host's ``env`` (for runs)
PASS_ENV = (
    "PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "LIBRARY_PATH", "CUDA_VISIBLE_DEVICES",
    "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "TRITON_CACHE_DIR", "HF_HOME",
)  # fmt: skip
WALL: dict[tuple[str, str], tuple[int, float]] = {}  # (step, target) -> (exit, wall seconds)
TIMES: dict[str, dict[str, float]] = {}  # command -> {target: own seconds}

# -- the dry pipeline: four CPU steps that print what vLLM/speculators print ------------------

DRY_EXTRACT = r"""
import json, multiprocessing as mp, os, sys, time
if __name__ == "__main__":
    out, batches, delay = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    os.makedirs(out, exist_ok=True)
    ctx = mp.get_context("spawn")          # as vLLM's workers (VLLM_WORKER_MULTIPROC_METHOD)
    ws = [ctx.Process(target=time.sleep, args=(600,), daemon=True) for _ in range(2)]
    for w in ws:
        w.start()
    print(f"INFO worker pids {[w.pid for w in ws]}", flush=True)
    for i in range(20):
        print(f"INFO engine init {i}", flush=True); time.sleep(delay)
    print("Loading safetensors checkpoint shards: 100% 1/1", flush=True); time.sleep(delay)
    print("INFO Model loading took 0.5 GiB memory and 0.9 seconds", flush=True)
    for b in range(1, batches + 1):
        time.sleep(delay)
        print(f"Generating hidden states: {100*b//batches}%| {b}/{batches} [00:0{b%10}<00:00]", flush=True)
        with open(os.path.join(out, f"data_{b}.pt"), "w") as f:
            f.write("x" * 100)
    for w in ws:
        w.terminate()
    print("done", flush=True)
"""
DRY_VERIFY = r"""
import json, os, sys
n = len([f for f in os.listdir(sys.argv[1]) if f.startswith("data_")])
print("HARNESS_VERIFY " + json.dumps({"checked": n, "total": n, "failed": [], "unit": "samples"}))
sys.exit(0 if n else 1)
"""
DRY_STEP = r"""
import sys, time
for i in range(int(sys.argv[1])):
    print(f"{sys.argv[2]} {i}", flush=True); time.sleep(0.05)
"""


def toml_str(code: str) -> str:
    return json.dumps(code.replace("{", "{{").replace("}", "}}"))


def dry_pipeline() -> Path:
    path = WORK / "pipeline-dry.toml"
    path.write_text(
        f"""# ssh_bench.py --dry: the pipeline's shape, on a CPU
[params]
data = "{{workdir}}/data"
batches = 30
delay = 0.2
[steps.prepare]
command = ["{{python}}", "-c", {toml_str(DRY_STEP)}, "20", "tokenising"]
[steps.extract]
command = ["{{python}}", "-c", {toml_str(DRY_EXTRACT)}, "{{data}}/gen", "{{batches}}", "{{delay}}"]
[steps.extract.verify]
command = ["{{python}}", "-c", {toml_str(DRY_VERIFY)}, "{{data}}/gen"]
[steps.vocab]
command = ["{{python}}", "-c", {toml_str(DRY_STEP)}, "10", "vocab"]
[steps.train]
command = ["{{python}}", "-c", {toml_str(DRY_STEP)}, "40", "train/loss=0.5 epoch=0"]
"""
    )
    return path


# -- helpers ----------------------------------------------------------------------------------


def pipe() -> list[str]:
    if OPTS.dry:
        return ["--pipeline", str(WORK / "pipeline-dry.toml"), "--patches", str(REPO / "patches")]
    return e2e.PIPE


def sets(**over: str) -> list[str]:
    """e2e's parameters (one epoch, fewer samples: the ratios are about harness, not the
    step), with ``over`` replacing some."""
    if OPTS.dry:
        base = {"data": str(WORK / "data")}
    else:
        base = dict(s.split("=", 1) for s in e2e.SETS)
        base |= {"max_samples": "64", "epochs": "1", "verify_samples": "16"}
    base |= over
    return [x for k, v in base.items() for x in ("--set", f"{k}={v}")]


def both(*args: str, name: str, timeout: float = 300) -> dict[str, Cmd]:
    """The same harness command over SSH (``-t gpu``) and on ``-t local``, timed."""
    got = {}
    for t in ("gpu", "local"):
        got[t] = harness(*args, "-t", t, name=f"{name} -t {t}", timeout=timeout)
        TIMES.setdefault(name, {})[t] = got[t].secs
    return got


def runs_now(step: str) -> set[str]:
    return {p.name for p in RUNS.glob(f"{step}-*")} if RUNS.is_dir() else set()


def new_run(
    step: str, before: set[str], proc: subprocess.Popen[bytes] | None, timeout: float = 60
) -> str | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        fresh = runs_now(step) - before
        if fresh:
            return sorted(fresh)[-1]
        if proc is not None and proc.poll() is not None:
            return None
        time.sleep(0.05)
    return None


def log_of(run_id: str) -> Path:
    return RUNS / run_id / "log"


def step_seconds(run_id: str) -> float | None:
    """The step's own time by its supervisor's clock (status.json written at its end)."""
    try:
        started = json.loads((RUNS / run_id / "supervisor.json").read_text())["started_at"]
        ended = json.loads((RUNS / run_id / "status.json").read_text())["ended_at"]
        return float(ended) - float(started)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def label(run_id: str, target: str = "gpu") -> str:
    r = harness("runs", "-t", target, "--json", name="runs --json", quiet=True)
    with contextlib.suppress(ValueError, KeyError, TypeError):
        for x in json.loads(r.out):
            if x["record"]["id"] == run_id:
                return str(x.get("label"))
    return "not listed"


class Bg:
    """A command in the background, its stdout as bytes in a file (for byte comparisons)."""

    def __init__(self, argv: list[str], name: str, **env: str) -> None:
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", name)
        (LOGS / "cmds").mkdir(parents=True, exist_ok=True)
        self.name, self.argv = name, argv
        self.out_path = LOGS / "cmds" / f"{safe}.stdout"
        self.err_path = LOGS / "cmds" / f"{safe}.stderr"
        self.t0 = time.perf_counter()
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.p = subprocess.Popen(
                argv, cwd=WORK, env={**e2e.ENV, **env}, stdout=out, stderr=err,
                stdin=subprocess.DEVNULL,
            )  # fmt: skip
        self.first_byte: float | None = None

    def wait(self, timeout: float, quiet: bool = False) -> Cmd:
        try:
            code = self.p.wait(timeout=max(1.0, timeout))
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            code = 124
        secs = time.perf_counter() - self.t0
        err = self.err_path.read_text(errors="replace")
        if not quiet:
            say(f"{self.name}: exit {code} ({secs:.1f} s)")
        return Cmd(code, "", err, secs)

    def stdout(self) -> bytes:
        return self.out_path.read_bytes()


def proc_table() -> dict[int, tuple[int, str]]:
    """pid -> (ppid, comm), from /proc."""
    out = {}
    for e in os.listdir("/proc"):
        if e.isdigit():
            try:
                stat = Path(f"/proc/{e}/stat").read_text()
            except OSError:
                continue
            comm = stat[stat.index("(") + 1 : stat.rindex(")")]
            fields = stat.rpartition(")")[2].split()
            if fields[0] not in ("Z", "X"):
                out[int(e)] = (int(fields[1]), comm)
    return out


def marked(run_id: str) -> list[tuple[int, str]]:
    """Live processes carrying the run's marker (HARNESS_RUN_ID=run_id), with their comm."""
    needle = f"HARNESS_RUN_ID={run_id}".encode()
    table = proc_table()
    found = []
    for pid, (_pp, comm) in table.items():
        with contextlib.suppress(OSError):
            if needle in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                found.append((pid, comm))
    return found


def cmdline(pid: int) -> str:
    try:
        return (
            Path(f"/proc/{pid}/cmdline")
            .read_bytes()
            .replace(b"\0", b" ")
            .decode(errors="replace")[:100]
        )
    except OSError:
        return "?"


def drop_ssh_sessions() -> list[int]:
    """SIGKILL the sshd processes serving connections: the listener's children (each one
    connection, ``sshd: root [priv]``) and their sshd children (``root@notty``); never the
    listener, never what a session launched (harness's supervisors)."""
    listener = int((STATE / "sshd.pid").read_text())
    table = proc_table()
    kids = [p for p, (pp, comm) in table.items() if pp == listener and comm.startswith("sshd")]
    victims = list(kids)
    todo = list(kids)
    while todo:
        p = todo.pop()
        sub = [c for c, (pp, comm) in table.items() if pp == p and comm.startswith("sshd")]
        victims += sub
        todo += sub
    for p in victims:
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, signal.SIGKILL)
    return victims


def gpu_mem() -> int | None:
    """MiB used, all GPUs together."""
    if not GPU:
        return None
    r = subprocess.run(
        ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    try:
        return sum(int(x) for x in r.stdout.split())
    except ValueError:
        return None


def gpu_apps() -> str:
    if not GPU:
        return "no nvidia-smi"
    r = subprocess.run(
        ["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    return "; ".join(r.stdout.split("\n")).strip("; ") or "(none listed)"


def nvidia_holders() -> list[tuple[int, str]]:
    """Processes with /dev/nvidia* open (what nvidia-smi cannot show inside a container)."""
    found = []
    for pid in proc_table():
        if pid == os.getpid():
            continue
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("/dev/nvidia"):
                        found.append((pid, cmdline(pid)))
                        break
    return found


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


# -- the parts --------------------------------------------------------------------------------


def up() -> bool:
    host_env = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    for k in (*PASS_ENV, "VLLM_USE_FLASHINFER_SAMPLER"):  # the last: e2e.ENV, no flashinfer
        if e2e.ENV.get(k):
            host_env[k] = e2e.ENV[k]
    env = {
        **os.environ,
        # one library from the debs even if the image has it, so that the check that an SSH
        # session does not inherit sshd's LD_LIBRARY_PATH is never vacuous
        "UP_PRETEND_MISSING": os.environ.get("UP_PRETEND_MISSING", "libwrap.so.0"),
        "HOST_PYTHON": e2e.PY,
        "HOST_WORKDIR": str(WORK),
        "HOST_ENV": "{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in host_env.items()) + " }",
    }
    subprocess.run(
        ["bash", str(REPO / "bench/gpu/ssh/down.sh"), str(STATE)], capture_output=True, check=False
    )
    t0 = time.perf_counter()
    cp = subprocess.run(
        ["bash", str(REPO / "bench/gpu/ssh/up.sh"), str(DEBS), str(STATE)],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    (LOGS / "up.txt").write_text(cp.stdout + cp.stderr)
    say(f"up.sh: exit {cp.returncode} ({time.perf_counter() - t0:.1f} s)")
    for line in (cp.stdout + cp.stderr).splitlines():
        say(f"  | {line}")
    if cp.returncode != 0:
        return False
    e2e.ENV["HARNESS_HOSTS"] = str(HOSTS)
    # the kept connection as a user meets it (e2e turns it off for -t local)
    e2e.ENV["HARNESS_SSH_PERSIST"] = "600"
    sess = dict(
        line.split("=", 1) for line in (STATE / "env.txt").read_text().splitlines() if "=" in line
    )
    lost = sorted(
        k for k in os.environ if k not in sess and not k.startswith(("HARNESS_", "E2E_", "SSH_"))
    )
    say(f"  ssh session env lacks {len(lost)} of this process's variables: {' '.join(lost[:40])}")
    say(f"  host env passed on (hosts.toml env, for runs): {' '.join(sorted(host_env))}")
    spath = sess.get("PATH", "")
    smi = [d for d in spath.split(":") if d and os.access(os.path.join(d, "nvidia-smi"), os.X_OK)]
    say(
        f"  nvidia-smi on the ssh session's PATH: {smi[0] + '/nvidia-smi' if smi else 'NOT FOUND'} (here: {shutil.which('nvidia-smi')})"
    )
    return True


def cheap_commands() -> None:
    r = both("hosts", "--check", name="hosts --check (cold: connect + kept connection)")
    for t, c in r.items():
        gpus = [
            line.strip()
            for line in c.out.splitlines()
            if line.strip().startswith(("gpus", "python"))
        ]
        say(f"  hosts --check -t {t}: {' | '.join(gpus) or c.err.strip()[-200:]}")
    both("hosts", "--check", name="hosts --check")
    harness(
        "revert-patches",
        *pipe()[2:],
        "-t",
        "local",
        name="revert-patches (start pristine)",
        quiet=True,
    )
    r = both(
        "check", "speculators", "--against", "vllm", "--json", *pipe()[2:], name="check (unpatched)"
    )
    for t, c in r.items():
        with contextlib.suppress(ValueError, KeyError, TypeError):
            rep = json.loads(c.out)
            errs = [f for f in rep["findings"] if f["severity"] == "error"]
            say(f"  check -t {t}: {len(errs)} error(s)")
    for t in ("gpu", "local"):  # each target applies once and reverts once, from the same state
        a = harness("apply-patches", *pipe()[2:], "-t", t, name=f"apply-patches -t {t}")
        TIMES.setdefault("apply-patches", {})[t] = a.secs
        say(f"  {a.out.strip().splitlines()[-1] if a.out.strip() else a.err.strip()[-200:]}")
        if t == "gpu":
            v = harness("revert-patches", *pipe()[2:], "-t", t, name=f"revert-patches -t {t}")
            TIMES.setdefault("revert-patches", {})[t] = v.secs
    v = harness("revert-patches", *pipe()[2:], "-t", "local", name="revert-patches -t local")
    TIMES.setdefault("revert-patches", {})["local"] = v.secs
    harness(
        "apply-patches",
        *pipe()[2:],
        "-t",
        "gpu",
        name="apply-patches -t gpu (for the runs)",
        quiet=True,
    )
    both(*e2e.CHECK_PATCHED, *pipe()[2:], name="check --with-patches")
    r = both("report", "extract", *sets(), *pipe(), name="report extract")
    for t, c in r.items():
        say(
            f"  report -t {t}: {c.out.strip().splitlines()[0] if c.out.strip() else c.err.strip()[-200:]}"
        )


def run_step(step: str, target: str, follow: bool = False, **over: str) -> str | None:
    """``harness run STEP -t TARGET`` in the foreground (as a user runs it); with ``follow``,
    a ``harness logs RUN --follow`` beside it from the moment the run exists (live), its
    output compared with the log on disk."""
    before = runs_now(step)
    tag = "" if target == "gpu" else "-local"
    if target == "local":  # outputs of their own: a step that finds its outputs may skip work
        over = {"data": str(WORK / "data-local"), **over}
        if not OPTS.dry:
            over.setdefault("run_name", "eagle3-local")
    run = Bg(
        ["harness", "run", step, "-t", target, *sets(**over), *pipe()], f"run {step} -t {target}"
    )
    run_id = new_run(step, before, run.p)
    fol = None
    if follow and run_id:
        fol = Bg(
            ["harness", "logs", run_id, "-t", target, "--follow"],
            f"logs --follow (live) -t {target}",
        )
    done = run.wait(timeout=max(60, left() - 20))
    WALL[(step, target)] = (done.code, done.secs)
    if done.code != 0:
        for line in done.err.splitlines()[-12:]:
            say(f"  | {line}")
    if not run_id:
        say(f"  {step} -t {target}: no run directory appeared")
        return None
    own = step_seconds(run_id)
    if own is not None:
        over_s = done.secs - own
        say(
            f"  {step} -t {target}: {run_id}, step {own:.1f} s, harness {over_s:.2f} s, {label(run_id, target)}"
        )
        TIMES.setdefault(f"run {step} (harness's own time)", {})[target] = over_s
    if fol is not None:
        f = fol.wait(timeout=60)
        got, disk = fol.stdout(), log_of(run_id).read_bytes()
        say(
            f"  logs --follow -t {target} while {step} ran: exit {f.code}, {len(got)} bytes, "
            f"{'byte-identical to' if got == disk else 'DIFFERS from'} the log on disk ({len(disk)} bytes)"
        )
        TIMES.setdefault("logs --follow (live, beside run)", {})[target] = f.secs
    with contextlib.suppress(OSError):
        shutil.copy(log_of(run_id), LOGS / f"{step}{tag}.log")
    pack()
    if step == "extract" and not OPTS.dry:
        log = log_of(run_id).read_text(errors="replace")
        load = e2e.vllm_line(log, r"Model loading took ([\d.]+ GiB(?: memory)? and [\d.]+ seconds)")
        say(f"  model load: {load or 'not in log'}")
    return run_id


def fault_drop_link() -> None:
    """FAULT 1: the link dies during model load or extraction; logs reattaches byte-exact."""
    if left() < 120:
        say("FAULT 1 (dropped link): skipped (time budget)")
        return
    before = runs_now("extract")
    run = Bg(
        ["harness", "run", "extract", "-t", "gpu", *sets(data=str(WORK / "data-f1")), *pipe()],
        "FAULT 1: run extract -t gpu", HARNESS_RUN_RECONNECT_S="0",
    )  # fmt: skip
    run_id = new_run("extract", before, run.p)
    if not run_id:
        run.wait(5)
        say("FAULT 1: the run did not start")
        return
    pat = re.compile(OPTS.kill_at.encode())
    t0 = time.monotonic()
    hit = None
    while time.monotonic() - t0 < 150 and run.p.poll() is None:  # else: drop it anyway
        with contextlib.suppress(OSError):
            m = pat.search(log_of(run_id).read_bytes())
            if m:
                hit = m.group(0).decode(errors="replace")
                break
        time.sleep(0.05)
    done_before = (RUNS / run_id / "status.json").exists()
    victims = drop_ssh_sessions()
    at = log_of(run_id).stat().st_size if log_of(run_id).exists() else 0
    say(
        f"FAULT 1: at '{hit}' ({time.monotonic() - t0:.1f} s after launch, log {at} bytes, step ended already: {done_before}): "
        f"SIGKILL to {len(victims)} sshd session process(es) {victims} (listener {(STATE / 'sshd.pid').read_text().strip()} kept)"
    )
    r = run.wait(timeout=60)
    kept = "keeps running on" in r.err
    say(f"  the run's own harness: exit {r.code}, says it keeps running there: {kept}")
    for line in r.err.splitlines()[-3:]:
        say(f"  | {line}")
    alive = marked(run_id)
    say(
        f"  step tree alive after the drop: {len(alive)} process(es) ({' '.join(c for _, c in alive)[:120]})"
    )
    fol = Bg(
        ["harness", "logs", run_id, "-t", "gpu", "--follow"],
        "FAULT 1: logs --follow -t gpu (reattach)",
    )
    f = fol.wait(timeout=max(60, left() - 60))
    got, disk = fol.stdout(), log_of(run_id).read_bytes()
    same = got == disk
    say(
        f"  reattached output {len(got)} bytes sha256 {sha(got)}, log on disk {len(disk)} bytes sha256 {sha(disk)}: "
        f"{'BYTE-IDENTICAL' if same else 'DIFFERENT'}"
    )
    if not same:
        n = next(
            (i for i, (a, b) in enumerate(zip(got, disk, strict=False)) if a != b),
            min(len(got), len(disk)),
        )
        say(f"  first difference at byte {n}: got {got[n : n + 60]!r} disk {disk[n : n + 60]!r}")
    copy = CACHE / "runs" / "gpu" / run_id / "log"
    if copy.exists():
        say(
            f"  local copy {copy}: {'byte-identical' if copy.read_bytes() == disk else 'DIFFERENT'} ({copy.stat().st_size} bytes)"
        )
    lab = label(run_id)
    ok = (
        f.code == 0
        and same
        and "succeeded" in lab
        and ("verified" in lab and "unverified" not in lab)
    )
    say(f"FAULT 1 result: {'PASS' if ok else 'FAIL'}: exit {f.code}, {lab}")
    shutil.copy(log_of(run_id), LOGS / "fault1-extract.log")
    pack()


def fault_stop() -> None:
    """FAULT 2: harness stop mid-run ends the whole tree and frees the GPU memory."""
    if left() < 90:
        say("FAULT 2 (stop): skipped (time budget)")
        return
    base = gpu_mem()
    say(
        f"FAULT 2: GPU memory before: {base} MiB used; compute apps: {gpu_apps()}; /dev/nvidia* holders: {len(nvidia_holders())}"
    )
    before = runs_now("extract")
    r = harness("run", "extract", "-t", "gpu", "--detach", *sets(data=str(WORK / "data-f2")), *pipe(),
                name="FAULT 2: run extract -t gpu --detach")  # fmt: skip
    run_id = new_run("extract", before, None, timeout=10)
    if r.code != 0 or not run_id:
        say("FAULT 2: the run did not start")
        return
    t0 = time.monotonic()
    peak, tree = base, []
    while time.monotonic() - t0 < 180:
        tree = marked(run_id)
        mem = gpu_mem()
        if GPU and mem is not None and base is not None and mem > base + 1024 and len(tree) >= 3:
            peak = mem
            break
        if (
            not GPU
            and any(b"worker pids" in line for line in log_of(run_id).read_bytes().splitlines())
            and len(tree) >= 4
        ):
            break
        if (RUNS / run_id / "status.json").exists():
            break
        time.sleep(0.5)
    tree = marked(run_id)
    say(
        f"  {time.monotonic() - t0:.1f} s after launch: GPU memory {peak} MiB used; compute apps: {gpu_apps()}"
    )
    say(
        f"  the run's tree: {len(tree)} process(es): "
        + "; ".join(f"{p} {c}" for p, c in tree)[:400]
    )
    holders = nvidia_holders()
    say(
        f"  /dev/nvidia* held by {len(holders)}: "
        + "; ".join(f"{p} {c[:60]}" for p, c in holders)[:300]
    )
    s = harness("stop", run_id, "-t", "gpu", name="FAULT 2: harness stop -t gpu")
    for line in (s.out + s.err).strip().splitlines()[-4:]:
        say(f"  | {line}")
    t1 = time.monotonic()
    left_procs = [p for p, _ in tree if Path(f"/proc/{p}").exists() and p in proc_table()]
    while time.monotonic() - t1 < 30 and (
        left_procs or (GPU and (gpu_mem() or 0) > (base or 0) + 64)
    ):
        time.sleep(0.25)
        left_procs = [p for p, _ in tree if p in proc_table()]
    after = gpu_mem()
    still = marked(run_id)
    say(
        f"  after stop (+{time.monotonic() - t1:.1f} s): processes of the tree left: {len(left_procs)} {left_procs}, "
        f"marked left: {len(still)}; GPU memory {after} MiB (baseline {base}); compute apps: {gpu_apps()}"
    )
    holders = nvidia_holders()
    say(
        f"  /dev/nvidia* holders now: {len(holders)} "
        + "; ".join(f"{p} {c[:60]}" for p, c in holders)[:300]
    )
    rep = harness("report", "extract", "-t", "gpu", "--format", "json", *sets(data=str(WORK / "data-f3")), *pipe(),
                  name="FAULT 2: report extract -t gpu (next run's preflight)")  # fmt: skip
    stale: Any = "unreadable"
    verdict = "?"
    with contextlib.suppress(ValueError, KeyError, TypeError):
        doc = json.loads(rep.out)
        stale, verdict = doc["stale_gpu_holders"], doc["verdict"]
    say(f"  report: verdict {verdict}, stale GPU holders: {stale}")
    lab = label(run_id)
    mem_ok = (not GPU) or (after is not None and base is not None and after <= base + 64)
    ok = not left_procs and not still and mem_ok and stale == [] and "killed" in lab
    say(
        f"FAULT 2 result: {'PASS' if ok else 'FAIL'}: {lab}; tree of {len(tree)} gone: {not left_procs and not still}; GPU memory {base} -> {peak} -> {after} MiB"
    )
    with contextlib.suppress(OSError):
        shutil.copy(log_of(run_id), LOGS / "fault2-extract.log")
    pack()


def ratios() -> None:
    say("SSH (-t gpu) vs -t local, seconds (for a run: harness's own time, wall less the step):")
    for name, d in TIMES.items():
        if "gpu" in d and "local" in d:
            g, lo = d["gpu"], d["local"]
            say(
                f"  {name}: gpu {g:.2f} s, local {lo:.2f} s, +{g - lo:.2f} s, x{g / lo:.2f}"
                if lo > 0
                else f"  {name}: gpu {g:.2f} s, local {lo:.2f} s"
            )


def main() -> int:
    e2e.fresh_dirs()
    say(
        f"ssh_bench{' --dry' if OPTS.dry else ''} on {os.uname().nodename}: {e2e.PY}; repo {REPO}; state {STATE}"
    )
    t0 = time.perf_counter()
    if OPTS.dry:
        dry_pipeline()
        say("dry: a CPU pipeline (prepare/extract/vocab/train printing vLLM-like lines)")
    else:
        e2e.build_model()
        say(f"built tiny Llama + dataset: {time.perf_counter() - t0:.1f} s")
    if not up():
        return 1
    try:
        cheap_commands()
        ids: dict[str, str | None] = {}
        for step in ("prepare", "extract", "vocab", "train"):
            if left() < 90:
                say(f"{step}: skipped (time budget)")
                continue
            ids[step] = run_step(step, "gpu", follow=step == "extract")
        both("runs", name="runs")
        if ids.get("extract"):
            for t in ("gpu", "local"):
                g = Bg(
                    ["harness", "logs", str(ids["extract"]), "-t", t],
                    f"logs (finished extract) -t {t}",
                )
                c = g.wait(60)
                TIMES.setdefault("logs (finished run, whole log)", {})[t] = c.secs
                say(
                    f"  logs -t {t}: {'byte-identical' if g.stdout() == log_of(str(ids['extract'])).read_bytes() else 'DIFFERENT'}"
                )
        fault_drop_link()
        fault_stop()
        # the -t local twins last, each only if the budget holds its -t gpu twin's time again
        for step in ("prepare", "extract", "vocab", "train") if not OPTS.no_local_steps else ():
            need = WALL.get((step, "gpu"), (1, 0.0))[1] * 1.15 + 15
            if (step, "gpu") not in WALL:
                say(f"{step} -t local: skipped (its -t gpu twin did not run)")
                continue
            if left() < need:
                say(
                    f"{step} -t local: skipped (time budget: {left():.0f} s left, {need:.0f} s needed)"
                )
                continue
            if step == "train" and WALL.get(("extract", "local"), (1, 0.0))[0] != 0:
                say("train -t local: skipped (no -t local extract to train on)")
                continue
            run_step(step, "local", follow=step == "extract")
        ratios()
    finally:
        harness("hosts", "--disconnect", "-t", "gpu", name="hosts --disconnect -t gpu", quiet=True)
        for name in ("hosts.toml", "sshd_config", "env.txt", "known_hosts"):  # no private keys
            with contextlib.suppress(OSError):
                shutil.copy(STATE / name, LOGS / f"ssh-{name}")
        cp = subprocess.run(
            ["bash", str(REPO / "bench/gpu/ssh/down.sh"), str(STATE)],
            capture_output=True,
            text=True,
            check=False,
        )
        say(f"down.sh: {cp.stdout.strip() or cp.stderr.strip()}")
        with contextlib.suppress(OSError):
            shutil.copy(STATE / "sshd.log", LOGS / "sshd.log")
        pack()
    say(f"ssh_bench done, {left():.0f} s of the budget left")
    return 0


if __name__ == "__main__":
    sys.exit(main())
