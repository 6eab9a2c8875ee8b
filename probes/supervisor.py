"""The remote half of ``harness run``: launch, supervise, follow, list and stop pipeline steps.

One stdlib-only file, run by the target's own Python, in two ways:

* **As a probe** (shipped by :func:`harness.probe_runner.run_probe`, JSON arguments on stdin, one
  envelope on stdout): ``run(args)`` with ``args["op"]`` one of ``preflight`` (facts for the
  one-line verdicts: interpreter, workdir, command, GPUs, processes holding GPU devices, runs),
  ``holders`` (just the GPU holders and their runs), ``launch`` (make the run directory,
  start the supervisor, wait for its handshake), ``list`` (facts about every run) and
  ``stop`` (SIGTERM the step's whole tree, SIGKILL after the grace period, report what
  still holds a GPU).
* **As a program**, from the copy that ``launch`` writes into each run directory:
  ``python supervisor.py supervise RUN_DIR`` is the small process that starts the step and
  waits for it, so that a SIGKILLed step still gets a status; ``python supervisor.py follow
  RUN_DIR OFFSET`` streams the log from a byte offset on stdout (the laptop reads it through a
  raw SSH channel) and ends once the step's status exists and the log is drained.

Why one file: the copy in each run directory runs by its path (``python supervisor.py ...``),
with no other module beside it, for as long as the run exists -- days, across harness upgrades
on the laptop; ``follow`` and ``supervise`` must work from that one file alone. (The file
helpers, /proc reading, run directories, the probe operations, the supervisor and the
follower are its sections, in that order.)

Why a supervisor at all: the step must outlive the SSH session (laptop asleep, link dropped),
so it runs in its own session with stdin from /dev/null and its output in a file. Something
must still ``waitpid`` it to learn the exit code or signal, and write that down atomically.
The supervisor records its own pid and kernel start time, so a supervisor that was itself
killed is reported as ``lost`` instead of ``running`` forever.

Run directory (``<workdir>/.harness/runs/<run-id>/``)::

    run.json         resolved command, cwd, env additions (secrets masked), created_at
    supervisor.py    this file, exactly as it ran
    supervisor.json  supervisor pid + start time + boot id, step pid/pgid/sid + start time
    log              the step's stdout and stderr, byte for byte
    verify.json      the output check's verdict (``verify`` in pipeline.toml), run after a 0
                     exit and written before status.json: a run is running until judged
    verifiers/       harness's own output checks, for ``{verifiers}`` in a command
    status.json      written atomically when the step ends: exit code or signal, end time
    stop.json        written by ``stop`` before it signals (so the state reads ``killed``)
    supervisor.err   the supervisor's own stderr, for the rare crash

Secrets (the real argv and environment) never touch the disk: ``launch`` hands them to the
supervisor on a pipe.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

PROTOCOL = 1
#: Set on the step; every descendant inherits it, even one that called ``setsid``.
RUN_ID_ENV = "HARNESS_RUN_ID"
#: First bytes ``follow`` writes, so a login script's noise before it can be cut off.
STREAM_MARK = b"\x1eharness-follow\x1e\n"
#: ``follow`` ends with this marker and a JSON line on stderr.
END_MARK = "\x1eharness-end "
#: Processes that hold GPU device files by design; never stale, never killed.
GPU_DAEMONS = frozenset(
    {"nvidia-persistenced", "nvidia-smi", "nv-hostengine", "Xorg", "Xwayland", "dcgm"}
)
READ_CHUNK = 1 << 20
#: Disk space a run sets aside at its start for its status and stop records (a step that
#: fills the disk would otherwise leave its run "lost"); given back when the run ends.
RESERVE = "reserve"
RESERVE_SIZE = 64 * 1024
#: Under this much space left, the filesystem is reported as full.
FULL_BELOW = 256 * 1024
#: The end report's longest line: the laptop keeps the last 64 KiB of a follower's stderr, so
#: a longer one (a run.json with a 100 KB command) goes without the record it already has.
END_MAX = 32 * 1024
#: smoke mode's ``sitecustomize`` lives here, inside the run directory, while the step runs
HOOK_DIR = "smoke-hook"
#: An output check reports its counts on a line starting with this (harness.runs.verification)
VERIFY_MARK = b"HARNESS_VERIFY "


# -- small file helpers --------------------------------------------------------------------


def write_json_atomic(path: str, obj: Any) -> None:
    """temp file -> fsync -> rename -> fsync folder: a reader sees the old file or the new."""
    tmp = f"{path}.tmp{os.getpid()}"
    data = json.dumps(obj, indent=1, sort_keys=True).encode("utf-8")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    os.replace(tmp, path)
    with contextlib.suppress(OSError):
        dfd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def make_reserve(run_dir: str) -> None:
    """Set disk space aside for the run's own small records (status, verify, stop): a step
    that fills the disk must still get a status, and ``stop`` its stop.json."""
    with contextlib.suppress(OSError), open(os.path.join(run_dir, RESERVE), "wb") as f:
        f.write(b"\0" * RESERVE_SIZE)  # written, not sparse: the blocks are taken now
        f.flush()
        os.fsync(f.fileno())


def write_record(run_dir: str, name: str, obj: Any) -> bool:
    """:func:`write_json_atomic` into the run directory; on a full disk, give back part of
    the reserve and try again. True when the disk was full."""
    path, reserve = os.path.join(run_dir, name), os.path.join(run_dir, RESERVE)
    full = False
    while True:
        try:
            write_json_atomic(path, obj)
            return full
        except OSError as exc:
            if exc.errno != errno.ENOSPC or not os.path.exists(reserve):
                raise
            full = True
            size = os.path.getsize(reserve)
            if size <= RESERVE_SIZE // 4:
                os.unlink(reserve)
            else:
                os.truncate(reserve, size - RESERVE_SIZE // 4)


def space_left(path: str) -> int | None:
    """Bytes an unprivileged writer may still use on the filesystem holding ``path``."""
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def read_json(path: str) -> Any:
    """The parsed file, or ``None`` when it is missing or half-written (never raises)."""
    try:
        with open(path, "rb") as f:
            return json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError):
        return None


def _read_text(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        return None


# -- /proc ---------------------------------------------------------------------------------


def parse_stat(text: str) -> dict[str, Any] | None:
    """Pure: ``/proc/PID/stat`` -> the fields we use; ``comm`` may hold spaces and parens."""
    head, sep, rest = text.rpartition(")")
    if not sep:
        return None
    pid_text, _, comm = head.partition(" (")
    fields = rest.split()
    try:
        return {
            "pid": int(pid_text),
            "comm": comm,
            "state": fields[0],
            "ppid": int(fields[1]),
            "pgrp": int(fields[2]),
            "session": int(fields[3]),
            "starttime": int(fields[19]),
        }
    except (IndexError, ValueError):
        return None


def proc_stat(pid: int) -> dict[str, Any] | None:
    text = _read_text(f"/proc/{pid}/stat")
    return parse_stat(text) if text else None


def boot_id() -> str:
    """Changes on every reboot: a pid recorded before one means nothing after it."""
    return (_read_text("/proc/sys/kernel/random/boot_id") or "").strip()


def is_alive(pid: Any, starttime: Any, boot: Any = None) -> bool:
    """The same process (pid *and* kernel start time, same boot) still exists, not a zombie."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    if boot and boot != boot_id():
        return False
    st = proc_stat(pid)
    if st is None or st["state"] in ("Z", "X"):
        return False
    return starttime is None or st["starttime"] == starttime


