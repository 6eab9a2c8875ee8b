"""A service step's life on the target: ready when its health URL answers, stopped with the
steps that needed it.

Part of the run program (see :mod:`probes.runs.supervisor`), copied into every run directory. A
service's supervisor starts the server like any step (own session, output in the log), then
:func:`wait_ready` polls its health URL (stdlib ``urllib``, no proxy) and writes
``ready.json`` once it answers 200; if the server exits first, or ``ready_timeout`` passes
(then its whole tree is ended), the status says why (``not_ready``). A step that needed a
service records it in its ``run.json`` (``services``); when the step ends, its supervisor
stops each one it did not keep with :func:`stop_services` -- the same stop path as
``harness stop`` (:mod:`probes.runs._stop`) -- so a dropped SSH link changes nothing.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from typing import Any

from probes.runs._ports import first_bytes, held_by, owned
from probes.runs._proctree import gpu_holders, run_tree, self_and_ancestors, terminate
from probes.runs._rundir import is_alive, read_json, write_record
from probes.runs._stop import stop_run_dir

#: Written by a service's supervisor once its health URL answered 200.
READY = "ready.json"
#: Seconds between two looks at the health URL, and one look's own limit.
POLL = 0.25
ASK_TIMEOUT = 2.0


def answers(url: str, timeout: float = ASK_TIMEOUT) -> bool | None:
    """``url`` answers 200 (no proxy: the server is on the target itself); ``None`` when
    something answers that does not speak HTTP (never an exception: the supervisor lives)."""
    import http.client  # here: ~45 ms of imports every runs probe and run program skips
    import urllib.error
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=timeout) as got:
            return int(got.status) == 200
    except http.client.RemoteDisconnected:  # closed without a word: not up yet
        return False
    except http.client.HTTPException:  # BadStatusLine and the like: another protocol
        return None
    except (OSError, ValueError, urllib.error.URLError):
        return False


def service_port(service: dict[str, Any]) -> int | None:
    """The port the service's own server is to listen on, when it is a number."""
    try:
        port = int(service.get("port"))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return port if 0 < port < 65536 else None


def port_taken(run_dir: str, service: dict[str, Any]) -> str | None:
    """Why the service must not start: its port is already listened on (by whom), or None."""
    port = service_port(service)
    if port is None:
        return None
    who = held_by(port, os.path.dirname(run_dir.rstrip("/")))
    if who is None:
        return None
    return f"port {port} is already in use by {who}; the service was not started"


def _own_port(run_dir: str, pid: int, port: int | None) -> str | None:
    """``None`` when the service's own tree holds ``port`` (or there is no port to hold);
    else who does, in words."""
    if port is None:
        return None
    run_id = os.path.basename(run_dir.rstrip("/"))
    members = {p["pid"] for p in run_tree(run_id, {pid}, pid, self_and_ancestors())}
    if owned(port, members):
        return None
    return held_by(port, os.path.dirname(run_dir.rstrip("/"))) or "nobody"


def wait_ready(
    run_dir: str,
    pid: int,
    service: dict[str, Any],
    reap: Callable[[int], int | None],
    say: Callable[[str], None],
) -> dict[str, Any]:
    """Poll until the server is ready, exits, is stopped, or runs out of time.

    ``reap(pid)``: the server's wait status if it has exited (non-blocking), else ``None``.
    Returns ``{"ready": ...}``, ``{"exited": wstatus}``, ``{"stopped": True}`` or
    ``{"timeout": seconds}`` (the tree is ended by then; reap it as usual).
    """
    url, limit = service["url"], float(service.get("ready_timeout") or 1800.0)
    port = service_port(service)
    started = time.time()
    deadline = time.monotonic() + limit
    said: set[str] = set()  # each word about the port once

    def once(text: str) -> None:
        if text not in said:
            said.add(text)
            say(f"harness: {text}")

    say(f"harness: waiting for the service to answer {url} (ready_timeout {limit:g}s)")
    while True:
        wstatus = reap(pid)
        if wstatus is not None:
            return {"exited": wstatus, "why": sorted(said)}
        if os.path.exists(os.path.join(run_dir, "stop.json")):
            return {"stopped": True}
        got = answers(url)
        if got is None and port is not None:
            once(f"port {port} answers, but not HTTP: {first_bytes(port)}")
        other = _own_port(run_dir, pid, port) if got else None
        if other is not None:  # a kept server of other settings must not pass for this one
            once(f"port {port} answers, but it is held by {other}, not by this service")
        elif got:
            took = time.time() - started
            ready = {"url": url, "ready_at": time.time(), "seconds": took}
            write_record(run_dir, READY, ready)
            say(f"harness: the service is ready ({url} answered 200 after {took:.1f}s)")
            return {"ready": ready}
        if time.monotonic() > deadline:
            say(f"harness: the service was not ready within {limit:g}s; ending its processes")
            end_tree(os.path.basename(run_dir.rstrip("/")), pid, float(service.get("grace", 10)))
            return {"timeout": limit, "why": sorted(said)}
        time.sleep(POLL)


