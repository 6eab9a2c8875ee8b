"""Find modules and their owning distributions on an import path, without importing anything.

Importing ``vllm`` pulls in torch and CUDA and takes seconds; a probe must answer in
milliseconds, so we mirror the import system's file lookup (regular packages, namespace
packages, plain modules) over a list of roots and read ``*.dist-info`` metadata as text.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from typing import Any

EXT_SUFFIXES = (".so", ".pyd", ".abi3.so")

#: Every file and folder a probe looked at -> (mtime_ns, size). The bootstrap returns it so
#: the controller can cache the result and, next time, skip the work when nothing changed.
TOUCHED: dict[str, tuple[int, int]] = {}


def touch(path: str) -> None:
    try:
        st = os.stat(path)
        TOUCHED[path] = (st.st_mtime_ns, st.st_size)
    except OSError:
        TOUCHED[path] = (-1, -1)


def close_names(name: str, pool: list[str], n: int = 5) -> list[str]:
    """What ``name`` likely meant: names that start with it (any case; the same case, then
    the shortest, first), then difflib's close matches -- ``Sched`` is ``SchedulerConfig``
    rather than ``cache``."""
    low = name.lower()
    starts = [c for c in pool if c != name and c.lower().startswith(low)]
    starts.sort(key=lambda c: (not c.startswith(name), len(c), c))
    import difflib  # only for a name not found: not imported by every probe run (~3 ms)

    close = difflib.get_close_matches(name, [c for c in pool if c != name], n=n)
    return [*starts, *(c for c in close if c not in starts)][:n]


class ProbeFailure(Exception):
    """A failure the controller turns into a user-facing error (``kind`` picks the message)."""

    def __init__(self, kind: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.details = details or {}


@dataclass(frozen=True)
class ModuleLocation:
    name: str
    file: str  # the .py file (``__init__.py`` for packages); a .pyi stub where there is none
    root: str  # the import root (site-packages) it was found under
    is_package: bool
    search_dirs: tuple[str, ...]  # ``__path__`` for packages, else ()


def default_paths() -> list[str]:
    """The interpreter's own import path, minus the cwd and zip files."""
    return [p for p in sys.path if p and os.path.isdir(p)]


