"""A run's log follower started before the run exists: ``python -B -c THIS RUN_DIR WAIT ...``.

``harness run`` opens the log's stream while its launch is still under way, so that the
follower's start (an SSH exec, a login shell, an interpreter) overlaps the launch instead of
coming after it. This waits for the run's handshake (``supervisor.json``, which the launch
itself waits for), then runs the run directory's own ``supervisor.py follow RUN_DIR ...`` in
this very process, exactly as the follower started after the launch would. It leaves,
having written nothing, as soon as nobody reads its output (the launch failed or was
interrupted and harness closed the stream), or after WAIT seconds.

Sent as ``-c`` source (the run directory does not exist yet), stdlib only; not a probe.
"""

import os
import runpy
import select
import sys
import time

#: Exit status when the run never answered (nothing was written).
NO_RUN = 3


def _reader_gone(fd: int) -> bool:
    """True when nobody reads our stdout any more (as ``_follow._reader_gone``)."""
    try:
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        events = poller.poll(0)
    except (OSError, AttributeError, ValueError):
        return False
    return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in events)


def main(argv: list[str]) -> int:
    run_dir, wait, rest = argv[0], float(argv[1]), argv[2:]
    deadline = time.monotonic() + wait
    handshake = os.path.join(run_dir, "supervisor.json")
    while not os.path.exists(handshake):
        if time.monotonic() > deadline or _reader_gone(sys.stdout.fileno()):
            return NO_RUN
        time.sleep(0.01)
    program = os.path.join(run_dir, "supervisor.py")
    if sys.path and sys.path[0] in ("", "."):
        del sys.path[0]  # the login folder must not shadow the stdlib
    sys.path.insert(0, run_dir)  # as when started by its path
    sys.argv = [program, "follow", run_dir, *rest]
    runpy.run_path(program, run_name="__main__")  # ends with its own exit status
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
