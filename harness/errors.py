"""One error hierarchy whose messages are written for the user.

Every low-level failure (socket, Paramiko, OSError, tomllib) is turned into one of these at
the boundary where we still know the host, file, line or key. The CLI prints ``message`` as one
red line and ``hint`` below it, then exits with ``exit_code`` -- never a traceback.
"""

from __future__ import annotations


class HarnessError(Exception):
    """Root of every error harness reports to the user."""

    exit_code: int = 2

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\nhint: {self.hint}"


class UsageError(HarnessError):
    """The command line itself is wrong (bad target spec, bad argument shape)."""


class ConfigError(HarnessError):
    """hosts.toml / pipeline / series files are wrong; the message names file:line:key."""


class TargetError(HarnessError):
    """A target could not be reached or used (host, interpreter, cache)."""


class TimedOut(TargetError):
    """A command on the target ran past its time limit and was killed."""


class IndexUnreachable(TargetError):
    """pip could not reach any package index (no network, a proxy down): said once, quickly."""


class HostKeyError(TargetError):
    """The server's host key is unknown or changed; never silently accepted."""


class ConnectError(TargetError):
    """TCP/SSH connection or authentication failed, or the link died."""


class ProbeError(HarnessError):
    """A probe ran on the target but reported a failure (module missing, bad file...)."""


class NoSpace(ProbeError):
    """The target's disk is full where a probe had to write (ENOSPC); ``path``: where."""

    def __init__(self, message: str, hint: str | None = None, path: str | None = None) -> None:
        super().__init__(message, hint)
        self.path = path


class NotWritable(ProbeError):
    """The target refused a probe's write (a read-only file system, no permission): a fact,
    not a crash. ``path``: where; ``reason``: the words for why."""

    def __init__(
        self, message: str, hint: str | None = None, path: str | None = None, reason: str = ""
    ) -> None:
        super().__init__(message, hint)
        self.path = path
        self.reason = reason


class PatchError(HarnessError):
    """A patch series could not be planned or applied."""


class PatchConflict(PatchError):
    exit_code = 1


class VersionMismatch(PatchError):
    pass


class StalePatch(PatchError):
    """An applied patch's text changed in the series: the target holds the old change."""

    exit_code = 1


class Interrupted(HarnessError):
    """Ctrl-C: the message says in one line what state the command left, and how to see it."""

    exit_code = 130


class Stopped(KeyboardInterrupt):
    """Ctrl-C, with what it stopped (``message``). Still a KeyboardInterrupt, so a command
    that says what state it left (``apply-patches``) says so; else the CLI says this."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class RunError(HarnessError):
    """A pipeline step could not be launched, followed or stopped."""


class NotReady(RunError):
    """The pre-run review says the run cannot work; the command worked and found problems."""

    exit_code = 1
