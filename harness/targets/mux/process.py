"""The mux server's process: ``python -m harness.targets.mux serve CONFIG_JSON`` claims the
host's socket, connects once and serves (:class:`~.server.MuxServer`) until idle, dropped or
signalled; ``stop`` ends every server. Apart from the server so that it reads as one job."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import traceback
from collections.abc import Mapping, Sequence
from typing import Any

from harness.errors import HarnessError
from harness.targets.mux.client import stop_all
from harness.targets.mux.paths import DEFAULT_PERSIST_S, claim, mux_dir, name_lock
from harness.targets.mux.server import MuxServer, log
from harness.targets.mux.wire import host_from_json


def serve(config: Mapping[str, Any]) -> int:
    """The server process: claim the socket, connect, serve until idle or dropped."""
    import signal

    path = str(config["socket"])
    directory = mux_dir()
    if directory is None or os.path.dirname(path) != str(directory):
        log(f"refusing {path}: not in a private mux folder")
        return 1
    listener = claim(path)
    if listener is None:
        log("another server already serves this host; exiting")
        return 0
    inode = os.stat(path).st_ino

    def release() -> None:
        with contextlib.suppress(OSError), name_lock(path):
            if os.stat(path).st_ino == inode:
                os.unlink(path)
        listener.close()

    from harness.targets.ssh import SshTarget

    host = host_from_json(config["host"])
    target = SshTarget(
        host,
        connect_timeout=float(config.get("connect_timeout", 10.0)),
        ssh_config_path=config.get("ssh_config_path"),
        persist=False,
        reconnect=False,
    )
    try:
        target.connect()
    except HarnessError as e:
        log(f"cannot connect to {host.name}: {e}")
        release()
        target.close()
        return 1
    except BaseException:
        release()
        raise
    server = MuxServer(
        target,
        path,
        listener,
        float(config.get("idle", DEFAULT_PERSIST_S)),
        identity=config.get("identity"),
    )

    def on_signal(signum: int, _frame: Any) -> None:
        server.retire(f"signal {signum}")

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, on_signal)
    log(f"serving {target.label} on {path} (idle timeout {server.idle:g}s)")
    server.serve_forever()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m harness.targets.mux serve JSON`` (what :func:`spawn` runs) or ``stop``.

    Users stop kept connections with ``harness hosts --disconnect``; ``stop`` stays for
    scripts that used it.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["stop"]:
        print(f"stopped {stop_all()} harness mux server(s)")
        return 0
    if len(args) != 2 or args[0] != "serve":
        sys.stderr.write("usage: python -m harness.targets.mux serve CONFIG_JSON | stop\n")
        return 2
    try:
        code = serve(json.loads(args[1]))
    except Exception:
        log(f"crashed:\n{traceback.format_exc()}")
        code = 1
    sys.stderr.flush()
    # Daemon threads (Paramiko's, handlers') may still be blocked; do not wait for them.
    os._exit(code)
