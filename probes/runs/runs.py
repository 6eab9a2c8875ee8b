"""The ``runs`` probe: the target's half of ``harness run``'s launch, list and stop.

Shipped by :func:`harness.probe_runner.run_probe` (JSON arguments on stdin, one envelope on
stdout): ``run(args)`` with ``args["op"]`` one of ``preflight`` (facts for the one-line
verdicts: interpreter, workdir, command, GPUs, processes holding GPU devices, runs),
``holders`` (just the GPU holders and their runs), ``launch`` (make the run directory, write
the run program into it, start the supervisor, wait for its handshake), ``list`` (facts about
every run) and ``stop`` (SIGTERM the step's whole tree, SIGKILL after the grace period, report
what still holds a GPU).

The run program itself (:mod:`probes.runs.supervisor`, which supervises the step and follows its
log) is what ``launch`` copies into each run directory; these operations never run from that
copy. Secrets (the real argv and environment) never touch the disk: ``launch`` hands them to
the supervisor on a pipe.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from probes.runs._paths import in_the_way, resolve_command, script_of
from probes.runs._pin import pin
from probes.runs._proctree import (
    gpu_holders,
    orphaned_runs,
    run_tree,
    self_and_ancestors,
    terminate,
)
from probes.runs._rundir import (
    FULL_BELOW,
    HOOK_DIR,
    is_alive,
    read_json,
    read_text,
    run_facts,
    space_left,
    write_json_atomic,
)
from probes.runs._service import other_users, own_services
from probes.runs._stop import stop_run_dir


def _gpus() -> dict[str, Any]:
    """Free memory per GPU: the facts probe's reading (shipped beside this one as a probe)."""
    from probes.facts import gpus

    return gpus(lambda _message: None)


# -- run directories -----------------------------------------------------------------------


def runs_root(workdir: str | None) -> str:
    base = os.path.abspath(os.path.expanduser(workdir or "~"))
    return os.path.join(base, ".harness", "runs")


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


def op_preflight(args: dict[str, Any]) -> dict[str, Any]:
    workdir = os.path.abspath(os.path.expanduser(args.get("workdir") or "~"))
    cwd = args.get("cwd") or workdir
    cwd = cwd if os.path.isabs(cwd) else os.path.join(workdir, cwd)
    argv = list(args.get("argv") or [])
    env_path = (args.get("env") or {}).get("PATH", os.environ.get("PATH"))
    resolved = resolve_command(argv[0], cwd, env_path) if argv else None
    script = script_of(argv)
    holders = gpu_holders(args.get("device_glob") or "/dev/nvidia*")
    held_by = sorted({h["run_id"] for h in holders if h["run_id"]})
    script_path = None
    if script is not None:
        script_path = script if os.path.isabs(script) else os.path.join(cwd, script)
    gpus = _gpus() if args.get("gpus", True) or args.get("facts") is not None else None
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
            **in_the_way(workdir),
        },
        "cwd": {"path": cwd, "exists": os.path.isdir(cwd)},
        "command": {
            "argv0": argv[0] if argv else None,
            "resolved": resolved,
            "script": script_path,
            "script_exists": os.path.isfile(script_path) if script_path else None,
        },
        "gpus": gpus if args.get("gpus", True) else None,
        "holders": holders,
        # Only the runs GPU holders name: enough to tell a live run's worker from a leftover.
        "runs": list_runs(runs_root(workdir), held_by) if held_by else [],
        "step_runs": live_runs_of(runs_root(workdir), args.get("step")),
        "facts": _facts(args, gpus),
        "now": time.time(),
    }


def _facts(args: dict[str, Any], gpus: dict[str, Any] | None) -> dict[str, Any] | None:
    """The facts probe's answer to ``args["facts"]`` (the review's question), in the same
    round trip as the preflight, with the preflight's own reading of the GPUs."""
    if args.get("facts") is None:
        return None
    from probes.facts import run

    asked = dict(args["facts"])
    got = run({**asked, "gpus": False, "paths": args.get("paths")}, lambda _message: None)
    if asked.get("gpus", True):
        got["gpus"] = gpus
    return got


def live_runs_of(root: str, step: str | None) -> list[dict[str, Any]]:
    """The runs of ``step`` whose supervisor is alive: launching it again starts a second."""
    if not step:
        return []
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    out = []
    for name in names:
        record = read_json(os.path.join(root, name, "run.json"))
        if isinstance(record, dict) and record.get("step") == step:
            facts = run_facts(os.path.join(root, name))
            if facts.get("supervisor_alive"):
                out.append(facts)
    return out


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
    ids = args.get("ids")
    gone = orphaned_runs(root) if ids is None else []  # deleted while they ran
    return {"root": root, "runs": list_runs(root, ids), "gone": gone, "now": time.time()}


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


def _pinned(args: dict[str, Any], run_dir: str) -> dict[str, str]:
    """The files a user's own check runs from, hashed before the step starts (_pin.py)."""
    path = (args.get("env") or {}).get("PYTHONPATH") or os.environ.get("PYTHONPATH", "")
    return pin(args.get("verify") or [], args["cwd"] or os.getcwd(), path, run_dir + os.sep)


