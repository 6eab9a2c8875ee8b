"""Connection sharing for SSH hosts, like OpenSSH ``ControlMaster`` + ``ControlPersist``.

Why: a ``harness`` process spends ~0.45 s importing Fabric/Paramiko/cryptography and ~0.12 s
on the SSH handshake before it does any remote work, which made ``harness probe`` 2.4x slower
than ``ssh host grep``. So the first command connects directly (host-key prompts and auth
errors stay in the foreground) and then starts a small background **mux server** that keeps
that connection open and serves later commands over a Unix socket. A command that finds a
live server imports no Paramiko at all: it sends its request and gets bytes back.

How the pieces fit:

* **Framing.** One request and one reply per Unix connection. Every message is a frame:
  ``!IQ`` (header length, body length), a UTF-8 JSON header, then the body -- raw bytes cut
  into named parts (``stdin``, ``stdout``, ``stderr``, ``data``) whose lengths the header lists
  under ``parts``. No pickle: a peer can make us allocate, never run code. On accept the
  server first sends a ``hello`` frame (protocol, harness version, label, pid); a client that
  gets no hello knows nothing ran and may fall back to a direct connection.
* **Errors** raised by the server's :class:`~harness.targets.ssh.SshTarget` travel as
  ``{"type": class name, "message", "hint"}`` and are raised again client-side as the same
  :mod:`harness.errors` class: the user sees the same one line as on a direct connection.
* **Socket path.** ``$XDG_RUNTIME_DIR/harness-mux/`` else ``~/.cache/harness/mux/``; the folder
  must be ours and ``0700`` or the mux is silently not used. The name is a short sha256 of
  the connection's identity (:mod:`harness.targets.identity`): every field that decides
  *where* it goes, *how it is verified* and *what it runs* (address, user, port, identity,
  known_hosts, the ssh config files and their mtimes, python, env, workdir, HOME, harness
  version). The server repeats that identity in its hello and the client compares it, and a
  probe request names its interpreter: an edited hosts.toml or ~/.ssh/config, or a second
  inventory naming the box the same, never reaches the old endpoint or the old interpreter.
* **Races.** Binding, stale-socket removal and the server's own unlink all happen under an
  ``flock`` on ``NAME.lock`` next to the socket. A server that finds the name taken checks it:
  a live server there means it lost the race and exits quietly; a refused connect means the
  file is stale and is replaced. The server binds *before* it connects to SSH, so a second
  command started meanwhile waits for that connection instead of spawning its own.
* **Lifetime.** The server exits after ``$HARNESS_SSH_PERSIST`` seconds idle (default 600;
  ``0`` turns the whole mechanism off), when its SSH connection drops (it never reconnects
  by itself: reconnecting is the foreground's job, where errors are seen), or on a
  ``shutdown`` request. It removes its socket first, so the next command falls back cleanly.
* **Security.** Only the 0700 folder's owner can reach the socket; on Linux the peer's uid
  is checked with ``SO_PEERCRED`` as well. The server's SshTarget verifies host keys with the
  normal policy and never accepts a new key.

Modules: :mod:`.wire` (framing, errors on the wire), :mod:`.paths` (settings, socket folder
and names, locks, liveness), :mod:`.client` (attach, requests, stop, spawn), :mod:`.server`
(the background process, ``python -m harness.targets.mux serve``). This package exports the
client side; only the server imports :mod:`harness.targets.ssh` (and Paramiko).

Only the stdlib is imported by the client side: it must stay cheap.
"""

from harness.targets.mux.client import (
    MuxClient,
    MuxUnavailable,
    open_connection,
    ping,
    spawn,
    stop_all,
    stop_one,
)
from harness.targets.mux.paths import (
    DEBUG_ENV,
    DEFAULT_PERSIST_S,
    PERSIST_ENV,
    debug,
    identity_of,
    mux_dir,
    persist_seconds,
    socket_key,
    socket_path,
)
from harness.targets.mux.wire import PROTOCOL, ProtocolError, host_from_json, host_to_json

__all__ = [
    "DEBUG_ENV",
    "DEFAULT_PERSIST_S",
    "PERSIST_ENV",
    "PROTOCOL",
    "MuxClient",
    "MuxUnavailable",
    "ProtocolError",
    "debug",
    "host_from_json",
    "host_to_json",
    "identity_of",
    "mux_dir",
    "open_connection",
    "persist_seconds",
    "ping",
    "socket_key",
    "socket_path",
    "spawn",
    "stop_all",
    "stop_one",
]