def all_pids() -> list[int]:
    try:
        return sorted(int(n) for n in os.listdir("/proc") if n.isdigit())
    except OSError:
        return []


def environ_value(pid: int, name: str) -> str | None:
    """One variable of another process's environment (needs the same uid, or root)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            data = f.read()
    except OSError:
        return None
    prefix = name.encode() + b"="
    for item in data.split(b"\0"):
        if item.startswith(prefix):
            return item[len(prefix) :].decode("utf-8", "replace")
    return None


def cmdline(pid: int, limit: int = 300) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read(limit * 4)
    except OSError:
        return ""
    text = raw.rstrip(b"\0").replace(b"\0", b" ").decode("utf-8", "replace")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def gpu_holders(device_glob: str = "/dev/nvidia*") -> list[dict[str, Any]]:
    """Every process with an open fd on a GPU device file, with what decides if it is stale.

    Inside containers ``nvidia-smi`` lists no processes (another pid namespace), so the
    file descriptors are the only reliable witness. The glob is injectable so that tests
    can stand in an ordinary file for a GPU.
    """
    devices = set(glob.glob(device_glob))
    if not devices:
        return []
    me = os.getpid()
    out = []
    for pid in all_pids():
        if pid == me:
            continue
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        held = set()
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target in devices:
                held.add(target)
        if not held:
            continue
        st = proc_stat(pid)
        if st is None:
            continue
        parent = proc_stat(st["ppid"]) if st["ppid"] > 0 else None
        out.append(
            {
                "pid": pid,
                "starttime": st["starttime"],
                "comm": st["comm"],
                "cmdline": cmdline(pid),
                "ppid": st["ppid"],
                "parent_comm": parent["comm"] if parent else None,
                "run_id": environ_value(pid, RUN_ID_ENV),
                "devices": sorted(held),
            }
        )
    return out


def run_tree(
    run_id: str, roots: set[int], step_sid: Any, exclude: set[int]
) -> list[dict[str, Any]]:
    """Every live process that belongs to the step, each ``{"pid", "starttime", "comm"}``.

    A process belongs when any of these holds: it carries ``HARNESS_RUN_ID=<run_id>`` in its
    environment (inherited through ``setsid`` and double forks), it is in the step's session,
    or its parent chain reaches one of ``roots`` -- the step and the supervisor, which is a
    child subreaper, so orphans of the tree are re-parented to it rather than to init.
    ``roots`` must hold only processes verified alive by pid *and* start time: a recycled
    pid would otherwise hand us a stranger's children. A session id cannot be recycled while
    any process is still in that session, so ``step_sid`` is safe as it is.
    """
    stats = {}
    for pid in all_pids():
        st = proc_stat(pid)
        if st is not None:
            stats[pid] = st
    members = []
    for pid, st in stats.items():
        if pid in exclude or st["state"] in ("Z", "X"):
            continue
        belongs = isinstance(step_sid, int) and step_sid > 1 and st["session"] == step_sid
        belongs = belongs or _descends(pid, roots, stats)
        belongs = belongs or environ_value(pid, RUN_ID_ENV) == run_id
        if belongs:
            members.append({"pid": pid, "starttime": st["starttime"], "comm": st["comm"]})
    return members


def _descends(pid: int, roots: set[int], stats: dict[int, dict[str, Any]]) -> bool:
    """``pid`` is one of ``roots`` or has one of them among its ancestors."""
    seen: set[int] = set()
    cur = pid
    while cur > 1 and cur not in seen:
        if cur in roots:
            return True
        seen.add(cur)
        st = stats.get(cur)
        cur = st["ppid"] if st else 0
    return False


def _self_and_ancestors() -> set[int]:
    out, pid = set(), os.getpid()
    while pid > 1 and pid not in out:
        out.add(pid)
        st = proc_stat(pid)
        pid = st["ppid"] if st else 0
    return out


def _signal_all(procs: list[dict[str, Any]], sig: int) -> list[int]:
    """Signal each process that is still the one we listed (pid reuse is checked)."""
    sent = []
    for p in procs:
        if not is_alive(p["pid"], p["starttime"]):
            continue
        try:
            os.kill(p["pid"], sig)
            sent.append(p["pid"])
        except ProcessLookupError:
            pass
        except PermissionError:
            pass  # not ours: reported as remaining below
    return sent


def _wait_gone(procs: list[dict[str, Any]], timeout: float, poll: float = 0.05) -> list[dict]:
    deadline = time.monotonic() + timeout
    while True:
        left = [p for p in procs if is_alive(p["pid"], p["starttime"])]
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(poll)


def terminate(procs: list[dict[str, Any]], grace: float) -> dict[str, list[int]]:
    """SIGTERM, wait up to ``grace`` seconds, SIGKILL whoever is left; report who got what."""
    termed = _signal_all(procs, signal.SIGTERM)
    left = _wait_gone(procs, grace)
    killed = _signal_all(left, signal.SIGKILL)
    left = _wait_gone(left, 5.0)
    return {"terminated": termed, "killed": killed, "remaining": [p["pid"] for p in left]}


def _gpus() -> dict[str, Any]:
    """Free memory per GPU: the facts probe's reading (shipped beside this one as a probe)."""
    from probes.facts import gpus

    return gpus(lambda _message: None)


