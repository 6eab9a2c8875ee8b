"""What a foreground ``harness run`` needs on this machine, checked before anything launches;
and, once a step is launched, a local failure that still names the run and how to reach it.

A run launched and then lost from sight is the worst outcome: the user retries and launches
another. So a stdout that is closed, or a log-copy folder that cannot be written, refuses the
launch in one line; anything that fails here after the launch says the run's id, that it
keeps running, and the ``logs`` / ``stop`` commands for it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.errors import HarnessError, RunError


def check_stdout(detach: bool, as_json: bool) -> None:
    """Refuse a foreground run (or ``--detach --json``) whose stdout is closed (``>&-``)."""
    if detach and not as_json:
        return
    if detach:
        stdout_open(
            "--json has nowhere to write the run's record; nothing was launched",
            "leave out --json (the run id goes to stderr), or send stdout to a file",
        )
    stdout_open(
        "a foreground run has nowhere to show the step's log; nothing was launched",
        "send stdout to a file (harness run STEP > FILE), or launch with --detach and "
        "follow later with: harness logs RUN --follow",
    )


def stdout_open(why: str, hint: str) -> None:
    """Refuse, in one line, a command whose output has nowhere to go (stdout closed)."""
    if sys.stdout is None:
        raise RunError(f"stdout is closed: {why}", hint)


def check_copy_folder(folder: Path) -> None:
    """Refuse a foreground run whose local log copy (``folder``) cannot be written."""
    problem = _unwritable(folder)
    if problem is not None:
        raise RunError(
            f"the run's log cannot be copied to {folder} on this machine ({problem}); "
            "nothing was launched",
            "set HARNESS_CACHE to a folder you can write, or launch with --detach",
        )


def _unwritable(folder: Path) -> str | None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return e.strerror or type(e).__name__
    if not os.access(folder, os.W_OK | os.X_OK):
        try:
            read_only = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
        except OSError:
            read_only = False
        return "read-only file system" if read_only else "permission denied"
    return None


@contextmanager
def launched(run_id: str, where: str, flag: str) -> Iterator[None]:
    """Around following a launched run: a failure here still says the run keeps running
    on ``where`` and how to follow or stop it (Ctrl-C and harness's own words pass)."""
    try:
        yield
    except HarnessError as e:
        if run_id in e.message:  # it already names the run (a dropped link, a detach)
            raise
        raise RunError(f"{e.message}; {_still(run_id, where)}", _reach(run_id, flag)) from None
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as e:  # a launched run must never be lost from sight
        raise RunError(
            f"harness could not follow {run_id} here ({_why(e)}); {_still(run_id, where)}",
            _reach(run_id, flag),
        ) from None


def _still(run_id: str, where: str) -> str:
    return f"{run_id} was launched and keeps running on {where}"


def _reach(run_id: str, flag: str) -> str:
    return (
        f"follow it with: harness logs {run_id}{flag} --follow; "
        f"stop it with: harness stop {run_id}{flag}"
    )


def _why(e: Exception) -> str:
    if isinstance(e, OSError) and e.strerror:
        return e.strerror + (f": {e.filename}" if e.filename else "")
    if isinstance(e, OSError | ValueError) and "closed file" in str(e):
        return "its output was closed"
    return f"{type(e).__name__}: {e}"