def _start(args: dict[str, Any], run_dir: str, killed: Any) -> dict[str, Any]:
    """:func:`op_launch` once the run directory exists: its files, the supervisor."""
    record = dict(args["record"])
    record["run_dir"] = run_dir
    record["created_at"] = time.time()
    write_json_atomic(os.path.join(run_dir, "run.json"), record)
    if args.get("review") is not None:  # what the run was started on (harness report)
        write_json_atomic(os.path.join(run_dir, "review.json"), args["review"])
    for name, text in args["program"].items():  # the run program, as this run uses it
        with open(os.path.join(run_dir, os.path.basename(name)), "w", encoding="utf-8") as f:
            f.write(text)
    program = os.path.join(run_dir, "supervisor.py")
    front = []
    if args.get("hook"):  # smoke mode's start-up hook: this run's PYTHONPATH only
        folder = os.path.join(run_dir, HOOK_DIR)
        os.mkdir(folder)
        for name, text in args["hook"].items():
            with open(os.path.join(folder, os.path.basename(name)), "w", encoding="utf-8") as f:
                f.write(text)
        front.append(folder)
        os.mkdir(os.path.join(run_dir, "smoke"))  # {smoke_dir}: the run's outputs, fresh
    shipped = {}  # name -> sha256: the supervisor refuses a check changed since (_verify.py)
    if args.get("verifiers"):  # {verifiers}: harness's output checks, as this run used them
        folder = os.path.join(run_dir, "verifiers")
        os.mkdir(folder)
        for name, text in args["verifiers"].items():
            data = text.encode("utf-8")
            with open(os.path.join(folder, os.path.basename(name)), "wb") as f:
                f.write(data)
            shipped[os.path.basename(name)] = hashlib.sha256(data).hexdigest()
    secret = json.dumps(
        {"argv": args["argv"], "cwd": args["cwd"], "env": args.get("env") or {},
         "pythonpath_front": front, "verify": args.get("verify") or [],
         "verify_display": (args.get("record") or {}).get("verify"),
         "verify_timeout": args.get("verify_timeout"), "service": args.get("service"),
         "services": args.get("services") or [], "grace": args.get("grace"),
         "watch": args.get("watch"),
         "status_timeout": args.get("status_timeout"), "device_glob": args.get("device_glob"),
         "verifiers_sha256": shipped, "verify_pinned": _pinned(args, run_dir)}
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
            text = read_text(os.path.join(run_dir, "supervisor.err")) or ""
            tail = " | ".join(text.strip().splitlines()[-3:])
            why = f"exited with {code}" if code is not None else "did not answer"
            raise RuntimeError(f"the supervisor {why}: {tail or 'no output'}")
        time.sleep(0.01)
    proc.returncode = 0  # it is re-parented when we exit; do not let Popen wait for it
    return {"run": run_facts(run_dir), "killed": killed, "now": time.time()}


def op_stop(args: dict[str, Any]) -> dict[str, Any]:
    """Stop a run's whole process tree, and the services it started and did not keep;
    then report who still holds a GPU device."""
    root = runs_root(args.get("workdir"))
    run_dir = os.path.join(root, args["run_id"])
    grace = float(args.get("grace", 10.0))
    if not os.path.isfile(os.path.join(run_dir, "run.json")):
        return _stop_gone(args, run_dir, grace)
    wait = float(args.get("status_timeout", 10.0))
    out = stop_run_dir(run_dir, args["run_id"], grace, wait)
    services = []
    for used in own_services(read_json(os.path.join(run_dir, "run.json")) or {}):
        there = os.path.join(root, os.path.basename(used["run_id"]))
        if os.path.isfile(os.path.join(there, "run.json")) and not other_users(
            root, os.path.basename(used["run_id"]), args["run_id"]
        ):  # a service another live run still uses stays up
            got = stop_run_dir(there, used["run_id"], grace, wait)
            services.append({"run_id": used["run_id"], **got["report"],
                             "already_finished": got["already_finished"]})  # fmt: skip
    return {
        **out,
        "services": services,
        "space_left": space_left(run_dir),
        "holders": gpu_holders(args.get("device_glob") or "/dev/nvidia*"),
        "run": run_facts(run_dir),
        "now": time.time(),
    }


def _stop_gone(args: dict[str, Any], run_dir: str, grace: float) -> dict[str, Any]:
    """A run whose directory was deleted while it ran: its supervisor's tree, no records."""
    runs = orphaned_runs(os.path.dirname(run_dir))
    found: list[dict[str, Any] | None] = [o for o in runs if o["run_dir"] == run_dir]
    (sup,) = found or [None]
    if sup is None:
        raise ValueError(f"no run {args['run_id']} in {os.path.dirname(run_dir)}")
    exclude = self_and_ancestors()
    report: dict[str, list[int]] = {"terminated": [], "killed": [], "remaining": []}
    for round_ in range(5):
        procs = run_tree(args["run_id"], {sup["pid"]}, None, exclude)
        if not procs:
            break
        got = terminate(procs, grace if round_ == 0 else 0.5)
        for key in report:
            report[key] += [p for p in got[key] if p not in report[key]]
    left = run_tree(args["run_id"], set(), None, exclude)
    report["remaining"] = sorted(set(report["remaining"]) | {p["pid"] for p in left})
    return {
        "report": report, "already_finished": False, "gone": True, "unwritten": [],
        "holders": gpu_holders(args.get("device_glob") or "/dev/nvidia*"),
        "run": {"run_dir": run_dir, "record": {"id": args["run_id"], "run_dir": run_dir}},
        "now": time.time(),
    }  # fmt: skip
