"""Stopping a run: its whole process tree (TERM, grace, KILL), its stop and status records.

The one stop path: the ``runs`` probe's ``stop`` op (``harness stop``) and the run program
(a step's supervisor stopping the service it needed, :mod:`probes.runs._service`) both call
:func:`stop_run_dir`, so a service is ended the same way whoever ends it. Stdlib only.
"""

from __future__ import annotations

import errno
import os
import time
from typing import Any

from probes.runs._proctree import run_tree, self_and_ancestors, terminate
from probes.runs._rundir import is_alive, read_json, write_record


def stop_run_dir(run_dir: str, run_id: str, grace: float, status_timeout: float) -> dict[str, Any]:
    """Stop the run in ``run_dir``: ``{"report", "already_finished", "unwritten"}``.

    stop.json is written first (so the state reads ``killed``), then the step's tree is
    signalled; the supervisor lives to write the status, and when it is gone the status
    says what was done.
    """
    sup = read_json(os.path.join(run_dir, "supervisor.json")) or {}
    sup_alive = is_alive(sup.get("pid"), sup.get("starttime"), sup.get("boot_id"))
    already = os.path.exists(os.path.join(run_dir, "status.json"))
    exclude = self_and_ancestors()
    roots = set()
    if sup_alive:
        roots.add(sup["pid"])
        exclude.add(sup["pid"])  # it must live to write the status
    if is_alive(sup.get("step_pid"), sup.get("step_starttime")):
        roots.add(sup["step_pid"])
    if not roots and not run_tree(run_id, roots, sup.get("step_sid"), exclude):
        already = True  # it ended by itself (lost): nothing to stop, its records stay as they are
    unwritten: list[str] = []  # records a full disk kept out; the stop goes on regardless
    if not already and not os.path.exists(os.path.join(run_dir, "stop.json")):
        record_if_room(run_dir, "stop.json", {"requested_at": time.time(), "grace": grace},
                       unwritten)  # fmt: skip
    report: dict[str, list[int]] = {"terminated": [], "killed": [], "remaining": []}
    for round_ in range(5):  # a tree that forks while we signal gets another round
        procs = run_tree(run_id, roots, sup.get("step_sid"), exclude)
        if not procs:
            break
        got = terminate(procs, grace if round_ == 0 else 0.5)
        for key in report:
            report[key] += [p for p in got[key] if p not in report[key]]
    # The supervisor writes the status once it has reaped the step.
    deadline = time.monotonic() + status_timeout
    status_path = os.path.join(run_dir, "status.json")
    while sup_alive and not os.path.exists(status_path) and time.monotonic() < deadline:
        if not is_alive(sup.get("pid"), sup.get("starttime"), sup.get("boot_id")):
            break
        time.sleep(0.02)
    if not os.path.exists(status_path) and not already:
        # No supervisor left to write it: say what we did rather than leave it "lost".
        record_if_room(
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
    left = run_tree(run_id, set(), sup.get("step_sid"), exclude)
    report["remaining"] = sorted(set(report["remaining"]) | {p["pid"] for p in left})
    return {"report": report, "already_finished": already, "unwritten": unwritten}


def record_if_room(run_dir: str, name: str, obj: Any, unwritten: list[str]) -> None:
    """:func:`write_record`, or ``name`` added to ``unwritten`` when the disk is full."""
    try:
        write_record(run_dir, name, obj)
    except OSError as exc:
        if exc.errno != errno.ENOSPC:
            raise
        unwritten.append(name)
