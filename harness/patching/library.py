"""The series under ``patches/``, read once per command.

``check --with-patches``, ``check --fix``, ``report``, ``patches`` and ``apply-patches`` all ask
the same few questions of the folder -- which dists have a series, which versions, the series
for an installed version, the dists their ``requires`` gates name -- and each ``series.toml``
(and its patch files) is parsed at most once per command, whoever asks first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from harness.errors import UsageError
from harness.patching.series import Series, dists_with_series, load_series, versions_with_series


@dataclass(frozen=True)
class SeriesLibrary:
    """Every series under one ``patches/`` folder; parsed lazily, each one once."""

    root: Path
    _series: dict[tuple[str, str], Series | None] = field(
        default_factory=dict, compare=False, repr=False
    )
    _versions: dict[str, list[str]] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, where: Path | SeriesLibrary) -> SeriesLibrary:
        """A folder's library (a library stays itself: a command loads it once)."""
        return where if isinstance(where, SeriesLibrary) else cls(where)

    def dists(self) -> list[str]:
        """The dists with at least one series, sorted."""
        return list(self._listed)

    @cached_property
    def _listed(self) -> tuple[str, ...]:
        return tuple(dists_with_series(self.root))

    def chosen(self, only: str | None = None) -> list[str]:
        """The dists a command works on: ``only``, else every dist with a series.

        Raises:
            UsageError: there is no series at all (and none was named).
        """
        if only:
            return [only]
        dists = self.dists()
        if not dists:
            raise UsageError(
                f"no patch series under {self.root}",
                "create patches/<dist>/<version>/series.toml, or `harness make-patch`",
            )
        return dists

    def versions(self, dist: str) -> list[str]:
        """The versions of ``dist`` that have a series, sorted."""
        if dist not in self._versions:
            self._versions[dist] = versions_with_series(self.root, dist)
        return list(self._versions[dist])

    def series_for(self, dist: str, version: str | None) -> Series | None:
        """The series for ``dist`` at ``version`` (None: not installed, or no such series)."""
        if version is None:
            return None
        key = (dist, version)
        if key not in self._series:
            self._series[key] = load_series(self.root, dist, version)
        return self._series[key]

    def required_dists(self, dists: list[str]) -> list[str]:
        """Every dist the ``requires`` gates of ``dists``' series name (all their versions)."""
        names: set[str] = set()
        for d in dists:
            for v in self.versions(d):
                s = self.series_for(d, v)
                for p in s.patches if s else ():
                    names.update(n for n, _ in p.requires)
        return sorted(names)


__all__ = ["SeriesLibrary"]
