"""A step's output check, run by the supervisor (``verify`` in pipeline.toml) once the step
exited 0; copied into each run directory with the supervisor.

The verdict must come from the check alone:

1. nothing of the step may still run when the check starts: its process group, session and
   every process descending from the supervisor (a child subreaper: orphans come back to it)
   or carrying the run's ``HARNESS_RUN_ID`` get TERM, then KILL after ``GRACE`` seconds; how
   many were ended goes into the log and ``verify.json`` (``ended``);
2. a shipped check (``{run_dir}/verifiers/``) runs only with the bytes harness copied at
   launch: their sha256 are in the spec; a file changed, gone or added is a refused check
   (``refused``), never run;
3. the report is read from the check's own channels, never from the log: the pipe whose
   write end only the check gets (its number in ``HARNESS_VERIFY_FD``), else the last
   ``HARNESS_VERIFY {json}`` line of the check's own stdout/stderr -- a pipe too, copied
   into the log as it comes. A leftover of the step writing into the log is not heard.

A shipped check that names ``HARNESS_VERIFY_GATE`` in its source (the extraction check) is
started *with the step* (:func:`start_warm`): it loads torch, transformers and its reference's
code while the step runs, then waits at its gate -- a pipe only it holds -- for ``go``, sent
once the step exited 0 and 1. and 2. above are done (or EOF: the step failed, nothing to
check). Its start-up (~15 s of imports on the H200) then overlaps the step instead of
following it. It is in a session of its own, so ending the step's leftovers spares it. The
gate is reachable through ``/proc/PID/fd`` by any process of the user, the step included:
``go`` carries a secret the report must carry back, and a check that ended before ``go`` or
answered another one is refused (:func:`unanswered`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import select
import signal
import subprocess
import time
from typing import Any

from probes.runs._pin import moved
from probes.runs._proctree import run_tree, self_and_ancestors, terminate
from probes.runs._rundir import proc_stat, write_record

#: An output check reports its counts on a line starting with this
#: (harness.runs.record.verification)
VERIFY_MARK = b"HARNESS_VERIFY "
#: The environment variable naming the check's report fd
REPORT_FD_ENV = "HARNESS_VERIFY_FD"
#: Seconds between TERM and KILL for what the step left running
GRACE = 5.0
#: The most bytes of report kept (a report is a few kB; a runaway writer is cut)
REPORT_LIMIT = 16 << 20
#: Seconds the check's pipes are still read after it exited (a child of it may hold them)
DRAIN = 2.0
#: The environment variable giving a check the step's start (seconds since the epoch)
STARTED_ENV = "HARNESS_STEP_STARTED"
#: ... and a file stamped then, whose mtime is that start in the file clock (its name)
STARTED_FILE_ENV, STARTED_FILE = "HARNESS_STEP_STARTED_FILE", "started"
#: The environment variable naming a warm check's gate fd (``go`` on it: check now)
GATE_ENV = "HARNESS_VERIFY_GATE"
#: pid -> wait status of children the supervisor reaped while waiting for the step (a warm
#: check that ended early is one: its status is read from here)
REAPED: dict[int, int] = {}


class Started:
    """A check process with its pipes: output (copied into the log), report, and gate.

    A plain class, not a dataclass: ``dataclasses`` (and the ``inspect`` it imports) would
    cost every start of the run program ~10 ms, its log follower's included."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes] | None,
        out_r: int,
        rep_r: int,
        gate_w: int | None = None,
        error: str | None = None,
    ) -> None:
        self.proc = proc
        self.out_r = out_r
        self.rep_r = rep_r
        self.gate_w = gate_w
        self.error = error


def gated(argv: list[str], run_dir: str) -> bool:
    """Whether the check is a shipped one that waits at a gate (its source names GATE_ENV)."""
    shipped = os.path.join(run_dir, "verifiers") + os.sep
    for arg in argv[1:3]:
        if arg.startswith(shipped) and os.path.isfile(arg):
            with contextlib.suppress(OSError), open(arg, "rb") as f:
                return GATE_ENV.encode() in f.read()
    return False


