"""What a step needs of its environment, against what that environment has. Pure.

A step declares ``requires = { transformers = ">=4.56,<5" }`` when its own imports need other
versions than the target's defaults (speculators 0.3.0 trains only under transformers 4.x,
while vLLM 0.20's box has 5.x). The versions are the ones the *step* sees: its ``PYTHONPATH``
entries come first, as they do when it runs. An unmet need is a blocker with the pip line that
would meet it, so the 20-minute mistake is caught before the launch.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.targets import shell


@dataclass(frozen=True)
class Need:
    dist: str
    spec: str
    found: str | None  # the version the step's imports would see; None: not installed

    @property
    def ok(self) -> bool:
        from packaging.specifiers import SpecifierSet
        from packaging.version import InvalidVersion, Version

        if self.found is None:
            return False
        try:
            return Version(self.found) in SpecifierSet(self.spec, prereleases=True)
        except InvalidVersion:
            return False

    def to_dict(self) -> dict[str, Any]:
        return {"dist": self.dist, "spec": self.spec, "found": self.found, "ok": self.ok}


def step_paths(env: Mapping[str, str], cwd: str) -> list[str]:
    """The ``PYTHONPATH`` entries of a step's environment, absolute, in import order."""
    raw = env.get("PYTHONPATH") or ""
    return [posixpath.normpath(posixpath.join(cwd, p)) for p in raw.split(":") if p]


def needs(requires: Mapping[str, str], versions: Mapping[str, str | None]) -> list[Need]:
    return [Need(d, spec, versions.get(d)) for d, spec in requires.items()]


def pip_line(python: str, unmet: list[Need], paths: list[str]) -> str:
    """The command that would meet ``unmet``: into the step's first ``PYTHONPATH`` folder if
    it has one (that is where the step looks first), else into the target's interpreter."""
    reqs = [f"{n.dist}{n.spec}" for n in unmet]
    where = ["--target", paths[0]] if paths else []
    return shell.join([python, "-m", "pip", "install", *where, *reqs])
