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

from probes.runs._proctree import gpu_holders, run_tree, self_and_ancestors, terminate
from probes.runs._rundir import write_record
from probes.runs._stop import stop_run_dir

#: Written by a service's supervisor once its health URL answered 200.
READY = "ready.json"
#: Seconds between two looks at the health URL, and one look's own limit.
POLL = 0.25
ASK_TIMEOUT = 2.0


def answers(url: str, timeout: float = ASK_TIMEOUT) -> bool:
    """``url`` answers 200 (no proxy: the server is on the target itself)."""
    import urllib.error  # here: ~45 ms of imports every runs probe and run program skips
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=timeout) as got:
            return int(got.status) == 200
    except (OSError, ValueError, urllib.error.URLError):
        return False


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
    started = time.time()
    deadline = time.monotonic() + limit
    say(f"harness: waiting for the service to answer {url} (ready_timeout {limit:g}s)")
    while True:
        wstatus = reap(pid)
        if wstatus is not None:
            return {"exited": wstatus}
        if os.path.exists(os.path.join(run_dir, "stop.json")):
            return {"stopped": True}
        if answers(url):
            took = time.time() - started
            ready = {"url": url, "ready_at": time.time(), "seconds": took}
            write_record(run_dir, READY, ready)
            say(f"harness: the service is ready ({url} answered 200 after {took:.1f}s)")
            return {"ready": ready}
        if time.monotonic() > deadline:
            say(f"harness: the service was not ready within {limit:g}s; ending its processes")
            end_tree(os.path.basename(run_dir.rstrip("/")), pid, float(service.get("grace", 10)))
            return {"timeout": limit}
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
    """The step failed: the error lines of each service it used, into its log."""
    root = os.path.dirname(run_dir.rstrip("/"))
    for used in spec.get("services") or ():
        if not isinstance(used, dict) or not used.get("run_id"):
            continue
        run_id = os.path.basename(str(used["run_id"]))
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
    for used in own_services({"services": spec.get("services")}):
        run_id = os.path.basename(str(used["run_id"]))
        there = os.path.join(root, run_id)
        if not os.path.isfile(os.path.join(there, "run.json")):
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
