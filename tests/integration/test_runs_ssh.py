"""``harness run/runs/logs/stop`` against a real loopback sshd, with real processes; no mocks.

The sshd runs on this machine, so the "remote" run directory and processes are visible here:
the tests compare the local copy with the remote log byte for byte, and look in /proc for
processes that should be gone. Every wait is shortened through ``HARNESS_RUN_*`` so the whole
file takes seconds.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.sshd import SshServer

pytestmark = pytest.mark.ssh

COUNT = """
import sys, time
n, delay, code = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
for i in range(n):
    print(f"line {i} {time.time():.6f}", flush=True)
    time.sleep(delay)
sys.exit(code)
"""
CHATTY = """
import os, sys, time
n, delay = int(sys.argv[1]), float(sys.argv[2])
out = sys.stdout.buffer
for i in range(n):
    out.write(b"%d " % i + os.urandom(3000) + b"\\n")  # invalid UTF-8, stray \\r, anything
    out.flush()
    time.sleep(delay)
out.write(b"done\\n")
"""
TREE = """
import os, sys, time, signal
r, w = os.pipe()
child = os.fork()
if child == 0:
    grand = os.fork()
    if grand == 0:
        os.setsid()  # a worker that leaves the session and ignores SIGTERM
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True:
            time.sleep(1)
    os.write(w, str(grand).encode())
    while True:
        time.sleep(1)
grand = os.read(r, 32).decode()
time.sleep(0.2)  # the grandchild's setsid
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(f"{os.getpid()} {child} {grand}")
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
print("tree ready", flush=True)
while True:
    time.sleep(1)
"""
BIG = """
import sys
out = sys.stdout.buffer
out.write(b"start\\n")
chunk = b"x" * (1 << 20)
for _ in range(50):
    out.write(chunk)
out.write(b" end of the 50 MB line\\nbad bytes: \\xff\\xfe\\xc3(\\n")
for i in range(100000):
    out.write(b"\\rprogress %d/100000" % i)
out.write(b"\\n" + "fin \\U0001f916\\n".encode())
"""
SLEEP = "import time; print('sleeping', flush=True); time.sleep(120)"


def toml_str(code: str) -> str:
    """A program as a TOML string, its braces doubled (``{x}`` would be a parameter)."""
    return json.dumps(code.replace("{", "{{").replace("}", "}}"))


PIPELINE = f"""
[params]
n = 5
delay = 0.2
code = 3

[steps.count]
command = ["{{python}}", "-c", {toml_str(COUNT)}, "{{n}}", "{{delay}}", "{{code}}"]

[steps.chatty]
command = ["{{python}}", "-c", {toml_str(CHATTY)}, "{{n}}", "{{delay}}"]

[steps.tree]
command = ["{{python}}", "-c", {toml_str(TREE)}, "{{run_dir}}/pids"]

[steps.big]
command = ["{{python}}", "-c", {toml_str(BIG)}]