# -- run directories -----------------------------------------------------------------------


def runs_root(workdir: str | None) -> str:
    base = os.path.abspath(os.path.expanduser(workdir or "~"))
    return os.path.join(base, ".harness", "runs")


def run_facts(run_dir: str) -> dict[str, Any]:
    """What the laptop needs to name a run's state; the decision itself is made there."""
    sup = read_json(os.path.join(run_dir, "supervisor.json"))
    alive = None
    if isinstance(sup, dict):
        alive = is_alive(sup.get("pid"), sup.get("starttime"), sup.get("boot_id"))
    # Read the status *after* the liveness check: a supervisor that writes its status and
    # exits in between is then seen as finished, never as lost.
    status = read_json(os.path.join(run_dir, "status.json"))
    try:
        size = os.stat(os.path.join(run_dir, "log")).st_size
    except OSError:
        size = None
    return {
        "run_dir": run_dir,
        "record": read_json(os.path.join(run_dir, "run.json")),
        "supervisor": sup,
        "supervisor_alive": alive,
        "status": status,
        "stop": read_json(os.path.join(run_dir, "stop.json")),
        "log_size": size,
        "verify": read_json(os.path.join(run_dir, "verify.json")),
    }


def list_runs(root: str, ids: list[str] | None = None) -> list[dict[str, Any]]:
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    wanted = set(ids) if ids is not None else None
    out = []
    for name in names:
        if wanted is not None and name not in wanted:
            continue
        run_dir = os.path.join(root, name)
        if os.path.isfile(os.path.join(run_dir, "run.json")):
            out.append(run_facts(run_dir))
    return out


