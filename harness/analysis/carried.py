"""What a patch series says about a release it was not made for, read before any launch.

A series is written for one version (``patches/<dist>/<version>/``). Carried to another
release it can meet (c) files it patches that the release deleted, and (d) values it sets in
the environment that the release refuses (the callee's source raising for them; see
:mod:`.environ`). Built by ``harness.reading.carried`` (which reads the target), checked by
``rules.carried`` and ``rules.environ``; pure models here.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.analysis.environ import EnvSet


@dataclass(frozen=True)
class DeletedFile:
    """A file a series' patch changes that the release on the target does not have."""

    dist: str
    version: str  # the release checked
    series: str  # the series folder, as the user names it ("patches/vllm/0.24.0")
    patch: str  # the patch's id
    patch_file: str  # the patch file, shown
    line: int  # its ``+++``/``---`` header line
    path: str  # the file, relative to site-packages
    gate: str = ""  # the patch's ``requires``, as written ("vllm >=0.21,<0.27")
    gated_off: bool = False  # its gate leaves this release out


@dataclass(frozen=True)
class SeriesFacts:
    """Per check: the deleted files, the series' environment sets, and where else to go."""

    deleted: tuple[DeletedFile, ...] = ()
    sets: tuple[EnvSet, ...] = ()
    #: other series of the caller's dist this project holds, each with the pipeline files
    #: that name it ("patches/speculators/0.9.0 (pipelines/speculators-0.9.toml)")
    elsewhere: tuple[str, ...] = ()
