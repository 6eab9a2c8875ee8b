"""The run program: ``python supervisor.py supervise RUN_DIR`` and ``... follow RUN_DIR OFFSET``.

``launch`` (in the ``runs`` probe, :mod:`probes.runs.runs`) writes this file into each run
directory, with the two modules it imports beside it (:mod:`probes.runs._rundir`,
:mod:`probes.runs._follow`; ``harness.probe_files.PROGRAM``): the copy runs by its path for
as long as the run exists -- days, across harness upgrades on the laptop -- so it imports nothing
but the stdlib and those copies, which it names ``probes.runs`` when it starts. ``supervise`` is the
small process that starts the step and waits for it, so that a SIGKILLed step still gets a status;
``follow`` streams the log from a byte offset on stdout (the laptop reads it through a raw SSH
channel) and ends once the step's status exists and the log is drained.

Why a supervisor at all: the step must outlive the SSH session (laptop asleep, link dropped),
so it runs in its own session with stdin from /dev/null and its output in a file. Something
must still ``waitpid`` it to learn the exit code or signal, and write that down atomically.
The supervisor records its own pid and kernel start time, so a supervisor that was itself
killed is reported as ``lost`` instead of ``running`` forever.

Run directory (``<workdir>/.harness/runs/<run-id>/``)::

    run.json         resolved command, cwd, env additions (secrets masked), created_at
    supervisor.py    this file, exactly as it ran
    _rundir.py       the modules it imports, exactly as they ran
    _follow.py       (and _verify.py: the output check's run; _pin.py: the files of a
                     user's check, pinned at launch; _proctree.py, _stop.py,
                     _service.py, _ports.py: a service's start and stop)
    supervisor.json  supervisor pid + start time + boot id, step pid/pgid/sid + start time
    log              the step's stdout and stderr, byte for byte
    verify.json      the output check's verdict (``verify`` in pipeline.toml), run after a 0
                     exit and written before status.json: a run is running until judged
                     (probes/runs/_verify.py: leftovers of the step ended first, the report read
                     from the check's own pipe, a shipped check changed since launch refused)
    verifiers/       harness's own output checks, for ``{verifiers}`` in a command
    status.json      written atomically when the step ends: exit code or signal, end time
                     (a service that never got ready: ``not_ready``; the services a step
                     stopped at its end: ``services``)
    started          empty; its mtime: the step's start in the file clock (the check's
                     ``HARNESS_STEP_STARTED_FILE``)
    ready.json       a service step's: its health URL answered 200 (probes/runs/_service.py)
    stop.json        written by ``stop`` before it signals (so the state reads ``killed``)
    supervisor.err   the supervisor's own stderr, for the rare crash
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import signal
import subprocess
import sys
import time
import types
from typing import Any

if __name__ == "__main__":  # run by its path: ``probes.runs`` is the run directory's copies
    for _name in ("probes", "probes.runs"):
        _here = types.ModuleType(_name)
        _here.__path__ = [os.path.dirname(os.path.abspath(__file__))]
        sys.modules[_name] = _here
    sys.modules["probes"].runs = sys.modules["probes.runs"]  # type: ignore[attr-defined]

from probes.runs._fill import watch
from probes.runs._follow import follow_command
from probes.runs._rundir import (
    FULL_BELOW,
    HOOK_DIR,
    RESERVE,
    RUN_ID_ENV,
    boot_id,
    make_reserve,
    proc_stat,
    space_left,
    write_record,
)
from probes.runs._service import (
    port_taken,
    say_service_errors,
    stop_services,
    until_claimed,
    wait_ready,
)
from probes.runs._verify import (  # noqa: F401 - the mark: the contract tests
    REAPED,
    STARTED_ENV,
    STARTED_FILE,
    STARTED_FILE_ENV,
    VERIFY_MARK,
    Started,
    abandon,
    run_check,
    start_warm,
)

PROTOCOL = 1


def _become_subreaper() -> None:
    """Orphans of the step's tree are re-parented to us, not to init (Linux >= 3.4)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def supervise(run_dir: str) -> int:
    """Start the step, reap it (and any orphan of its tree), write status.json; then exit."""
    spec = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    step: list[int] = []
    # Handlers, not SIG_IGN: an ignored signal stays ignored across exec, and the step must
    # start with default dispositions. A SIGTERM to the supervisor is passed on to the
    # step's process group, so "kill SUPERVISOR" stops the step and still records a status.
    signal.signal(signal.SIGHUP, _ignore)
    signal.signal(signal.SIGINT, _ignore)
    signal.signal(signal.SIGTERM, lambda *_: _forward(step, signal.SIGTERM))
    _become_subreaper()
    run_id = os.path.basename(run_dir.rstrip("/"))
    env = dict(os.environ)
    env.update(spec.get("env") or {})
    env[RUN_ID_ENV] = run_id
    front = spec.get("pythonpath_front") or []
    if front:
        env["PYTHONPATH"] = os.pathsep.join([*front, *filter(None, [env.get("PYTHONPATH")])])
    log = os.open(os.path.join(run_dir, "log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    make_reserve(run_dir)
    me = proc_stat(os.getpid()) or {}
    info: dict[str, Any] = {
        "protocol": PROTOCOL,
        "pid": os.getpid(),
        "starttime": me.get("starttime"),
        "boot_id": boot_id(),
        "step_pid": None,
        "step_starttime": None,
        "step_pgid": None,
        "step_sid": None,
        "started_at": time.time(),
    }
    status: dict[str, Any] = {"exit_code": None, "signal": None, "error": None}
    cwd = spec.get("cwd") or None
    if cwd is not None and not os.path.isdir(cwd):
        return _not_started(run_dir, log, info, f"the step's cwd {cwd} does not exist", 127)
    taken = port_taken(run_dir, spec["service"]) if spec.get("service") else None
    if taken is not None:  # never a second server behind another's answers
        return _not_started(run_dir, log, info, taken, None, not_ready=taken)
    mark = _stamp(run_dir)  # the step's start in the file clock (the outputs' own, if theirs)
    before = time.time()
    try:
        proc = subprocess.Popen(
            spec["argv"],
            cwd=cwd,
            env=env,
            stdin=devnull,
            stdout=log,
            stderr=log,
            start_new_session=True,  # its own session and process group
            close_fds=True,
            restore_signals=True,
        )
    except OSError as exc:
        why = f"{spec['argv'][0]}: {exc.strerror or exc}"
        if exc.errno == errno.E2BIG:
            why += _too_long(spec["argv"], env)
        return _not_started(
            run_dir, log, info, why, 126 if isinstance(exc, PermissionError) else 127
        )
    step.append(proc.pid)
    st = proc_stat(proc.pid) or {}
    info.update(
        step_pid=proc.pid,
        step_starttime=st.get("starttime"),
        step_pgid=proc.pid,
        step_sid=proc.pid,
        started_at=time.time(),
    )
    try:
        write_record(run_dir, "supervisor.json", info)
    except OSError:
        _forward(step, signal.SIGKILL)  # no handshake: the launch is undone, the step too
        raise
    os.close(log)
    # the check (not the step) learns when the step started: outputs older than that were
    # not written by this run (a step that resumes keeps an earlier run's files); in seconds
    # taken before the step could write, and as a file stamped by the file clock
    env = {**env, STARTED_ENV: repr(before), **({STARTED_FILE_ENV: mark} if mark else {})}
    warm = None if spec.get("service") else start_warm(run_dir, spec, env, cwd, devnull)
    if warm is not None and warm.proc is not None:
        step.append(warm.proc.pid)  # a SIGTERM to the supervisor reaches it too
    if spec.get("watch"):  # a step that declared its disk budget: its filesystem at 90 %
        watch(spec["watch"], _say_in(run_dir), run_dir)
    wstatus = None
    if spec.get("service"):  # a server: ready when its health URL answers
        wstatus = _until_ready(run_dir, spec, proc.pid, status)
        if wstatus is None and "not_ready" not in status:  # ready: ends unless a run uses it
            wstatus = until_claimed(run_dir, spec, proc.pid, lambda p: _reap(p, block=False),
                                    _say_in(run_dir))  # fmt: skip
    if wstatus is None:
        wstatus = _reap(proc.pid, block=True)
    proc.returncode = 0  # reaped here, not by Popen
    if wstatus is None:
        status["error"] = "the step vanished without an exit status"
    elif os.WIFSIGNALED(wstatus):
        status["signal"] = os.WTERMSIG(wstatus)
    else:
        status["exit_code"] = os.WEXITSTATUS(wstatus)
    stopped = os.path.exists(os.path.join(run_dir, "stop.json"))
    if status["exit_code"] == 0 and spec.get("verify") and not stopped:
        _verify(run_dir, spec, env, cwd, devnull, step, warm)
    elif warm is not None:
        abandon(warm)  # nothing to check: the warm check leaves
    if spec.get("services") and status["exit_code"] != 0 and not stopped:
        say_service_errors(run_dir, spec, _say_in(run_dir))  # a client's 500 is the server's
    if spec.get("services"):  # the services this step needed end with it, unless kept
        status["services"] = stop_services(run_dir, spec, _say_in(run_dir))
    _finish(run_dir, status)
    return 0


def _stamp(run_dir: str) -> str | None:
    """``started``: an empty file whose mtime is the step's start as the filesystem's clock
    says it -- coarser than ``time.time()``, or a file server's: the clock of the outputs'
    mtimes when they are on this filesystem (the extraction check compares with it)."""
    path = os.path.join(run_dir, STARTED_FILE)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644))
    except OSError:
        return None
    return path