[steps.sleep]
command = ["{{python}}", "-c", {toml_str(SLEEP)}]
"""


@dataclass
class Done:
    code: int
    out: str
    err: str
    maxrss_kb: int = 0


@dataclass
class Harness:
    """Runs ``python -m harness`` as a user would: fresh process, own env, cwd with the pipeline."""

    cwd: Path
    env: dict[str, str]
    target: str
    workdir: Path

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "harness", *args]

    def __call__(self, *args: str, timeout: float = 60, **env: str) -> Done:
        cp = subprocess.run(
            self.argv(*args),
            cwd=self.cwd,
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        return Done(cp.returncode, cp.stdout, cp.stderr)

    def popen(
        self, *args: str, stdout: object = subprocess.PIPE, **env: str
    ) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            self.argv(*args),
            cwd=self.cwd,
            env={**self.env, **env},
            stdout=stdout,  # type: ignore[arg-type]
            stderr=subprocess.PIPE,
        )

    def launch(self, step: str, *sets: str) -> str:
        """``harness run STEP --detach``; the new run's id."""
        args = ["run", step, "-t", self.target, "--detach", "--json"]
        for s in sets:
            args += ["--set", s]
        r = self(*args)
        assert r.code == 0, r.err
        return str(json.loads(r.out)["record"]["id"])

    def run_dir(self, run_id: str) -> Path:
        return self.workdir / ".harness" / "runs" / run_id

    def copy(self, run_id: str) -> Path:
        key = "local" if self.target == "local" else self.target
        return Path(self.env["HARNESS_CACHE"]) / "runs" / key / run_id / "log"

    def status(self, run_id: str, timeout: float = 15.0) -> dict[str, object]:
        path = self.run_dir(run_id) / "status.json"
        deadline = time.monotonic() + timeout
        while not path.exists():
            assert time.monotonic() < deadline, f"no status for {run_id}"
            time.sleep(0.05)
        return dict(json.loads(path.read_text()))

    def state_of(self, run_id: str) -> str:
        r = self("runs", "-t", self.target, "--json")
        assert r.code == 0, r.err
        (row,) = [x for x in json.loads(r.out) if x["record"]["id"] == run_id]
        return str(row["label"])


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def wait_for(pred: object, timeout: float = 15.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not pred():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")


def marked(run_id: str) -> list[int]:
    """Live processes carrying HARNESS_RUN_ID=run_id (the "remote" host is this one)."""
    found = []
    needle = f"HARNESS_RUN_ID={run_id}".encode()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if needle in (entry / "environ").read_bytes().split(b"\0") and not gone(
                    int(entry.name)
                ):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def local_harness(tmp_path: Path, pipeline: str) -> Harness:
    """A user on the ``local`` target: ``pipeline`` in the current folder, an empty
    inventory, a workdir of its own, and no GPU device files (a glob that matches none)."""
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    (tmp_path / "pipeline.toml").write_text(pipeline)
    (tmp_path / "hosts.toml").write_text("")
    env = base_env(tmp_path) | {
        "HARNESS_HOSTS": str(tmp_path / "hosts.toml"),
        "HARNESS_WORKDIR": str(workdir),
        "HARNESS_RUN_GPU_DEVICES": str(workdir / "no-gpu*"),
    }
    return Harness(tmp_path, env, "local", workdir)


def base_env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_")}
    return env | {
        "HOME": str(home),
        "HARNESS_CACHE": str(tmp_path / "cache"),
        "HARNESS_SSH_PERSIST": "0",
        "COLUMNS": "200",
        "NO_COLOR": "1",
        "HARNESS_RUN_POLL_S": "0.05",
        "HARNESS_RUN_LOST_CHECK_S": "0.3",
        "HARNESS_RUN_RECONNECT_S": "20",
        "HARNESS_RUN_GRACE_S": "1",
        "HARNESS_RUN_STATUS_WAIT_S": "5",
    }


@pytest.fixture
def box(sshd: SshServer, tmp_path: Path) -> Iterator[Harness]:
    workdir = tmp_path / "work"
    workdir.mkdir()
    hosts = tmp_path / "hosts.toml"
    hosts.write_text(sshd.host_entry("box", python=sys.executable, workdir=str(workdir)))
    (tmp_path / "pipeline.toml").write_text(PIPELINE)
    env = base_env(tmp_path) | {"HARNESS_HOSTS": str(hosts)}
    h = Harness(tmp_path, env, "box", workdir)
    yield h
    for run in (workdir / ".harness" / "runs").glob("*"):  # nothing may outlive the test
        for pid in marked(run.name):
            os.kill(pid, signal.SIGKILL)


def read_lines(proc: subprocess.Popen[bytes]) -> list[tuple[float, str]]:
    """Every stdout line with the moment it arrived here."""
    assert proc.stdout is not None
    got = []
    for raw in iter(proc.stdout.readline, b""):
        got.append((time.time(), raw.decode("utf-8", "replace")))
    return got


# -- acceptance ------------------------------------------------------------------------------


def test_lines_are_shown_live_and_run_exits_with_the_step_code(box: Harness) -> None:
    start = time.time()
    proc = box.popen("run", "count", "-t", "box", "--set", "delay=0.3")
    lines = read_lines(proc)
    code = proc.wait(timeout=30)
    ended = time.time()
    err = proc.stderr.read().decode() if proc.stderr else ""
    assert code == 3, err
    shown = [(t, line) for t, line in lines if line.startswith("line ")]
    assert [line.split()[1] for _, line in shown] == ["0", "1", "2", "3", "4"]
    latencies = [t - float(line.split()[2]) for t, line in shown]
    assert statistics.median(latencies) < 0.5, latencies  # written there -> shown here
    assert max(latencies) < 1.0, latencies
    assert ended - shown[0][0] > 1.0  # the first line came long before the end: live
    assert shown[0][0] - start < 10
    assert re.search(r"✗ count-\S+ failed \(3\)", err), err
    assert "✓ command" in err and "– GPUs" in err  # one-line preflight verdicts
    run_id = re.search(r"following (count-\S+)", err).group(1)  # type: ignore[union-attr]
    assert box.state_of(run_id) == "failed (3)"
    listing = box("runs", "-t", "box")
    assert re.search(rf"{run_id}\s+count\s+failed \(3\)", listing.out), listing.out
    assert sha(box.copy(run_id)) == sha(box.run_dir(run_id) / "log")
    record = json.loads((box.run_dir(run_id) / "run.json").read_text())
    assert record["argv"][0] == sys.executable and record["env"]["PYTHONUNBUFFERED"] == "1"
    assert json.loads((box.run_dir(run_id) / "supervisor.json").read_text())["step_pid"] > 0


def test_a_dropped_link_keeps_the_step_and_logs_follow_resumes_byte_exact(
    box: Harness, sshd: SshServer
) -> None:
    # Foreground run that may not reconnect: the link drops, harness says how to reattach.
    proc = box.popen(
        "run", "chatty", "-t", "box", "--set", "n=150", "--set", "delay=0.02",
        stdout=subprocess.DEVNULL, HARNESS_RUN_RECONNECT_S="0",
    )  # fmt: skip
    assert proc.stderr is not None
    runs = box.workdir / ".harness" / "runs"
    wait_for(lambda: any(runs.glob("chatty-*/log")), what="the run to start")
    run_id = next(runs.glob("chatty-*")).name
    wait_for(lambda: box.copy(run_id).exists() and box.copy(run_id).stat().st_size > 20_000)
    assert sshd.kill_sessions() >= 1
    assert proc.wait(timeout=30) == 2
    err = proc.stderr.read().decode()
    assert f"{run_id} keeps running on box" in err, err
    assert f"harness logs {run_id} -t box --follow --offset" in err
    assert not (box.run_dir(run_id) / "status.json").exists()  # still running there

    # Reattach; the link drops again mid-stream and logs --follow reconnects by itself.
    with open(box.cwd / "follow.out", "wb") as out:
        follow = box.popen("logs", run_id, "-t", "box", "--follow", stdout=out)
        before = box.copy(run_id).stat().st_size
        wait_for(lambda: box.copy(run_id).stat().st_size > before + 20_000)
        assert sshd.kill_sessions() >= 1
        assert follow.wait(timeout=60) == 0  # the step's own exit code
    err = follow.stderr.read().decode() if follow.stderr else ""
    assert "lost" in err and "reconnected" in err, err
    assert box.status(run_id)["exit_code"] == 0  # the step never noticed
    remote = box.run_dir(run_id) / "log"
    assert remote.read_bytes().endswith(b"done\n")
    assert sha(box.copy(run_id)) == sha(remote)


def test_ctrl_c_detaches_and_an_offset_resumes_exactly(box: Harness) -> None:
    proc = box.popen("run", "count", "-t", "box", "--set", "n=40", "--set", "delay=0.05",
                     "--set", "code=0")  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    first = b"".join(proc.stdout.readline() for _ in range(5))
    proc.send_signal(signal.SIGINT)
    first += proc.stdout.read()
    assert proc.wait(timeout=20) == 130
    err = proc.stderr.read().decode()
    m = re.search(r"harness logs (count-\S+) -t box --follow --offset (\d+)", err)
    assert m and "detached" in err, err
    run_id, offset = m.group(1), int(m.group(2))
    assert offset == len(first)
    rest = box("logs", run_id, "-t", "box", "--follow", "--offset", str(offset))
    assert rest.code == 0, rest.err
    assert first + rest.out.encode() == (box.run_dir(run_id) / "log").read_bytes()
    tail = box("logs", run_id, "-t", "box", "--tail", "2")
    assert [ln.split()[:2] for ln in tail.out.splitlines()] == [["line", "38"], ["line", "39"]]


def test_stop_ends_the_whole_tree_including_a_setsid_worker_that_ignores_sigterm(
    box: Harness,
) -> None:
    run_id = box.launch("tree")
    pids_file = box.run_dir(run_id) / "pids"
    wait_for(pids_file.exists, what="the tree to start")
    pids = [int(p) for p in pids_file.read_text().split()]
    assert len(marked(run_id)) == 3
    r = box("stop", run_id, "-t", "box", "--grace", "0.5")
    assert r.code == 0, r.err + r.out
    assert "SIGTERM to 3 process(es)" in r.out and "SIGKILL after the grace period to 1" in r.out
    assert "GPU holders remaining: none" in r.out
    assert all(gone(p) for p in pids), [p for p in pids if not gone(p)]
    assert marked(run_id) == []
    assert box.state_of(run_id) == "killed (SIGTERM)"
    assert box.status(run_id)["stop_requested"] is True


def test_a_killed_supervisor_is_lost_not_running(box: Harness) -> None:
    run_id = box.launch("sleep")
    sup = json.loads((box.run_dir(run_id) / "supervisor.json").read_text())
    assert box.state_of(run_id) == "running"
    os.kill(sup["pid"], signal.SIGKILL)
    wait_for(lambda: gone(sup["pid"]), what="the supervisor to die")
    assert box.state_of(run_id) == "lost"
    follow = box("logs", run_id, "-t", "box", "--follow", timeout=30)
    assert follow.code == 1 and "lost" in follow.err, follow.err
    assert not gone(sup["step_pid"])  # the step itself lives on, unsupervised
    r = box("stop", run_id, "-t", "box")
    assert r.code == 0 and gone(sup["step_pid"]), r.out + r.err
    assert box.state_of(run_id) == "killed"


def test_huge_line_invalid_utf8_and_cr_storm_stream_in_bounded_memory(box: Harness) -> None:
    small = box.launch("count", "n=3", "delay=0", "code=0")
    box.status(small)
    big = box.launch("big")
    assert box.status(big, timeout=30)["exit_code"] == 0

    def follow(run_id: str) -> Done:
        with open(box.cwd / f"{run_id}.out", "wb") as out:
            proc = box.popen("logs", run_id, "-t", "box", "--follow", stdout=out)
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
        err = proc.stderr.read().decode() if proc.stderr else ""
        return Done(proc.returncode, "", err, usage.ru_maxrss)

    baseline = follow(small)
    heavy = follow(big)
    assert heavy.code == 0, heavy.err
    remote = box.run_dir(big) / "log"
    assert sha(box.copy(big)) == sha(remote)  # byte-exact, invalid bytes included
    shown = (box.cwd / f"{big}.out").read_bytes()
    assert len(shown) > 50 * (1 << 20)
    assert shown == remote.read_bytes()  # stdout is the step's bytes, unchanged (issue 10)
    assert b"bad bytes: \xff\xfe\xc3(" in shown and shown.endswith("fin \U0001f916\n".encode())
    grown_mb = (heavy.maxrss_kb - baseline.maxrss_kb) / 1024
    print(f"peak RSS: {baseline.maxrss_kb // 1024} MB small log, {heavy.maxrss_kb // 1024} MB big")
    assert grown_mb < 40, f"peak RSS grew {grown_mb:.0f} MB for a 50 MB line"


@pytest.mark.parametrize("follow", [False, True])
def test_tail_n_on_a_live_run_prints_the_last_n_lines(box: Harness, follow: bool) -> None:
    """Issue 10: ``logs --tail N`` on a running step, with and without --follow."""
    run_id = box.launch("count", "n=400", "delay=0.05", "code=0")
    log = box.run_dir(run_id) / "log"
    wait_for(lambda: log.exists() and log.read_bytes().count(b"\n") >= 20, what="20 lines")
    args = ["logs", run_id, "-t", "box", "--tail", "3"] + (["--follow"] if follow else [])
    r = box(*args, timeout=90)
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    if not follow:
        assert len(lines) == 3, r.out
        first = int(lines[0].split()[1])
        assert first >= 17 and [int(x.split()[1]) for x in lines] == [first, first + 1, first + 2]
        assert "still running" in r.err
    else:  # the last 3 lines at attach time, then everything to the end
        numbers = [int(x.split()[1]) for x in lines]
        assert numbers == list(range(numbers[0], 400)) and numbers[0] >= 17, numbers[:5]


def test_stop_grace_must_be_a_finite_number_before_any_signal(box: Harness) -> None:
    """Issue 10: ``--grace nan`` would never SIGKILL, ``inf`` never return, ``-1`` is nonsense."""
    run_id = box.launch("sleep")
    wait_for(lambda: (box.run_dir(run_id) / "log").exists(), what="the step")
    for bad in ("nan", "inf", "-1"):
        r = box("stop", run_id, "-t", "box", "--grace", bad)
        assert r.code == 2, (bad, r.out, r.err)
        assert "--grace" in r.err and "a number >= 0" in r.err and "Traceback" not in r.err
        assert "SIGTERM to" not in r.out
    assert box.state_of(run_id) == "running"  # nothing was signalled
    r = box("stop", run_id, "-t", "box", "--grace", "0")
    assert r.code == 0, r.err
    assert box.state_of(run_id) != "running"