def spawn(spec: dict[str, Any], env: dict[str, str], cwd: str | None, devnull: int,
          gate: bool) -> Started:  # fmt: skip
    """The check started in a session of its own; with ``gate``, waiting for ``go``."""
    out_r, out_w = os.pipe()
    rep_r, rep_w = os.pipe()
    gate_r, gate_w = os.pipe() if gate else (None, None)
    extra = {REPORT_FD_ENV: str(rep_w), **({GATE_ENV: str(gate_r)} if gate_r else {})}
    keep = (rep_w,) + ((gate_r,) if gate_r is not None else ())
    got = Started(None, out_r, rep_r, gate_w)
    try:
        got.proc = subprocess.Popen(spec["verify"], cwd=cwd, env={**env, **extra},
                                    stdin=devnull, stdout=out_w, stderr=out_w, pass_fds=keep,
                                    start_new_session=True, close_fds=True)  # fmt: skip
    except OSError as exc:
        got.error = str(exc.strerror or exc)
    for fd in (out_w, *keep):
        os.close(fd)
    return got


def start_warm(run_dir: str, spec: dict[str, Any], env: dict[str, str], cwd: str | None,
               devnull: int) -> Started | None:  # fmt: skip
    """A gated shipped check started beside the step (None: the check is not gated)."""
    if not spec.get("verify") or not gated(list(spec["verify"]), run_dir):
        return None
    return spawn(spec, env, cwd, devnull, gate=True)


def abandon(warm: Started) -> None:
    """The step failed or was stopped: close the gate (the check leaves), end what stays."""
    if warm.gate_w is not None:
        with contextlib.suppress(OSError):
            os.close(warm.gate_w)
    if warm.proc is not None:
        deadline = time.monotonic() + GRACE
        while time.monotonic() < deadline and warm.proc.poll() is None:
            time.sleep(0.05)
        if warm.proc.poll() is None:
            _signal(warm.proc.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError, OSError):
                warm.proc.wait(1.0)
    for fd in (warm.out_r, warm.rep_r):
        with contextlib.suppress(OSError):
            os.close(fd)


