"""A host from hosts.toml, reached over one SSH connection (Fabric for config, Paramiko for I/O).

Why it is built the way it is:

* **One connection per process.** The TCP + key exchange + auth handshake costs more than most
  commands we run, so it is made lazily on first use and reused for every command and for the
  single SFTP session (a stat is ~5 ms, an exec ~100 ms on loopback).
* **Fabric only to connect.** ``fabric.Connection`` resolves ``~/.ssh/config`` (aliases,
  HostName, User, Port, IdentityFile, ProxyJump); commands then go straight onto a Paramiko
  session channel, because Fabric's ``run()`` (watchers, threads, per-byte decoding) is ~70x
  slower on large output.
* **Host keys verified.** Fabric hard-codes ``AutoAddPolicy``; we replace it with
  :class:`harness.targets.hostkeys.HostKeyPolicy` on every hop before connecting.
* **No hangs, no tracebacks.** Every wait has a deadline or a liveness check (SSH keepalive,
  TCP keepalive, channel timeouts); every socket/Paramiko failure becomes a
  :class:`~harness.errors.ConnectError` / :class:`~harness.errors.TargetError` naming the host.
* **One connection across processes, too** (:mod:`harness.targets.mux`). Importing Paramiko
  and the handshake cost ~0.6 s per ``harness`` process, more than the remote work. So a
  target first looks for a live mux server for its host and, if there is one, sends its
  requests there without importing Paramiko. Otherwise it connects directly (so host-key and
  auth errors appear in the foreground as before) and, when closed with the link still
  healthy, starts that server for the next command. ``HARNESS_SSH_PERSIST=0`` turns it off.

Modules: :mod:`.target` (the Target), :mod:`.connect` (the Fabric connection, host-key policy,
connect errors), :mod:`.sharing` (the kept-connection route), :mod:`.channel` (session
channel I/O). Fabric and Paramiko are imported inside functions only: importing this package
must stay cheap (``harness --help``).
"""

from harness.targets.ssh.target import SshTarget

__all__ = ["SshTarget"]
