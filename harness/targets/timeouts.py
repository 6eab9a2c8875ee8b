"""How long harness waits on a target, settable per host and per command.

Two waits: ``timeout``, for one command or probe on the target (a Python that hangs in an
import; default 300 s), and ``connect_timeout``, for each of TCP connect, SSH banner and
authentication (default 10 s). hosts.toml sets them per host (``timeout = 900``); the
environment sets them for one command (``HARNESS_TIMEOUT=900 harness check ...``) and wins.
Neither is part of a kept connection's identity: every request carries its own timeout.
"""

from __future__ import annotations

import os

from harness.errors import UsageError

TIMEOUT_ENV = "HARNESS_TIMEOUT"
CONNECT_TIMEOUT_ENV = "HARNESS_CONNECT_TIMEOUT"
DEFAULT_TIMEOUT_S = 300.0
DEFAULT_CONNECT_TIMEOUT_S = 10.0
#: After this many seconds without an answer, a line on stderr says what is being waited for.
PROGRESS_AFTER_S = 5.0
#: ... and then again every this many seconds.
PROGRESS_EVERY_S = 30.0


def _env(name: str) -> float | None:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):  # nan, inf and 1e400 too
        raise UsageError(
            f"${name}={raw!r}: expected a number of seconds > 0 (a finite one)", f"e.g. {name}=900"
        )
    return value


def command_timeout(configured: float | None = None) -> float:
    """Seconds one command or probe may take: ``$HARNESS_TIMEOUT``, hosts.toml, 300."""
    found = _env(TIMEOUT_ENV)
    return found if found is not None else configured or DEFAULT_TIMEOUT_S


def connect_timeout(configured: float | None = None) -> float:
    """Seconds for each connection step: ``$HARNESS_CONNECT_TIMEOUT``, hosts.toml, 10."""
    found = _env(CONNECT_TIMEOUT_ENV)
    return found if found is not None else configured or DEFAULT_CONNECT_TIMEOUT_S


MORE_TIME = (
    f"allow more time if it is just slow: timeout = SECONDS in its hosts.toml entry, or "
    f"{TIMEOUT_ENV}=SECONDS for one command"
)
MORE_CONNECT_TIME = (
    f"raise the connect timeout: connect_timeout = SECONDS in its hosts.toml entry, or "
    f"{CONNECT_TIMEOUT_ENV}=SECONDS for one command"
)
