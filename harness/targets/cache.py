"""Read and delete this machine's harness cache (the I/O half of :mod:`harness.cache`)."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from pathlib import Path

from harness.cache import CacheEntry, Kind
from harness.errors import TargetError
from harness.targets.pypi_lazy import lazy_sizes


def _on_disk(st: os.stat_result) -> int:
    """The bytes a file really takes: its allocated blocks (a sparse file -- a lazy fetch's
    partial wheel -- counts what it holds, not its length; a small file a whole block)."""
    blocks = getattr(st, "st_blocks", None)
    return st.st_size if blocks is None else blocks * 512


def _size_and_mtime(path: Path) -> tuple[int, float]:
    """Bytes on disk under ``path`` and its newest mtime (symlinks are not followed)."""
    try:
        st = path.lstat()
    except OSError:
        return 0, 0.0
    if not stat.S_ISDIR(st.st_mode):
        return _on_disk(st), st.st_mtime
    size, newest = _on_disk(st), st.st_mtime
    for dirpath, dirs, files in os.walk(path):
        for name in dirs:  # a folder's own blocks count (its files' times decide the use)
            with contextlib.suppress(OSError):
                size += _on_disk(os.lstat(os.path.join(dirpath, name)))
        for name in files:
            try:
                fst = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            size += _on_disk(fst)
            newest = max(newest, fst.st_mtime)
    return size, newest


def _wheel_key(name: str) -> tuple[str, str] | None:
    parts = name[: -len(".whl")].split("-") if name.endswith(".whl") else []
    if len(parts) < 2:
        return None
    return parts[0].replace("_", "-").replace(".", "-").lower(), parts[1]


def scan(root: Path) -> list[CacheEntry]:
    """Every entry of the cache at ``root``, biggest kinds first; a missing cache is empty."""
    entries: list[CacheEntry] = []
    pypi: dict[tuple[str, str], list[Path]] = {}
    partial: list[Path] = []
    wheels, unpacked = root / "wheels", root / "pypi"
    for folder in (wheels, unpacked):
        for p in sorted(folder.iterdir()) if folder.is_dir() else []:
            if p.name.startswith("."):
                # what an interrupted download (.dl-*) or unpack (.NAME-*) left; not locks
                if p.is_dir() and (folder is unpacked or p.name.startswith(".dl-")):
                    partial.append(p)
                continue
            if folder is wheels:
                key = _wheel_key(p.name)
            else:
                name, _, version = p.name.rpartition("-")
                key = (name, version) if name else None
            if key is not None:
                pypi.setdefault(key, []).append(p)
    for (name, version), paths in sorted(pypi.items()):
        size, last = 0, 0.0
        lazy = None
        for p in paths:
            s, m = _size_and_mtime(p)
            size += s
            done = p / ".complete"
            last = max(last, done.stat().st_mtime if done.exists() else m)
            lazy = lazy or lazy_sizes(p)
        entry = CacheEntry(Kind.PYPI, f"{name} {version}", _strs(paths), size, last, lazy)
        entries.append(entry)
    results = root / "results"
    if results.is_dir():
        files = sorted(results.iterdir())
        if files:
            size, last = 0, 0.0
            for f in files:
                s, m = _size_and_mtime(f)
                size, last = size + s, max(last, m)
            entries.append(
                CacheEntry(Kind.RESULTS, f"probe results ({len(files)})", _strs(files), size, last)
            )
    for p in partial:
        s, m = _size_and_mtime(p)
        entries.append(CacheEntry(Kind.PARTIAL, p.name, (str(p),), s, m))
    runs = root / "runs"
    for host in sorted(runs.iterdir()) if runs.is_dir() else []:
        for run in sorted(host.iterdir()) if host.is_dir() else []:
            s, m = _size_and_mtime(run)
            entries.append(CacheEntry(Kind.RUNS, f"{host.name}/{run.name}", (str(run),), s, m))
    return entries


def remove(entries: list[CacheEntry]) -> int:
    """Delete the entries' files (read-only unpacked folders too); bytes freed.

    Raises:
        TargetError: a file could not be removed (named, with the reason).
    """
    freed = 0
    for e in entries:
        for raw in e.paths:
            path = Path(raw)
            try:
                if path.is_dir() and not path.is_symlink():
                    for p in path.rglob("*"):
                        if p.is_dir() and not p.is_symlink():
                            p.chmod(0o755)
                    shutil.rmtree(path)
                else:
                    path.unlink(missing_ok=True)
            except OSError as exc:
                raise TargetError(
                    f"cannot remove {path}: {exc.strerror or exc}",
                    "check its permissions, then rerun harness cache prune",
                ) from None
        freed += e.size
    return freed


def _strs(paths: list[Path]) -> tuple[str, ...]:
    return tuple(str(p) for p in paths)
