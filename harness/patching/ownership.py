"""A dist's series stays inside that dist. Pure.

A ``patches/speculators/...`` series may change only files that pip's ``RECORD`` says the
speculators dist installed, and create files only inside its own top-level packages. Some
files are never patched at all, whoever owns them: a ``.pth`` file or ``sitecustomize.py`` /
``usercustomize.py`` runs code in *every* interpreter of the environment, anything at the top
of site-packages belongs to no package, and ``.dist-info`` holds pip's record of the install
(patching it would make RECORD vouch for edited files). Executables in ``bin/`` live outside
site-packages, where no patch path can reach (:func:`harness.patching.diffs.check_path`).

Patching another dist means a series under that dist's name, where its version gates it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from harness.patching.series import Series

#: Files the interpreter runs at start-up, wherever they are found on ``sys.path``.
STARTUP_FILES = frozenset({"sitecustomize.py", "usercustomize.py"})
_META_SUFFIXES = (".dist-info", ".egg-info", ".data")


@dataclass(frozen=True)
class Ownership:
    """What one dist owns in a site-packages, as its RECORD and harness's manifest say.

    Attributes:
        dist: the dist whose series this is.
        record: paths its RECORD lists (relative to site-packages).
        owners: for paths it does not list, the other dist whose RECORD does.
        created: files harness created for this dist earlier (a ``/dev/null`` patch).
    """

    dist: str
    record: frozenset[str]
    owners: Mapping[str, str]
    created: frozenset[str] = frozenset()

    @property
    def packages(self) -> frozenset[str]:
        """Top-level folders the RECORD installs into (``speculators``), metadata excluded."""
        return packages_of(self.record)


def packages_of(record: Iterable[str]) -> frozenset[str]:
    """Pure: the first folder of every RECORD path that is inside a package folder."""
    out = set()
    for path in record:
        head, sep, _ = path.partition("/")
        if sep and head not in ("..", "__pycache__") and not head.endswith(_META_SUFFIXES):
            out.add(head)
    return frozenset(out)


def refusal(path: str, exists: bool, own: Ownership) -> str | None:
    """Pure: why a series of ``own.dist`` may not write ``path``; ``None`` when it may."""
    parts = path.split("/")
    name = parts[-1]
    if name.endswith(".pth"):
        return "is a .pth file: it runs code in every interpreter of the environment"
    if name in STARTUP_FILES:
        return f"is {name}: it runs in every interpreter of the environment"
    if any(p.endswith(_META_SUFFIXES) for p in parts[:-1]):
        return "is install metadata (.dist-info), pip's record of the install, not code"
    if len(parts) == 1:
        return "is at the top of site-packages, outside every package"
    other = own.owners.get(path)
    if path in own.record or path in own.created:
        return None
    if other is not None and other != own.dist:
        return f"belongs to {other} (its RECORD lists it), not {own.dist}"
    if exists:
        return f"is not a file {own.dist} installed (its RECORD does not list it)"
    if parts[0] not in own.packages:
        mine = ", ".join(sorted(own.packages)) or "none (no RECORD)"
        return f"would create a file outside {own.dist}'s packages ({mine})"
    return None


def foreign_paths(series: Series, own: Ownership, exists: Mapping[str, bool]) -> list[str]:
    """Pure: ``PATCHFILE:LINE: PATH REASON`` for every file the series may not write."""
    out = []
    for spec in series.patches:
        for fp in spec.files:
            why = refusal(fp.path, exists.get(fp.path, False), own)
            if why is not None:
                out.append(f"{spec.file}:{fp.patch_line}: {fp.path} {why}")
    return out


def foreign_hint(series: Series, own: Ownership) -> str:
    """Where such a patch belongs instead."""
    others = sorted({o for o in own.owners.values() if o != own.dist})
    where = ", ".join(f"patches/{o}/<version>/" for o in others)
    return (
        f"a series under patches/{series.dist}/ changes only files {series.dist} installed and "
        f"creates files only inside its packages; patching another dist means a series under "
        f"that dist's name{(' (' + where + ')') if where else ''}"
    )