# -- probe operations ----------------------------------------------------------------------


def run(args: dict[str, Any], warn: Callable[[str], None]) -> dict[str, Any]:
    """Probe entry point (see :mod:`probes._boot`): dispatch on ``args["op"]``."""
    ops = {
        "preflight": op_preflight,
        "holders": op_holders,
        "launch": op_launch,
        "list": op_list,
        "stop": op_stop,
    }
    op = ops.get(args.get("op", ""))
    if op is None:
        raise ValueError(f"unknown supervisor op {args.get('op')!r}")
    return op(args)


def _resolve_command(argv0: str, cwd: str, path: str | None) -> str | None:
    import shutil

    if "/" in argv0:
        full = argv0 if os.path.isabs(argv0) else os.path.join(cwd, argv0)
        return full if os.path.isfile(full) and os.access(full, os.X_OK) else None
    return shutil.which(argv0, path=path)


def _script_of(argv: list[str]) -> str | None:
    """``python [opts] SCRIPT.py ...`` -> SCRIPT.py (checked too: a typo costs a model load)."""
    if not argv or not os.path.basename(argv[0]).startswith("python"):
        return None
    for arg in argv[1:]:
        if arg in ("-c", "-m"):
            return None
        if arg.startswith("-"):
            continue
        return arg if arg.endswith(".py") else None
    return None


def _in_the_way(folder: str) -> dict[str, Any]:
    """What would stop ``os.makedirs(folder)``: a file at it or above it (``not_a_folder``),
    or a nearest existing folder that cannot be written (``parent_writable`` false)."""
    path = folder
    while not os.path.isdir(path):
        if os.path.lexists(path):
            return {"not_a_folder": path}
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return {
        "not_a_folder": None,
        "parent": path,
        "parent_writable": os.access(path, os.W_OK),
        "space_left": space_left(path),
    }


