"""What every run command shares: the target to open, the workdir on it, the timings.

Also where things live: the runs folder's workdir (``--workdir`` > hosts.toml > the current
folder or the remote home) and the local copies' folder (harness's cache).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from harness.config import HostsConfig
from harness.runs.target import remote
from harness.runs.target.timings import Timings
from harness.targets.base import Target
from harness.targets.registry import open_target

#: Glob of the GPU device files scanned for holders; tests point it at ordinary files.
GPU_GLOB_ENV = "HARNESS_RUN_GPU_DEVICES"


@dataclass(frozen=True)
class Context:
    """What every run command needs besides its own arguments."""

    hosts: HostsConfig
    target: str | None = None
    accept_new_host_key: bool = False
    workdir: str | None = None
    timings: Timings = field(default_factory=Timings.from_env)
    device_glob: str | None = field(default_factory=lambda: os.environ.get(GPU_GLOB_ENV))

    @property
    def target_name(self) -> str:
        """The ``-t`` value that names this target in suggested commands."""
        return self.target or self.hosts.default or "local"

    @property
    def flag(self) -> str:
        return f" -t {self.target_name}"

    def open(self) -> Target:
        target = open_target(self.target, self.hosts, accept_new_host_key=self.accept_new_host_key)
        remote.refuse_read_only(target)
        return target


def workdir_for(target: Target, explicit: str | None, absolute: bool) -> str | None:
    """``--workdir`` > hosts.toml ``workdir`` > the current folder (local) or home (SSH).

    ``None`` means "the remote home", which the runs probe resolves itself; when the
    pipeline needs ``{workdir}`` as text (``absolute``), the target is asked once.
    """
    wd = explicit if explicit is not None else target.default_workdir
    if target.on_this_machine:
        return os.path.abspath(os.path.expanduser(wd or os.getcwd()))
    if wd is not None and wd.startswith("/"):
        return wd.rstrip("/") or "/"
    if not absolute and wd is None:
        return None
    home = remote.home_workdir(target)
    if wd is None:
        return home
    rel = wd[2:] if wd.startswith("~/") else wd.lstrip("~")
    return f"{home.rstrip('/')}/{rel}" if rel else home


def context(
    hosts: HostsConfig,
    target: str | None,
    accept_new_host_key: bool,
    workdir: str | None = None,
) -> Context:
    """Build the Context (environment read here, so a bad value fails before any I/O)."""
    timings = Timings.from_env()
    return Context(
        hosts=hosts,
        target=target,
        accept_new_host_key=accept_new_host_key,
        workdir=workdir,
        timings=timings,
    )