class Finder:
    """Resolves dotted module names to files over fixed roots; caches directory listings."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = [os.path.abspath(p) for p in paths]
        self._listing: dict[str, frozenset[str]] = {}
        self._found: dict[str, ModuleLocation | None] = {}

    def listdir(self, d: str) -> frozenset[str]:
        got = self._listing.get(d)
        if got is None:
            touch(d)
            try:
                got = frozenset(os.listdir(d))
            except OSError:
                got = frozenset()
            self._listing[d] = got
        return got

    def _root_of(self, path: str) -> str:
        best = ""
        for r in self.paths:
            if (path == r or path.startswith(r + os.sep)) and len(r) > len(best):
                best = r
        return best or os.path.dirname(path)

    def _search(self, leaf: str, dirs: tuple[str, ...], name: str) -> ModuleLocation | None:
        namespace: list[str] = []
        for d in dirs:
            entries = self.listdir(d)
            if leaf in entries:
                pkg = os.path.join(d, leaf)
                inside = self.listdir(pkg)
                # a stub package (``torch/_C/__init__.pyi``) describes a compiled one
                for init in ("__init__.py", "__init__.pyi"):
                    if init in inside:
                        f = os.path.join(pkg, init)
                        return ModuleLocation(name, f, self._root_of(pkg), True, (pkg,))
                if os.path.isdir(pkg):
                    namespace.append(pkg)
                    continue
            # no source: a stub (``numpy/random/mtrand.pyi``) tells what the compiled module
            # beside it defines, as type checkers read it
            for suffix in (".py", ".pyi"):
                if leaf + suffix in entries:
                    f = os.path.join(d, leaf + suffix)
                    return ModuleLocation(name, f, self._root_of(f), False, ())
        if namespace:
            return ModuleLocation(name, "", self._root_of(namespace[0]), True, tuple(namespace))
        return None

    def find(self, dotted: str) -> ModuleLocation | None:
        """Locate a module the way ``importlib`` would, package by package."""
        if dotted in self._found:
            return self._found[dotted]
        parts = dotted.split(".")
        loc: ModuleLocation | None = None
        dirs = tuple(self.paths)
        for i, part in enumerate(parts):
            loc = self._search(part, dirs, ".".join(parts[: i + 1]))
            if loc is None:
                break
            if i < len(parts) - 1:
                if not loc.is_package:
                    loc = None
                    break
                dirs = loc.search_dirs
        self._found[dotted] = loc
        return loc

    def is_extension(self, dotted: str) -> str | None:
        """Path of a compiled module with this name (no source to parse), if there is one."""
        parent, _, leaf = dotted.rpartition(".")
        dirs: tuple[str, ...] = tuple(self.paths)
        if parent:
            p = self.find(parent)
            if p is None:
                return None
            dirs = p.search_dirs
        for d in dirs:
            for e in self.listdir(d):
                if e.startswith(leaf + ".") and e.endswith(EXT_SUFFIXES):
                    return os.path.join(d, e)
        return None

    def submodules(self, loc: ModuleLocation) -> list[str]:
        names: set[str] = set()
        for d in loc.search_dirs:
            for e in self.listdir(d):
                if e.endswith((".py", ".pyi")) and not e.startswith("__init__."):
                    names.add(e.rsplit(".", 1)[0])
                elif "." not in e and not e.startswith("__") and os.path.isdir(os.path.join(d, e)):
                    names.add(e)
        return sorted(names)

    def not_found(self, dotted: str) -> ProbeFailure:
        """Explain a miss: the deepest package that exists, and close matches inside it."""
        parts = dotted.split(".")
        top = self.find(parts[0])
        if top is None:
            tops = self._top_levels()
            close = close_names(parts[0], tops)
            return ProbeFailure(
                "dist-not-installed",
                f"no module named {parts[0]!r} on this interpreter's import path",
                {"searched": self.paths, "executable": sys.executable, "suggestions": close},
            )
        found = parts[0]
        for i in range(1, len(parts)):
            cand = ".".join(parts[: i + 1])
            if self.find(cand) is None:
                parent = self.find(found)
                assert parent is not None
                subs = self.submodules(parent) if parent.is_package else []
                close = [f"{found}.{m}" for m in close_names(parts[i], subs)]
                return ProbeFailure(
                    "module-not-found",
                    f"no module named {cand!r}",
                    {
                        "module": dotted,
                        "deepest": found,
                        "missing": parts[i],
                        "attribute_of": found if i == len(parts) - 1 else None,
                        "suggestions": close,
                        "file": parent.file,
                    },
                )
            found = cand
        return ProbeFailure("module-not-found", f"no module named {dotted!r}", {"module": dotted})

    def close_dists(self, dist: str) -> list[str]:
        """Installed dist names close to ``dist`` (a typo's likely meaning)."""
        names = set()
        for d in self.paths:
            for e in self.listdir(d):
                if e.endswith((".dist-info", ".egg-info")):
                    names.add(e.rsplit(".", 1)[0].split("-", 1)[0].replace("_", "-").lower())
        import difflib

        return difflib.get_close_matches(dist.replace("_", "-").lower(), sorted(names), n=3)

    def _top_levels(self) -> list[str]:
        out: set[str] = set()
        for d in self.paths:
            for e in self.listdir(d):
                if e.endswith(".py"):
                    out.add(e[:-3])
                elif "." not in e and not e.startswith("_"):
                    out.add(e)
        return sorted(out)


_NORM = re.compile(r"[-_.]+")


def normalize(name: str) -> str:
    """PEP 503 normalisation, so ``Foo_Bar`` and ``foo-bar`` compare equal."""
    return _NORM.sub("-", name).lower()


class Dists:
    """Maps a file under a root to the distribution that installed it (dist-info, as text)."""

    def __init__(self, finder: Finder) -> None:
        self.finder = finder
        self._cache: dict[tuple[str, str], tuple[str, str] | None] = {}

    def infos(self, root: str) -> list[str]:
        return sorted(e for e in self.finder.listdir(root) if e.endswith(".dist-info"))

    @staticmethod
    def _name_version(info_dir: str) -> tuple[str, str]:
        name = version = ""
        try:
            with open(os.path.join(info_dir, "METADATA"), encoding="utf-8", errors="replace") as f:
                for line in f:
                    if not line.strip():
                        break
                    if line.startswith("Name:"):
                        name = line[5:].strip()
                    elif line.startswith("Version:"):
                        version = line[8:].strip()
        except OSError:
            stem = os.path.basename(info_dir)[: -len(".dist-info")]
            name, _, version = stem.partition("-")
        return name, version

    def _owns(self, info_dir: str, top: str) -> bool:
        try:
            with open(os.path.join(info_dir, "top_level.txt"), encoding="utf-8") as f:
                return top in {ln.strip() for ln in f}
        except OSError:
            pass
        try:
            with open(os.path.join(info_dir, "RECORD"), encoding="utf-8", errors="replace") as f:
                for line in f:
                    first = line.split(",", 1)[0]
                    if first.split("/", 1)[0] in (top, top + ".py"):
                        return True
        except OSError:
            pass
        return False

    def owner(self, root: str, top: str) -> tuple[str, str] | None:
        """(dist name, version) owning top-level package ``top`` under ``root``."""
        key = (root, top)
        if key in self._cache:
            return self._cache[key]
        infos = self.infos(root)
        want = normalize(top)
        ordered = sorted(infos, key=lambda e: normalize(e.split("-", 1)[0]) != want)
        found = None
        for e in ordered:
            d = os.path.join(root, e)
            if self._owns(d, top):
                found = self._name_version(d)
                break
        self._cache[key] = found
        return found

    def top_levels(self, dist: str) -> list[str]:
        """Top-level import names a dist installs (top_level.txt, else its RECORD)."""
        want = normalize(dist)
        for root in self.finder.paths:
            for e in self.infos(root):
                if normalize(e[: -len(".dist-info")].split("-", 1)[0]) != want:
                    continue
                info = os.path.join(root, e)
                try:
                    with open(os.path.join(info, "top_level.txt"), encoding="utf-8") as f:
                        names = [ln.strip() for ln in f if ln.strip()]
                    if names:
                        return sorted(set(names))
                except OSError:
                    pass
                found: set[str] = set()
                try:
                    with open(
                        os.path.join(info, "RECORD"), encoding="utf-8", errors="replace"
                    ) as f:
                        for line in f:
                            first = line.split(",", 1)[0].split("/", 1)[0]
                            if first.endswith(".py"):
                                first = first[:-3]
                            if (
                                first
                                and not first.endswith((".dist-info", ".data"))
                                and first != ".."
                            ):
                                found.add(first)
                except OSError:
                    pass
                return sorted(n for n in found if n.isidentifier())
        return []

    def version_of(self, dist: str) -> str | None:
        want = normalize(dist)
        for root in self.finder.paths:
            for e in self.infos(root):
                if normalize(e[: -len(".dist-info")].split("-", 1)[0]) == want:
                    return self._name_version(os.path.join(root, e))[1]
        return None


def dist_metadata(info_dir: str) -> dict[str, Any]:
    """Name, Version and Requires-Dist from a dist-info's METADATA header."""
    out: dict[str, Any] = {"requires": []}
    try:
        with open(os.path.join(info_dir, "METADATA"), encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.strip():
                    break
                key, _, val = line.partition(":")
                if key == "Name":
                    out["name"] = val.strip()
                elif key == "Version":
                    out["version"] = val.strip()
                elif key == "Requires-Dist":
                    out["requires"].append(val.strip())
    except OSError:
        pass
    return out


def dist_files(
    finder: Finder, dist: str
) -> tuple[dict[str, Any], list[tuple[str, str, str]]] | None:
    """(metadata, [(module, abs path, path relative to root)]) from the dist's RECORD."""
    want = normalize(dist)
    dists = Dists(finder)
    for root in finder.paths:
        for e in dists.infos(root):
            if normalize(e[: -len(".dist-info")].split("-", 1)[0]) != want:
                continue
            info = os.path.join(root, e)
            files = []
            try:
                with open(os.path.join(info, "RECORD"), encoding="utf-8") as f:
                    rows = [ln.split(",", 1)[0] for ln in f]
            except OSError:
                rows = []
            for rel in rows:
                if not rel.endswith(".py") or rel.startswith(("..", "/")):
                    continue
                mod = rel[:-3].replace("/", ".")
                if mod.endswith(".__init__"):
                    mod = mod[: -len(".__init__")]
                files.append((mod, os.path.join(root, rel), rel))
            return dist_metadata(info), sorted(files)
    return None
