"""Every wait in ``harness run`` in one place, so that fault tests can shrink them to seconds.

Defaults suit a real GPU box; tests set the ``HARNESS_RUN_*`` variables (seconds).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace

from harness.errors import ConfigError

_ENV = {
    "poll": "HARNESS_RUN_POLL_S",
    "lost_check": "HARNESS_RUN_LOST_CHECK_S",
    "reconnect": "HARNESS_RUN_RECONNECT_S",
    "handshake": "HARNESS_RUN_HANDSHAKE_S",
    "stop_grace": "HARNESS_RUN_GRACE_S",
    "status_wait": "HARNESS_RUN_STATUS_WAIT_S",
}


@dataclass(frozen=True)
class Timings:
    #: The remote follower's sleep at the end of the log: bounds the added latency.
    poll: float = 0.05
    #: How often the follower checks that the supervisor is still alive (``lost``).
    lost_check: float = 1.0
    #: Keep reconnecting this long after the link drops before giving up (laptop asleep...).
    reconnect: float = 600.0
    #: ``launch`` waits this long for the supervisor's handshake.
    handshake: float = 15.0
    #: Default ``--grace`` of ``stop`` and ``--kill-stale``: SIGTERM, then SIGKILL.
    stop_grace: float = 10.0
    #: After a stop, wait this long for the supervisor to write the status.
    status_wait: float = 10.0
    #: Live view refresh period.
    refresh: float = 0.1

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Timings:
        env = os.environ if env is None else env
        out = cls()
        for f in fields(cls):
            name = _ENV.get(f.name)
            raw = env.get(name, "").strip() if name else ""
            if not raw:
                continue
            try:
                value = float(raw)
            except ValueError:
                value = -1.0
            if not 0 <= value < float("inf"):
                raise ConfigError(f"${name}={raw!r} is not a number of seconds")
            out = replace(out, **{f.name: value})
        return out
