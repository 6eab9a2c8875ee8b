"""The ``exec`` kind: another target, every command run through a prefix.

A GPU box is often a container in a pod or a job in a Slurm allocation, reached by running a
command on a host that can reach it::

    [hosts.box]
    kind = "exec"
    via = "gpu"                                   # another host of the file, or "local"
    exec = ["docker", "exec", "-i", "trainer"]    # put in front of every command
    python = "/opt/conda/bin/python"              # the interpreter in there

Probes, patches and runs need nothing else: they are programs run by the target's Python
with their input on stdin (hence ``-i``), and a run's supervisor detaches *inside* the
wrapper (its own session there), so ``harness stop`` -- another program run through the
prefix -- finds and stops the whole process tree. The prefix must therefore reach the same
place every time (``docker exec`` into a running container, not ``docker run``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from harness.config import HostEntry, Linker, TableChecker
from harness.targets import shell
from harness.targets.base import ByteStream, CommandResult, Target
from harness.targets.entries import Entry, EntryTarget, common_keys, parse_common

#: ``via = "local"``: the prefix runs on this machine.
LOCAL = "local"
_KEYS: dict[str, tuple[type, str]] = {
    "via": (str, 'via = "gpu"  (a host of this file, or "local")'),
    "exec": (list, 'exec = ["docker", "exec", "-i", "NAME"]'),
    **common_keys(python='python = "/opt/conda/bin/python"', workdir='workdir = "/workspace"'),
    "address": (str, 'address = "10.0.0.7"'),
}
_REQUIRED = {key: f"add {_KEYS[key][1]}" for key in ("via", "exec")}


@dataclass(frozen=True, kw_only=True)
class ExecEntry(Entry):
    """One ``[hosts.NAME]`` table of ``kind = "exec"``; ``inner`` is the ``via`` host's entry
    once the file is read (``None``: ``via = "local"``)."""

    via: str
    exec: tuple[str, ...]
    own_address: str | None = None
    inner: HostEntry | None = None

    @property
    def kind(self) -> str:
        return "exec"

    @property
    def address(self) -> str:
        """``address`` if given, else the ``via`` host's (a container shares its host's)."""
        if self.own_address is not None:
            return self.own_address
        return "127.0.0.1" if self.inner is None else self.inner.address

    def reach(self) -> str:
        return f"{shell.join(self.exec)} on {self.via}"

    def own_listing(self) -> dict[str, Any]:
        return {"via": self.via, "exec": list(self.exec)}

    def link(self, check: TableChecker, host: Linker) -> ExecEntry:
        if self.via == LOCAL:
            return self
        return replace(self, inner=host(self.via, ("hosts", self.name, "via")))


def parse_entry(check: TableChecker, name: str, table: dict[str, Any]) -> ExecEntry:
    """One ``[hosts.NAME]`` table with ``kind = "exec"``: keys, types and the prefix checked
    (``via`` naming a host is checked once every entry is read: :meth:`ExecEntry.link`)."""
    common = parse_common(check, name, table, _KEYS, _REQUIRED)
    prefix = table["exec"]
    if not prefix or not all(isinstance(a, str) and a for a in prefix):
        raise check.fail(
            ("hosts", name, "exec"),
            "expected a non-empty list of non-empty strings (the command put in front)",
            f"e.g. {_KEYS['exec'][1]}, or kubectl exec -i POD -c C --",
        )
    return ExecEntry(
        **common, via=table["via"], exec=tuple(prefix), own_address=table.get("address")
    )


class ExecTarget(EntryTarget):
    """``inner`` (an SSH host, this machine, another wrapped target), every command behind
    the entry's prefix. ``env`` and ``cwd`` apply inside the wrapper: a ``/bin/sh`` there
    changes folder and sets them (a wrapper's own options for them differ per tool)."""

    kind = "exec"
    on_this_machine = False  # paths are the wrapped place's, even with ``via = "local"``

    def __init__(self, entry: ExecEntry, inner: Target) -> None:
        self._entry, self.inner = entry, inner

    @property
    def entry(self) -> ExecEntry:
        return self._entry

    @property
    def label(self) -> str:  # type: ignore[override]
        return f"{self.entry.name} ({self.entry.exec[0]} via {self.inner.label})"

    def wrap(
        self, argv: Sequence[str], env: Mapping[str, str] | None = None, cwd: str | None = None
    ) -> list[str]:
        """The argv run on ``inner``: the prefix, then ``argv`` (in ``cwd`` with ``env``)."""
        if not env and cwd is None:
            return [*self.entry.exec, *argv]
        line = shell.command(argv, env=env or None, cwd=cwd, exec_=True)
        return [*self.entry.exec, "/bin/sh", "-c", line]

    def run(
        self,
        argv: Sequence[str],
        *,
        stdin: bytes | None = None,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> CommandResult:
        from harness.errors import TimedOut

        try:
            got = self.inner.run(self.wrap(argv, env, cwd), stdin=stdin, timeout=timeout)
        except TimedOut as exc:  # the prefix's hang, as likely as the command's: name both
            shown = shell.join(self.entry.exec)
            raise TimedOut(
                f"{self.label}: {argv[0]} through the exec prefix `{shown}`: "
                f"{exc.message.split(': ', 1)[-1]}",
                f"if the prefix hangs, try it by hand: {shown} {self.entry.python} -c "
                f"'print(1)'; {exc.hint}",
            ) from None
        return replace(got, argv=tuple(argv))

    def stream(self, argv: Sequence[str]) -> ByteStream:
        return self.inner.stream(self.wrap(argv))

    def identity(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "exec": list(self.entry.exec),
            "python": self.entry.python,
            "via": self.inner.identity(),
        }

    @property
    def peer_address(self) -> str:
        return self.entry.address

    def prefix(self) -> list[str]:
        return [*self.inner.prefix(), *self.entry.exec]

    def close(self) -> None:
        self.inner.close()