def op_preflight(args: dict[str, Any]) -> dict[str, Any]:
    workdir = os.path.abspath(os.path.expanduser(args.get("workdir") or "~"))
    cwd = args.get("cwd") or workdir
    cwd = cwd if os.path.isabs(cwd) else os.path.join(workdir, cwd)
    argv = list(args.get("argv") or [])
    env_path = (args.get("env") or {}).get("PATH", os.environ.get("PATH"))
    resolved = _resolve_command(argv[0], cwd, env_path) if argv else None
    script = _script_of(argv)
    holders = gpu_holders(args.get("device_glob") or "/dev/nvidia*")
    held_by = sorted({h["run_id"] for h in holders if h["run_id"]})
    script_path = None
    if script is not None:
        script_path = script if os.path.isabs(script) else os.path.join(cwd, script)
    return {
        "python": {
            "executable": sys.executable,
            "version": ".".join(str(v) for v in sys.version_info[:3]),
        },
        "home": os.path.expanduser("~"),
        "workdir": {
            "path": workdir,
            "exists": os.path.isdir(workdir),
            "writable": os.access(workdir, os.W_OK) if os.path.isdir(workdir) else False,
            **_in_the_way(workdir),
        },
        "cwd": {"path": cwd, "exists": os.path.isdir(cwd)},
        "command": {
            "argv0": argv[0] if argv else None,
            "resolved": resolved,
            "script": script_path,
            "script_exists": os.path.isfile(script_path) if script_path else None,
        },
        "gpus": _gpus() if args.get("gpus", True) else None,
        "holders": holders,
        # Only the runs GPU holders name: enough to tell a live run's worker from a leftover.
        "runs": list_runs(runs_root(workdir), held_by) if held_by else [],
        "now": time.time(),
    }


def op_holders(args: dict[str, Any]) -> dict[str, Any]:
    """GPU holders, with the runs they name (for ``harness report``'s stale check)."""
    holders = gpu_holders(args.get("device_glob") or "/dev/nvidia*")
    held_by = sorted({h["run_id"] for h in holders if h["run_id"]})
    root = runs_root(args.get("workdir"))
    return {
        "holders": holders,
        "runs": list_runs(root, held_by) if held_by else [],
        "now": time.time(),
    }


def op_list(args: dict[str, Any]) -> dict[str, Any]:
    root = runs_root(args.get("workdir"))
    return {"root": root, "runs": list_runs(root, args.get("ids")), "now": time.time()}


def op_launch(args: dict[str, Any]) -> dict[str, Any]:
    """Make the run dir, start the supervisor detached, and wait for its handshake."""
    root = runs_root(args.get("workdir"))
    killed = None
    if args.get("kill_first"):
        victims = [p for p in args["kill_first"] if is_alive(p["pid"], p["starttime"])]
        killed = terminate(victims, float(args.get("grace", 10.0)))
    run_dir = os.path.join(root, args["run_id"])
    os.makedirs(root, exist_ok=True)
    os.mkdir(run_dir)  # fails if the id exists: never mix two runs' files
    try:
        return _start(args, run_dir, killed)
    except BaseException as exc:
        import shutil

        shutil.rmtree(run_dir, ignore_errors=True)  # nothing half-made is left behind
        left = space_left(root)
        if not isinstance(exc, OSError) and left is not None and left < FULL_BELOW:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), root) from exc
        raise