def _reap(pid: int, block: bool) -> int | None:
    """Reap children (orphans of the tree too) until ``pid`` is among them: its wait status;
    ``None`` when it has not exited (``block`` false) or no child is left."""
    while True:
        try:
            got, wstatus = os.waitpid(-1, 0 if block else os.WNOHANG)
        except InterruptedError:
            continue
        except ChildProcessError:  # nothing left to wait for: gone, as far as we can tell
            return None if block else 0
        if got == pid:
            return wstatus
        if got == 0:
            return None
        REAPED[got] = wstatus  # another child: a warm check that ended early, for run_check


def _until_ready(run_dir: str, spec: dict[str, Any], pid: int, status: dict[str, Any]) -> Any:
    """A service's start: ``ready.json`` once it answers, or ``not_ready`` in the status
    when it exits or times out first. The server's wait status if it was reaped here."""
    service = {**spec["service"], "grace": spec.get("grace") or 10.0}
    got = wait_ready(run_dir, pid, service, lambda p: _reap(p, block=False), _say_in(run_dir))
    why = "".join(f"; {w}" for w in got.get("why") or ())
    if "exited" in got:
        status["not_ready"] = "the server exited before it was ready" + why
        return got["exited"]
    if "timeout" in got:
        status["not_ready"] = (
            f"the server was not ready within {got['timeout']:g}s (ready_timeout); "
            "its processes were ended" + why
        )
    return None


