"""``supervisor.py follow RUN_DIR OFFSET``: a run's log as a byte stream, then its end report.

Part of the run program (see :mod:`probes.runs.supervisor`), run from the copy in the run
directory. The laptop reads stdout through a raw SSH channel: the stream starts with
``STREAM_MARK`` (so a login script's noise before it can be cut off) and carries the log byte
for byte from ``OFFSET``; it ends once the step's status exists and the log is drained, with
``END_MARK`` and a JSON line on stderr (:mod:`harness.runs.follow.stream` reads both);
``--until-ready`` also ends it once a service's ``ready.json`` exists.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import sys
import time
from typing import Any

from probes.runs._rundir import is_alive, read_json, run_facts

#: First bytes ``follow`` writes, so a login script's noise before it can be cut off.
STREAM_MARK = b"\x1eharness-follow\x1e\n"
#: ``follow`` ends with this marker and a JSON line on stderr.
END_MARK = "\x1eharness-end "
READ_CHUNK = 1 << 20
#: The end report's longest line: the laptop keeps the last 64 KiB of a follower's stderr, so
#: a longer one (a run.json with a 100 KB command) goes without the record it already has.
END_MAX = 32 * 1024


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


def follow(
    run_dir: str, offset: int, wait: bool, poll: float, lost_check: float, until_ready: bool = False
) -> dict[str, Any]:
    """Copy the log from ``offset`` to stdout until the run is over and the log is drained.

    Returns the end report (written to stderr by :func:`main`). ``wait=False`` stops at the
    current end of the log instead of following it; ``until_ready``: a service's start, which
    also ends (``ready``) once its ``ready.json`` exists.
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
            if until_ready and os.path.exists(os.path.join(run_dir, "ready.json")):
                reason, final = "ready", True
                continue
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


def follow_command(argv: list[str]) -> int:
    """``follow RUN_DIR OFFSET [--poll S] [--lost-check S] [--once]``: stream, then report."""
    opts = {"--poll": 0.05, "--lost-check": 1.0}
    wait = "--once" not in argv
    rest = [a for a in argv[3:] if a not in ("--once", "--until-ready")]
    for name, value in zip(rest[::2], rest[1::2], strict=False):
        opts[name] = float(value)
    try:
        end = follow(argv[1], int(argv[2]), wait, opts["--poll"], opts["--lost-check"],
                     "--until-ready" in argv)  # fmt: skip
    except BrokenPipeError:
        return 0  # the reader went away: nothing left to tell
    if end["reason"] in ("finished", "lost", "eof", "ready"):
        end["facts"] = run_facts(argv[1])  # saves the laptop a round trip for the state
    line = json.dumps(end)
    if len(line) > END_MAX and end.get("facts"):  # a huge command: the laptop has it
        end["facts"]["record"] = None
        line = json.dumps(end)
    with contextlib.suppress(OSError):
        sys.stderr.write(END_MARK + line + "\n")
        sys.stderr.flush()
    return 0 if end["reason"] != "no-log" else 4