def _start(args: dict[str, Any], run_dir: str, killed: Any) -> dict[str, Any]:
    """:func:`op_launch` once the run directory exists: its files, the supervisor."""
    record = dict(args["record"])
    record["run_dir"] = run_dir
    record["created_at"] = time.time()
    write_json_atomic(os.path.join(run_dir, "run.json"), record)
    if args.get("review") is not None:  # what the run was started on (harness report)
        write_json_atomic(os.path.join(run_dir, "review.json"), args["review"])
    program = os.path.join(run_dir, "supervisor.py")
    with open(program, "w", encoding="utf-8") as f:
        f.write(args["program"])
    front = []
    if args.get("hook"):  # smoke mode's start-up hook: this run's PYTHONPATH only
        folder = os.path.join(run_dir, HOOK_DIR)
        os.mkdir(folder)
        for name, text in args["hook"].items():
            with open(os.path.join(folder, os.path.basename(name)), "w", encoding="utf-8") as f:
                f.write(text)
        front.append(folder)
        os.mkdir(os.path.join(run_dir, "smoke"))  # {smoke_dir}: the run's outputs, fresh
    if args.get("verifiers"):  # {verifiers}: harness's output checks, as this run used them
        folder = os.path.join(run_dir, "verifiers")
        os.mkdir(folder)
        for name, text in args["verifiers"].items():
            with open(os.path.join(folder, os.path.basename(name)), "w", encoding="utf-8") as f:
                f.write(text)
    secret = json.dumps(
        {"argv": args["argv"], "cwd": args["cwd"], "env": args.get("env") or {},
         "pythonpath_front": front, "verify": args.get("verify") or [],
         "verify_display": (args.get("record") or {}).get("verify"),
         "verify_timeout": args.get("verify_timeout")}
    ).encode("utf-8")  # fmt: skip
    err = open(os.path.join(run_dir, "supervisor.err"), "wb")  # noqa: SIM115 - the child's
    try:
        proc = subprocess.Popen(
            [sys.executable, "-B", program, "supervise", run_dir],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=err,
            cwd=run_dir,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        err.close()
    assert proc.stdin is not None
    proc.stdin.write(secret)
    proc.stdin.close()
    deadline = time.monotonic() + float(args.get("handshake_timeout", 15.0))
    sup_path = os.path.join(run_dir, "supervisor.json")
    while True:
        sup = read_json(sup_path)
        if sup is not None:
            break
        code = proc.poll()
        if code is not None or time.monotonic() > deadline:
            if code is None:  # no answer: end it, so that its run directory can go
                with contextlib.suppress(OSError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            text = _read_text(os.path.join(run_dir, "supervisor.err")) or ""
            tail = " | ".join(text.strip().splitlines()[-3:])
            why = f"exited with {code}" if code is not None else "did not answer"
            raise RuntimeError(f"the supervisor {why}: {tail or 'no output'}")
        time.sleep(0.01)
    proc.returncode = 0  # it is re-parented when we exit; do not let Popen wait for it
    return {"run": run_facts(run_dir), "killed": killed, "now": time.time()}


def op_stop(args: dict[str, Any]) -> dict[str, Any]:
    """Stop a run's whole process tree; then report who still holds a GPU device."""
    run_dir = os.path.join(runs_root(args.get("workdir")), args["run_id"])
    if not os.path.isfile(os.path.join(run_dir, "run.json")):
        raise ValueError(f"no run {args['run_id']} in {os.path.dirname(run_dir)}")
    grace = float(args.get("grace", 10.0))
    sup = read_json(os.path.join(run_dir, "supervisor.json")) or {}
    sup_alive = is_alive(sup.get("pid"), sup.get("starttime"), sup.get("boot_id"))
    already = os.path.exists(os.path.join(run_dir, "status.json"))
    unwritten: list[str] = []  # records a full disk kept out; the stop goes on regardless
    if not already:
        _record_if_room(run_dir, "stop.json", {"requested_at": time.time(), "grace": grace},
                        unwritten)  # fmt: skip
    exclude = _self_and_ancestors()
    roots = set()
    if sup_alive:
        roots.add(sup["pid"])
        exclude.add(sup["pid"])  # it must live to write the status
    if is_alive(sup.get("step_pid"), sup.get("step_starttime")):
        roots.add(sup["step_pid"])
    report: dict[str, list[int]] = {"terminated": [], "killed": [], "remaining": []}
    for round_ in range(5):  # a tree that forks while we signal gets another round
        procs = run_tree(args["run_id"], roots, sup.get("step_sid"), exclude)
        if not procs:
            break
        got = terminate(procs, grace if round_ == 0 else 0.5)
        for key in report:
            report[key] += [p for p in got[key] if p not in report[key]]
    # The supervisor writes the status once it has reaped the step.
    deadline = time.monotonic() + float(args.get("status_timeout", 10.0))
    status_path = os.path.join(run_dir, "status.json")
    while sup_alive and not os.path.exists(status_path) and time.monotonic() < deadline:
        if not is_alive(sup.get("pid"), sup.get("starttime"), sup.get("boot_id")):
            break
        time.sleep(0.02)
    if not os.path.exists(status_path) and not already:
        # No supervisor left to write it: say what we did rather than leave it "lost".
        _record_if_room(
            run_dir,
            "status.json",
            {
                "exit_code": None,
                "signal": None,
                "ended_at": time.time(),
                "stop_requested": True,
                "error": "stopped by harness stop; the supervisor was gone",
            },
            unwritten,
        )
    left = run_tree(args["run_id"], set(), sup.get("step_sid"), exclude)
    report["remaining"] = sorted(set(report["remaining"]) | {p["pid"] for p in left})
    return {
        "report": report,
        "already_finished": already,
        "unwritten": unwritten,
        "space_left": space_left(run_dir),
        "holders": gpu_holders(args.get("device_glob") or "/dev/nvidia*"),
        "run": run_facts(run_dir),
        "now": time.time(),
    }


def _record_if_room(run_dir: str, name: str, obj: Any, unwritten: list[str]) -> None:
    """:func:`write_record`, or ``name`` added to ``unwritten`` when the disk is full."""
    try:
        write_record(run_dir, name, obj)
    except OSError as exc:
        if exc.errno != errno.ENOSPC:
            raise
        unwritten.append(name)


# -- the supervisor process ----------------------------------------------------------------


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
    while True:
        try:
            pid, wstatus = os.waitpid(-1, 0)  # also reaps orphans re-parented to us
        except InterruptedError:
            continue
        except ChildProcessError:
            status["error"] = "the step vanished without an exit status"
            break
        if pid != proc.pid:
            continue
        proc.returncode = 0  # reaped here, not by Popen
        if os.WIFSIGNALED(wstatus):
            status["signal"] = os.WTERMSIG(wstatus)
        else:
            status["exit_code"] = os.WEXITSTATUS(wstatus)
        break
    stopped = os.path.exists(os.path.join(run_dir, "stop.json"))
    if status["exit_code"] == 0 and spec.get("verify") and not stopped:
        _verify(run_dir, spec, env, cwd, devnull, step)
    _finish(run_dir, status)
    return 0


def _verify(
    run_dir: str,
    spec: dict[str, Any],
    env: dict[str, str],
    cwd: str | None,
    devnull: int,
    step: list[int],
) -> None:
    """Run the step's output check like the step (its env, cwd, own session, output in the
    log), within its time limit; write verify.json. The verdict is decided on the laptop
    from what is recorded here: exit code or signal, timeout, the last report line."""
    path = os.path.join(run_dir, "log")
    log = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    shown = spec.get("verify_display") or spec["verify"][0]  # masked: secrets never hit disk
    _say(log, f"harness: verifying the output: {shown}\n".encode("utf-8", "replace"))
    start = os.fstat(log).st_size
    limit = float(spec.get("verify_timeout") or 3600.0)
    out: dict[str, Any] = {"exit_code": None, "signal": None, "timed_out": False,
                           "timeout": limit, "started_at": time.time()}  # fmt: skip
    try:
        proc = subprocess.Popen(spec["verify"], cwd=cwd, env=env, stdin=devnull, stdout=log,
                                stderr=log, start_new_session=True, close_fds=True)  # fmt: skip
    except OSError as exc:
        _say(log, f"harness: cannot start the check: {exc.strerror or exc}\n".encode())
        out["exit_code"] = 127
        proc = None
    os.close(log)
    if proc is not None:
        step.append(proc.pid)  # a SIGTERM to the supervisor reaches the check too
        deadline = time.monotonic() + limit
        while True:
            try:
                pid, wstatus = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == proc.pid:
                proc.returncode = 0
                if os.WIFSIGNALED(wstatus):
                    out["signal"] = os.WTERMSIG(wstatus)
                else:
                    out["exit_code"] = os.WEXITSTATUS(wstatus)
                break
            if pid == 0:
                if time.monotonic() > deadline and not out["timed_out"]:
                    out["timed_out"] = True
                    _forward([proc.pid], signal.SIGTERM)
                    deadline = time.monotonic() + 10.0
                elif out["timed_out"] and time.monotonic() > deadline:
                    _forward([proc.pid], signal.SIGKILL)
                time.sleep(0.1)
    out["ended_at"] = time.time()
    out["report"] = _last_report(path, start)
    write_record(run_dir, "verify.json", out)


def _last_report(path: str, start: int) -> Any:
    """The check's last ``HARNESS_VERIFY {json}`` line in the log after ``start``."""
    found = None
    with open(path, "rb") as f:
        f.seek(start)
        for line in f:
            if line.startswith(VERIFY_MARK):
                with contextlib.suppress(ValueError):
                    found = json.loads(line[len(VERIFY_MARK) :].decode("utf-8", "replace"))
    return found if isinstance(found, dict) else None


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


def _not_started(run_dir: str, log: int, info: dict[str, Any], why: str, code: int) -> int:
    """The step could not be started: say so in its log and in the status (126/127)."""
    msg = f"harness: cannot start the step: {why}"
    _say(log, (msg + "\n").encode("utf-8", "replace"))
    write_record(run_dir, "supervisor.json", info)
    _finish(run_dir, {"exit_code": code, "signal": None, "error": msg})
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


# -- follow: the log as a byte stream ------------------------------------------------------


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except InterruptedError:
            continue


def _reader_gone(fd: int) -> bool:
    """True when nobody reads our stdout any more (the SSH channel or pipe closed)."""
    try:
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        events = poller.poll(0)
    except (OSError, AttributeError, ValueError):
        return False
    return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in events)


def follow(run_dir: str, offset: int, wait: bool, poll: float, lost_check: float) -> dict[str, Any]:
    """Copy the log from ``offset`` to stdout until the run is over and the log is drained.

    Returns the end report (written to stderr by :func:`main`). ``wait=False`` stops at the
    current end of the log instead of following it.
    """
    out = sys.stdout.fileno()
    log_path = os.path.join(run_dir, "log")
    status_path = os.path.join(run_dir, "status.json")
    sup = read_json(os.path.join(run_dir, "supervisor.json")) or {}
    _write_all(out, STREAM_MARK)
    try:
        f = open(log_path, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        return {"reason": "no-log", "size": offset, "error": str(exc)}
    reason = "eof"
    next_check = 0.0
    with f:
        f.seek(offset)
        final = False
        while True:
            data = f.read(READ_CHUNK)
            if data:
                _write_all(out, data)
                offset += len(data)
                continue
            if final or not wait:
                break
            if os.path.exists(status_path):
                reason, final = "finished", True
                continue  # drain what was written before the status
            now = time.monotonic()
            if now >= next_check:
                next_check = now + lost_check
                if not is_alive(sup.get("pid"), sup.get("starttime"), sup.get("boot_id")):
                    reason = "finished" if os.path.exists(status_path) else "lost"
                    final = True
                    continue
                if _reader_gone(out):
                    return {"reason": "detached", "size": offset}
            time.sleep(poll)
    return {"reason": reason, "size": offset}


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "supervise":
        return supervise(argv[1])
    if len(argv) >= 3 and argv[0] == "follow":
        opts = {"--poll": 0.05, "--lost-check": 1.0}
        wait = "--once" not in argv
        rest = [a for a in argv[3:] if a != "--once"]
        for name, value in zip(rest[::2], rest[1::2], strict=False):
            opts[name] = float(value)
        try:
            end = follow(argv[1], int(argv[2]), wait, opts["--poll"], opts["--lost-check"])
        except BrokenPipeError:
            return 0  # the reader went away: nothing left to tell
        if end["reason"] in ("finished", "lost", "eof"):
            end["facts"] = run_facts(argv[1])  # saves the laptop a round trip for the state
        line = json.dumps(end)
        if len(line) > END_MAX and end.get("facts"):  # a huge command: the laptop has it
            end["facts"]["record"] = None
            line = json.dumps(end)
        with contextlib.suppress(OSError):
            sys.stderr.write(END_MARK + line + "\n")
            sys.stderr.flush()
        return 0 if end["reason"] != "no-log" else 4
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