def _say_in(run_dir: str) -> Any:
    """harness's own lines into the run's log, each on a line of its own."""

    def say(text: str) -> None:
        with contextlib.suppress(OSError):
            fd = os.open(os.path.join(run_dir, "log"), os.O_WRONLY | os.O_APPEND)
            try:
                _say(fd, (text + "\n").encode("utf-8", "replace"))
            finally:
                os.close(fd)

    return say


def _verify(
    run_dir: str,
    spec: dict[str, Any],
    env: dict[str, str],
    cwd: str | None,
    devnull: int,
    step: list[int],
    warm: Started | None = None,
) -> None:
    """Run the step's output check (:mod:`probes.runs._verify`): what the step left running is
    ended first, a shipped check changed since launch is refused, and the verdict is read
    from the check's own channels, never from the log; verify.json is written. ``warm``: the
    check started with the step, waiting at its gate."""
    run_check(run_dir, spec, env, cwd, devnull, step, warm)


def _too_long(argv: list[str], env: dict[str, str]) -> str:
    """Why the OS refused the command line (E2BIG): its size against the limits."""
    size = sum(len(a.encode("utf-8", "surrogateescape")) + 1 for a in argv)
    longest = max(len(a.encode("utf-8", "surrogateescape")) for a in argv)
    env_size = sum(len(k) + len(v) + 2 for k, v in env.items())
    try:
        limit = f"{os.sysconf('SC_ARG_MAX'):,} bytes"
    except (ValueError, OSError):
        limit = "ARG_MAX"
    return (
        f" (the command is {size:,} bytes, its longest argument {longest:,}; the environment "
        f"{env_size:,}; this system takes {limit} for both together, and on Linux 131,072 "
        "for one argument)"
    )


def _not_started(
    run_dir: str,
    log: int,
    info: dict[str, Any],
    why: str,
    code: int | None,
    not_ready: str | None = None,
) -> int:
    """The step could not be started: say so in its log and in the status (126/127; a
    service whose port is taken: ``not_ready``, no code)."""
    msg = f"harness: cannot start the step: {why}"
    _say(log, (msg + "\n").encode("utf-8", "replace"))
    write_record(run_dir, "supervisor.json", info)
    status = {"exit_code": code, "signal": None, "error": msg}
    _finish(run_dir, {**status, "not_ready": not_ready} if not_ready else status)
    return 0


def _say(log: int, line: bytes) -> None:
    """harness's own line in the step's log; a full disk keeps it out, nothing worse."""
    with contextlib.suppress(OSError):
        os.write(log, line)


def _ignore(*_args: Any) -> None:
    """A no-op handler (see :func:`supervise` for why not ``SIG_IGN``)."""


def _forward(step: list[int], sig: int) -> None:
    for pid in step:
        with contextlib.suppress(OSError):
            os.killpg(pid, sig)


def _finish(run_dir: str, status: dict[str, Any]) -> None:
    import shutil

    shutil.rmtree(os.path.join(run_dir, HOOK_DIR), ignore_errors=True)  # gone with the run
    status["ended_at"] = time.time()
    status["stop_requested"] = os.path.exists(os.path.join(run_dir, "stop.json"))
    left = space_left(run_dir)
    if left is not None and left < FULL_BELOW:  # the step's output may have been cut short
        status["disk_full"] = {"path": run_dir, "space_left": left}
    write_record(run_dir, "status.json", status)
    with contextlib.suppress(OSError):
        os.unlink(os.path.join(run_dir, RESERVE))  # the run is over: the space goes back


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "supervise":
        return supervise(argv[1])
    if len(argv) >= 3 and argv[0] == "follow":
        return follow_command(argv)
    sys.stderr.write("usage: supervisor.py supervise RUN_DIR | follow RUN_DIR OFFSET [--once]\n")
    return 2


if __name__ == "__main__":
    try:
        code = main(sys.argv[1:])
    except KeyboardInterrupt:
        code = 130
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        code = 0
    sys.exit(code)