def end_tree(run_id: str, pid: int, grace: float) -> dict[str, list[int]]:
    """The server's whole tree (its session, its descendants, its run id), TERM then KILL;
    the supervisor itself is left to reap it and write the status."""
    procs = run_tree(run_id, {pid}, pid, self_and_ancestors())
    return terminate(procs, grace)


def own_services(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The services a run started for itself and did not keep (``run.json``'s ``services``)."""
    used = record.get("services")
    if not isinstance(used, list):
        return []
    return [s for s in used if isinstance(s, dict) and s.get("run_id") and not s.get("keep")]


#: Minutes a ready service waits for a run to use it before it stops itself (a controller
#: killed or interrupted before its step was launched); ``unclaimed_minutes`` in its settings.
UNCLAIMED_MINUTES = 10.0
CLAIM_POLL = 0.5


def users_of(root: str, service_id: str) -> list[str]:
    """The runs under ``root`` that recorded ``service_id`` among their ``services``."""
    out = []
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    for name in names:
        record = read_json(os.path.join(root, name, "run.json"))
        used = record.get("services") if isinstance(record, dict) else None
        if isinstance(used, list) and any(
            isinstance(u, dict) and os.path.basename(str(u.get("run_id"))) == service_id
            for u in used
        ):
            out.append(name)
    return out


def live(run_dir: str) -> bool:
    """The run has not ended: no status yet, and its supervisor (or its launch) is alive."""
    if os.path.exists(os.path.join(run_dir, "status.json")):
        return False
    sup = read_json(os.path.join(run_dir, "supervisor.json"))
    if sup is None:  # being launched
        return True
    return is_alive(sup.get("pid"), sup.get("starttime"), sup.get("boot_id"))


def other_users(root: str, service_id: str, me: str) -> list[str]:
    """The live runs other than ``me`` that use the service and have not released it."""
    there = os.path.join(root, service_id)
    return [
        u
        for u in users_of(root, service_id)
        if u != me
        and not os.path.exists(os.path.join(there, f"released-{u}"))
        and live(os.path.join(root, u))
    ]


def release(root: str, service_id: str, me: str) -> list[str]:
    """``me`` is done with the service: marked so, under the service's lock (two users ending
    at once must not each leave it to the other); the live users left."""
    import fcntl

    there = os.path.join(root, service_id)
    try:
        lock = open(os.path.join(there, "users.lock"), "a")  # noqa: SIM115 - held below
    except OSError:
        return other_users(root, service_id, me)
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(os.path.join(there, f"released-{me}"), "w"):
                pass
        except OSError:
            pass
        return other_users(root, service_id, me)


def until_claimed(
    run_dir: str,
    spec: dict[str, Any],
    pid: int,
    reap: Callable[[int], int | None],
    say: Callable[[str], None],
) -> int | None:
    """A ready service that no run uses within ``unclaimed_minutes`` stops itself (its step was
    never launched: the controller was killed, or interrupted). The server's wait status if
    it exited meanwhile; ``None`` once a run uses it, or it was told to stop."""
    minutes = float(spec["service"].get("unclaimed_minutes") or UNCLAIMED_MINUTES)
    root, run_id = os.path.dirname(run_dir.rstrip("/")), os.path.basename(run_dir.rstrip("/"))
    deadline = time.monotonic() + minutes * 60.0
    while True:
        wstatus = reap(pid)
        if wstatus is not None:
            return wstatus
        if users_of(root, run_id) or os.path.exists(os.path.join(run_dir, "stop.json")):
            return None
        if time.monotonic() > deadline:
            say(f"harness: no run used this service within {minutes:g} min of its being ready "
                "(service.unclaimed_minutes); stopping it")  # fmt: skip
            grace = float(spec.get("grace") or 10.0)
            write_record(run_dir, "stop.json", {"requested_at": time.time(), "grace": grace,
                                                "unclaimed_minutes": minutes})  # fmt: skip
            end_tree(run_id, pid, grace)
            return None
        time.sleep(CLAIM_POLL)


#: an exception line (``RuntimeError: ...``), after any logging prefix
_EXCEPTION = re.compile(r"[A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit)\b:? ")
#: vLLM's logging prefix: ``(EngineCore pid=7) ERROR 12-02 10:01:38 [core.py:1233] ``
_LOGGED = re.compile(r"^(?:\([^)]*\)\s*)?ERROR\b[^\]]*\]\s?")


def service_errors(log: str, limit: int = 4, tail: int = 1 << 16) -> list[str]:
    """A server's own error lines from the end of its log -- what a dependent step's failure
    comes from when the client only saw 500s: vLLM's ``ERROR`` lines (not the traceback's
    frames) and exception lines; the first and the last ``limit - 1``, each once."""
    try:
        with open(log, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - tail))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return []
    found: list[str] = []
    for raw in text.splitlines():
        m = _LOGGED.match(raw)
        msg = (raw[m.end() :] if m else raw).strip()
        if not msg or msg.startswith(("File ", "Traceback", "Dumping", "^", "~")):
            continue
        if _EXCEPTION.match(msg) or (m is not None and msg[0].isupper()):
            found.append(msg if len(msg) <= 300 else msg[:297] + "...")
    seen = list(dict.fromkeys(found))
    return seen if len(seen) <= limit else seen[:1] + seen[-(limit - 1) :]


def say_service_errors(run_dir: str, spec: dict[str, Any], say: Callable[[str], None]) -> None:
    """The step failed: the error lines of each service it used, into its log -- first, a
    service that was stopped under it (``harness stop``) or ended while it ran."""
    root = os.path.dirname(run_dir.rstrip("/"))
    for used in spec.get("services") or ():
        if not isinstance(used, dict) or not used.get("run_id"):
            continue
        run_id = os.path.basename(str(used["run_id"]))
        # stop.json first: it is written before the signal, the status only once reaped
        stop = read_json(os.path.join(root, run_id, "stop.json"))
        ended = read_json(os.path.join(root, run_id, "status.json"))
        if isinstance(stop, dict) or isinstance(ended, dict):
            by_stop = isinstance(stop, dict) or bool((ended or {}).get("stop_requested"))
            how = (
                "was stopped (harness stop) while this step used it"
                if by_stop
                else "ended while this step used it"
            )
            when = (stop if isinstance(stop, dict) else {}).get("requested_at")
            when = when or (ended if isinstance(ended, dict) else {}).get("ended_at") or 0
            at = time.strftime("%H:%M:%S", time.localtime(float(when)))
            say(f"harness: service {run_id}: the service {how}, at {at}")
        for line in service_errors(os.path.join(root, run_id, "log")):
            say(f"harness: service {run_id}: {line}")


def stop_services(
    run_dir: str, spec: dict[str, Any], say: Callable[[str], None]
) -> list[dict[str, Any]]:
    """Stop the services this run needed and did not keep (the step has ended)."""
    root = os.path.dirname(run_dir.rstrip("/"))
    grace = float(spec.get("grace") or 10.0)
    wait = float(spec.get("status_timeout") or 10.0)
    out = []
    me = os.path.basename(run_dir.rstrip("/"))
    keep = {os.path.basename(str(u.get("run_id"))) for u in spec.get("services") or ()
            if isinstance(u, dict) and u.get("keep")}  # fmt: skip
    for used in spec.get("services") or ():  # released first, kept ones too: counted below
        if isinstance(used, dict) and used.get("run_id"):
            run_id = os.path.basename(str(used["run_id"]))
            others = release(root, run_id, me)
            if others and run_id not in keep:
                say(f"harness: the step has ended; the service {run_id} stays up: "
                    f"{', '.join(others)} still use(s) it")  # fmt: skip
                out.append({"run_id": run_id, "users": others})
                keep.add(run_id)
    for used in own_services({"services": spec.get("services")}):
        run_id = os.path.basename(str(used["run_id"]))
        there = os.path.join(root, run_id)
        if run_id in keep or not os.path.isfile(os.path.join(there, "run.json")):
            continue
        say(f"harness: the step has ended; stopping the service {run_id}")
        got: dict[str, Any] = {"run_id": run_id}
        try:
            got.update(stop_run_dir(there, run_id, grace, wait))
        except OSError as exc:
            got["error"] = str(exc)
        held = gpu_holders(spec.get("device_glob") or "/dev/nvidia*")
        got["holders"] = [h for h in held if h.get("run_id") == run_id]
        out.append(got)
        left = (got.get("report") or {}).get("remaining") or []
        gpu = [h["pid"] for h in got["holders"]]
        say(
            f"harness: service {run_id} stopped"
            + (f"; still alive: {left}" if left else "")
            + (f"; still holding a GPU: {gpu}" if gpu else "; no process of it holds a GPU")
        )
    return out