def sha256_of(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def shipped_hashes(folder: str) -> dict[str, str]:
    """Name -> sha256 of each file in the run's verifiers folder (what launch copied)."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return {}
    return {n: h for n in names if (h := sha256_of(os.path.join(folder, n))) is not None}


def changed(run_dir: str, launched: dict[str, str]) -> str | None:
    """Why the shipped checks may not run (a file changed since launch), or None."""
    if not launched:
        return None
    now = shipped_hashes(os.path.join(run_dir, "verifiers"))
    for name, digest in sorted(launched.items()):
        got = now.get(name)
        if got != digest:
            was = "gone" if got is None else f"{got[:12]} now"
            return (f"the check {name} was changed after launch (sha256 {digest[:12]} at "
                    f"launch, {was}); not run")  # fmt: skip
    added = sorted(set(now) - set(launched))
    if added:
        return f"the checks' folder gained {', '.join(added)} after launch; not run"
    return None


def end_leftovers(
    run_id: str, step_sid: int | None, spare: int | None = None
) -> dict[str, list[int]]:
    """TERM, then KILL, whatever of the step still runs; reap what was ours. ``spare``: the
    session of a warm check (started with the step, waiting at its gate)."""
    procs = run_tree(run_id, {os.getpid()}, step_sid, self_and_ancestors())
    if spare is not None:
        procs = [p for p in procs if (proc_stat(p["pid"]) or {}).get("session") != spare]
    if not procs:
        return {"terminated": [], "killed": [], "remaining": []}
    gone = terminate(procs, GRACE)
    with contextlib.suppress(ChildProcessError):
        while (got := os.waitpid(-1, os.WNOHANG))[0] > 0:
            REAPED[got[0]] = got[1]  # a warm check that already ended is told apart by it
    return gone


def run_check(run_dir: str, spec: dict[str, Any], env: dict[str, str], cwd: str | None,
              devnull: int, step: list[int], warm: Started | None = None) -> None:  # fmt: skip
    """Run the step's output check like the step (its env, cwd, own session, its output in
    the log), within its time limit; write verify.json. ``warm``: the check already started
    with the step, waiting at its gate."""
    log = os.open(os.path.join(run_dir, "log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    shown = spec.get("verify_display") or spec["verify"][0]  # masked: secrets never hit disk
    say(log, f"harness: verifying the output: {shown}\n".encode("utf-8", "replace"))
    limit = float(spec.get("verify_timeout") or 3600.0)
    out: dict[str, Any] = {"exit_code": None, "signal": None, "timed_out": False,
                           "timeout": limit, "started_at": time.time()}  # fmt: skip
    spare = warm.proc.pid if warm is not None and warm.proc is not None else None
    gone = end_leftovers(os.path.basename(run_dir.rstrip("/")), step[0] if step else None, spare)
    out["ended"] = gone
    n = len(gone["terminated"]) + len(gone["killed"])
    if n:
        pids = ", ".join(map(str, gone["terminated"] + gone["killed"]))
        say(log, f"harness: ended {n} process{'es' if n > 1 else ''} the step left running, "
                 f"before its check (pids {pids})\n".encode())  # fmt: skip
    if gone["remaining"]:
        say(log, f"harness: could not end {gone['remaining']} (left by the step)\n".encode())
    refused = changed(run_dir, spec.get("verifiers_sha256") or {}) or moved(
        spec.get("verify_pinned") or {}
    )
    if refused:
        say(log, f"harness: {refused}\n".encode("utf-8", "replace"))
        out.update(refused=refused, ended_at=time.time(), report=None)
        os.close(log)
        if warm is not None:
            abandon(warm)
        write_record(run_dir, "verify.json", out)
        return
    started = warm if warm is not None else spawn(spec, env, cwd, devnull, gate=False)
    proc = started.proc
    secret, early = None, False
    if started.gate_w is not None:  # the warm check: go, with a secret its report carries
        out["warm"] = True
        early, secret = ended_early(proc), os.urandom(16).hex()
        with contextlib.suppress(OSError):  # a check already gone: EPIPE, nothing said
            os.write(started.gate_w, b"go " + secret.encode() + b"\n")
        with contextlib.suppress(OSError):
            os.close(started.gate_w)
    if started.error is not None:
        say(log, f"harness: cannot start the check: {started.error}\n".encode())
        out["exit_code"] = 127
    got = Channels(started.out_r, started.rep_r, log)
    if proc is not None:
        if proc.pid not in step:
            step.append(proc.pid)  # a SIGTERM to the supervisor reaches the check too
        _wait(proc, got, out, limit)
    got.drain(time.monotonic() + DRAIN)
    out["ended_at"] = time.time()
    out["report"], out["report_from"] = got.report()
    if secret is not None and (why := unanswered(out, secret, early)):
        say(log, f"harness: {why}\n".encode())
        out["refused"] = why
    os.close(log)
    write_record(run_dir, "verify.json", out)


def ended_early(proc: subprocess.Popen[bytes] | None) -> bool:
    """Whether a warm check already exited when ``go`` is due."""
    if proc is None or proc.pid in REAPED:
        return proc is not None
    with contextlib.suppress(ChildProcessError):
        pid, wstatus = os.waitpid(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            REAPED[pid] = wstatus  # _wait reads its status from here
            return True
    return False


def unanswered(out: dict[str, Any], secret: str, early: bool) -> str | None:
    """Why a warm check's verdict is not taken: it did not answer the supervisor's own ``go``.
    The gate pipe is reachable through ``/proc/PID/fd``: the step can say ``go`` first, and the
    check judges the outputs at a moment the step picks. The secret is taken out of the
    report; a check that crashed before ``go`` (no report, no exit 0) keeps its own words."""
    report = out.get("report")
    got = report.pop("go", None) if isinstance(report, dict) else None
    if early and (report is not None or out.get("exit_code") == 0):
        return ("the check ended before the supervisor's go (another process opened its gate "
                "through /proc and said go); its verdict is not taken")  # fmt: skip
    if (isinstance(report, dict) and got != secret) or (
        report is None and out.get("exit_code") == 0  # "go" garbled by another writer: it left
    ):
        return (
            "the check's report does not answer the supervisor's go (another process "
            "opened its gate through /proc and said go first); its verdict is not taken"
        )
    return None


def _wait(proc: subprocess.Popen[bytes], got: Channels, out: dict[str, Any], limit: float) -> None:
    deadline = time.monotonic() + limit
    while True:
        got.read(0.1)
        try:
            pid, wstatus = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            pid = proc.pid if proc.pid in REAPED else -1
            if pid == -1:
                return
        if pid == 0 and proc.pid in REAPED:
            pid = proc.pid
        if pid == proc.pid:
            wstatus = REAPED.pop(pid) if pid in REAPED else wstatus
            proc.returncode = 0  # reaped here, not by Popen
            if os.WIFSIGNALED(wstatus):
                out["signal"] = os.WTERMSIG(wstatus)
            else:
                out["exit_code"] = os.WEXITSTATUS(wstatus)
            return
        if pid == 0:
            if time.monotonic() > deadline and not out["timed_out"]:
                out["timed_out"] = True
                _signal(proc.pid, signal.SIGTERM)
                deadline = time.monotonic() + 10.0
            elif out["timed_out"] and time.monotonic() > deadline:
                _signal(proc.pid, signal.SIGKILL)


class Channels:
    """The check's output (copied into the log, its marker lines kept) and its report pipe."""

    def __init__(self, out_fd: int, report_fd: int, log: int) -> None:
        self.log = log
        self.open = [out_fd, report_fd]
        self.out_fd, self.report_fd = out_fd, report_fd
        self.line = bytearray()  # the output's unfinished line
        self.marked: bytes | None = None  # the output's last marker line
        self.sent = bytearray()  # what came on the report pipe

    def read(self, wait: float) -> None:
        if not self.open:
            time.sleep(wait)
            return
        ready, _, _ = select.select(self.open, [], [], wait)
        for fd in ready:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                self.open.remove(fd)
                os.close(fd)
            elif fd == self.out_fd:
                say(self.log, chunk)
                self._scan(chunk)
            elif len(self.sent) < REPORT_LIMIT:
                self.sent += chunk

    def _scan(self, chunk: bytes) -> None:
        self.line += chunk
        *whole, rest = bytes(self.line).split(b"\n")
        for line in whole:
            if line.startswith(VERIFY_MARK):
                self.marked = line
        self.line = bytearray(rest[-REPORT_LIMIT:])

    def drain(self, until: float) -> None:
        while self.open and time.monotonic() < until:
            self.read(0.05)
        for fd in self.open:
            os.close(fd)
        self.open = []
        if self.line.startswith(VERIFY_MARK):
            self.marked = bytes(self.line)

    def report(self) -> tuple[Any, str | None]:
        """The report from the pipe if the check wrote one there, else from its output."""
        for line in reversed(bytes(self.sent).splitlines()):
            found = _parse(line[len(VERIFY_MARK) :] if line.startswith(VERIFY_MARK) else line)
            if found is not None:
                return found, "fd"
        found = _parse(self.marked[len(VERIFY_MARK) :]) if self.marked else None
        return (found, "output") if found is not None else (None, None)


def _parse(data: bytes) -> dict[str, Any] | None:
    with contextlib.suppress(ValueError):
        found = json.loads(data.decode("utf-8", "replace"))
        return found if isinstance(found, dict) else None
    return None


def say(log: int, line: bytes) -> None:
    """harness's own line in the step's log; a full disk keeps it out, nothing worse."""
    with contextlib.suppress(OSError):
        os.write(log, line)


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(OSError):
        os.killpg(pid, sig)
