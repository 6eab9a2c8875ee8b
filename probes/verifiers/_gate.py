"""A warm check's gate: started with the step, it waits here until the supervisor says ``go``.

The supervisor (``probes/runs/_verify.py``) starts a shipped check whose source names
``HARNESS_VERIFY_GATE`` beside the step, with that variable naming a pipe only the check holds.
The check loads its libraries first (the ~15 s of torch/transformers imports overlap the step),
then calls :func:`wait_for_go`: ``go`` -- the step exited 0, its leftovers are ended, the
shipped checks are as launched -- means check now; end of file means the step failed or was
stopped, and the check leaves without a word. Run by hand (no variable) it goes at once.
"""

from __future__ import annotations

import os

GATE_ENV = "HARNESS_VERIFY_GATE"


def wait_for_go() -> bool:
    """Block until the supervisor's word: True for ``go``, False for anything else or EOF."""
    fd = os.environ.pop(GATE_ENV, None)
    if not fd:
        return True
    got = b""
    try:
        while not got.endswith(b"\n"):
            chunk = os.read(int(fd), 64)
            if not chunk:
                return False
            got += chunk
    finally:
        os.close(int(fd))
    return got.strip() == b"go"
